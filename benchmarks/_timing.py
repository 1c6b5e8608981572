"""Shared timing helpers for the benchmarks: best-of-k wall time and one table row per case."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


def peak_memory(function: Callable[[], object]) -> int:
    """Peak bytes allocated (tracemalloc) while running ``function``."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best_time(func: Callable[[], Any], repeat: int = 3) -> float:
    """Return the best wall-clock time of ``repeat`` calls of ``func``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def interleaved_best_times(
    funcs: Mapping[str, Callable[[], Any]],
    rounds: int = 7,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Return the best time of each function over ``rounds`` interleaved rounds, in seconds.

    Each round calls every function once, in turn, after one untimed warm-up call of each: a
    burst of load on a shared machine then slows every function of that round alike, and the
    best of several rounds is what the ratio of two of them is read from. ``timer`` is the
    clock: wall time by default; :func:`time.process_time` (this process's CPU time, which other
    processes' time slices do not inflate) for single-threaded work on a busy machine.
    """
    for func in funcs.values():
        func()
    best = dict.fromkeys(funcs, float("inf"))
    for _ in range(rounds):
        for name, func in funcs.items():
            start = timer()
            func()
            best[name] = min(best[name], timer() - start)
    return best


@dataclass
class Row:
    """One benchmark case.

    ``ratio`` is rankstats' time over the baseline's (smaller is better) when ``baseline_s`` is
    known. ``max_seconds`` / ``max_ratio`` are the targets from the issues; ``met`` says whether
    the measurement met them in this run.
    """

    case: str
    seconds: float
    baseline: str = "-"
    baseline_s: float | None = None
    max_seconds: float | None = None
    max_ratio: float | None = None
    #: the unit of ``seconds`` and ``baseline_s`` as printed ("s" for times; "MiB" for memory)
    unit: str = "s"

    @property
    def ratio(self) -> float | None:
        """rankstats' time divided by the baseline's."""
        if self.baseline_s is None or self.baseline_s == 0:
            return None
        return self.seconds / self.baseline_s

    def met(self) -> bool:
        """Whether every target of this row was met."""
        ok = True
        if self.max_seconds is not None:
            ok &= self.seconds <= self.max_seconds
        if self.max_ratio is not None and self.ratio is not None:
            ok &= self.ratio <= self.max_ratio
        return ok

    def cells(self) -> tuple[str, ...]:
        """The row's printed cells."""
        targets = []
        if self.max_seconds is not None:
            targets.append(f"<= {self.max_seconds:g} s")
        if self.max_ratio is not None:
            targets.append(f"ratio <= {self.max_ratio:g}")
        unit = self.unit
        baseline_time = "skipped" if self.baseline_s is None else f"{self.baseline_s:.4f} {unit}"
        ratio = "-" if self.ratio is None else f"{self.ratio:.3g}"
        return (
            self.case,
            f"{self.seconds:.4f} {unit}",
            self.baseline,
            baseline_time,
            ratio,
            ", ".join(targets) or "-",
            self._verdict(),
        )

    def _verdict(self) -> str:
        """``yes`` / ``NO``, or ``not measured`` where a ratio target has no baseline this run."""
        if self.max_ratio is not None and self.ratio is None and self.max_seconds is None:
            return "not measured"
        return "yes" if self.met() else "NO"


def cpu_ratio_row(
    case: str,
    ours: Callable[[], Any],
    baseline: str,
    theirs: Callable[[], Any],
    rounds: int = 7,
) -> Row:
    """One row from the best CPU times of two single-threaded calls, interleaved round by round
    (:func:`interleaved_best_times` with :func:`time.process_time`)."""
    best = interleaved_best_times(
        {"ours": ours, "theirs": theirs}, rounds=rounds, timer=time.process_time
    )
    return Row(case, best["ours"], baseline, best["theirs"])

"""Streaming evaluation: collect ranks batch by batch and across workers, compute once.

A :class:`RankAccumulator` keeps the tables of :mod:`rankstats.evaluation.tables`: each distinct
(optimistic, pessimistic) rank pair, or rank, and each distinct candidate count, with its count,
per side and group. Ranks are integers or half-integers, so its size is bounded by the number of
distinct values, not by the number of batches; updating and merging add integer counts, which is
exact, associative and commutative, so :meth:`RankAccumulator.compute` equals
:func:`~rankstats.evaluate` on all the ranks at once, to the last bit.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from rankstats.evaluation.evaluate import (
    Average,
    MetricHint,
    available_rank_types,
    compute_results,
    prepare_input,
    resolve_metrics,
    resolve_rank_types,
)
from rankstats.evaluation.results import EvaluationResults
from rankstats.evaluation.scores import EVALUATION_RANK_TYPES
from rankstats.evaluation.tables import SideStatistics, Table

__all__ = ["RankAccumulator"]


class RankAccumulator:
    """Collects ranks batch by batch; :meth:`compute` gives the results of :func:`evaluate`.

    Parameters
    ----------
    metrics : sequence of str, metric or metric class, optional
        The metrics to compute, as for :func:`~rankstats.evaluate`.
    rank_types : sequence of str, optional
        The rank types to compute, as for :func:`~rankstats.evaluate`.
    average : {"micro", "macro"}, default="micro"
        How to combine groups, as for :func:`~rankstats.evaluate`.

    Notes
    -----
    The accumulator is unweighted: weights are real numbers whose sums depend on the order of
    addition, which would break the exact equality with one-shot evaluation.

    It is picklable, and its state is small, so workers can gather their accumulators (e.g.
    ``torch.distributed.all_gather_object``) and :meth:`merge` them; :meth:`state_dict` gives the
    state as JSON-able lists.

    Examples
    --------
    >>> from rankstats import Ranks, evaluate
    >>> accumulator = RankAccumulator(metrics=["mrr", "hits@3"])
    >>> accumulator.update(Ranks([1, 2], [1, 5], [10, 10]))
    >>> accumulator.update(Ranks([4], [4], [8]))
    >>> other = RankAccumulator(metrics=["mrr", "hits@3"])
    >>> other.update(Ranks([7, 1], [9, 1], [9, 10]))
    >>> accumulator.merge(other)
    >>> results = accumulator.compute()
    >>> everything = Ranks([1, 2, 4, 7, 1], [1, 5, 4, 9, 1], [10, 10, 8, 9, 10])
    >>> results.to_dict() == evaluate(everything, metrics=["mrr", "hits@3"]).to_dict()
    True
    >>> accumulator.num_ranks
    5
    """

    def __init__(
        self,
        metrics: Sequence[MetricHint] | MetricHint | None = None,
        *,
        rank_types: Sequence[str] | str | None = None,
        average: Average = "micro",
    ) -> None:
        self.metrics, self._default_metrics = resolve_metrics(metrics)
        if average not in ("micro", "macro"):
            raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
        self.average: Average = average
        self.rank_types: tuple[str, ...] | None = (
            None
            if rank_types is None
            else tuple(resolve_rank_types(rank_types, EVALUATION_RANK_TYPES))
        )
        self.reset()

    def reset(self) -> None:
        """Forget every rank collected so far."""
        self._sides: dict[str, SideStatistics] = {}
        self._labels: list[Hashable] = []
        self._label_ids: dict[Hashable, int] = {}
        self._grouped: bool | None = None

    @property
    def num_ranks(self) -> int:
        """The number of ranks collected (over all sides)."""
        return sum(stats.size for stats in self._sides.values())

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides seen so far."""
        return tuple(self._sides)

    def update(self, ranks: Any, num_candidates: Any = None, *, groups: Any = None) -> None:
        """Add a batch of ranks, in any form :func:`~rankstats.evaluate` takes.

        Parameters
        ----------
        ranks : Ranks, array-like or mapping
            The batch's ranks (see :func:`~rankstats.evaluate`); every batch must give the same
            sides and kinds of ranks.
        num_candidates : array-like or mapping, optional
            The batch's candidate counts, if not part of ``ranks``.
        groups : array-like or mapping, optional
            The batch's group labels; give them with every batch or with none.
        """
        prepared = prepare_input(ranks, num_candidates, None, groups)
        grouped = prepared.labels is not None
        if self._grouped is not None and grouped != self._grouped:
            raise ValueError(
                "groups must be given with every update or with none; "
                f"this accumulator was {'' if self._grouped else 'not '}given groups before"
            )
        sides = prepared.sides
        if grouped:
            assert prepared.labels is not None
            mapping = np.array([self._label_id(label) for label in prepared.labels], dtype=np.int64)
            sides = {side: stats.relabel_groups(mapping) for side, stats in sides.items()}
        if self.rank_types is not None:
            first = next(iter(sides.values()))
            resolve_rank_types(self.rank_types, available_rank_types(first))
        self._absorb(sides)
        self._grouped = grouped

    def _label_id(self, label: Hashable) -> int:
        found = self._label_ids.get(label)
        if found is None:
            found = self._label_ids[label] = len(self._labels)
            self._labels.append(label)
        return found

    def _absorb(self, sides: dict[str, SideStatistics]) -> None:
        if not self._sides:
            self._sides = dict(sides)
            return
        if set(sides) != set(self._sides):
            raise ValueError(
                f"every update must give the same sides; expected {list(self._sides)}, "
                f"got {list(sides)}"
            )
        for side, stats in sides.items():
            if stats.layout() != self._sides[side].layout():
                raise ValueError(
                    f"every update must give the same kinds of ranks (rank types, candidate "
                    f"counts); side {side!r} differs from the earlier updates"
                )
        self._sides = {
            side: SideStatistics.concatenate([self._sides[side], sides[side]])
            for side in self._sides
        }

    def merge(self, other: RankAccumulator) -> None:
        """Add the ranks of another accumulator (e.g. another worker's) to this one.

        Raises
        ------
        ValueError
            If the accumulators were built for different metrics, rank types or averaging, or
            hold different sides or kinds of ranks.
        """
        if not isinstance(other, RankAccumulator):
            raise TypeError(f"can only merge a RankAccumulator, got {type(other).__name__}")
        if set(other.metrics) != set(self.metrics):
            raise ValueError(
                f"cannot merge accumulators with different metrics: "
                f"{[m.key for m in self.metrics]} and {[m.key for m in other.metrics]}"
            )
        if other.rank_types != self.rank_types or other.average != self.average:
            raise ValueError(
                "cannot merge accumulators with different rank_types or average: "
                f"({self.rank_types}, {self.average!r}) and ({other.rank_types}, {other.average!r})"
            )
        if not other._sides:
            return
        if self._grouped is not None and other._grouped != self._grouped:
            raise ValueError("cannot merge an accumulator with groups and one without")
        sides = other._sides
        if other._grouped:
            mapping = np.array([self._label_id(label) for label in other._labels], dtype=np.int64)
            sides = {side: stats.relabel_groups(mapping) for side, stats in sides.items()}
        self._absorb(dict(sides))
        self._grouped = other._grouped

    def __add__(self, other: RankAccumulator) -> RankAccumulator:
        merged = copy.deepcopy(self)
        merged.merge(other)
        return merged

    @classmethod
    def merged(cls, accumulators: Iterable[RankAccumulator]) -> RankAccumulator:
        """One accumulator holding the ranks of all the given ones (which are left unchanged)."""
        items = list(accumulators)
        if not items:
            raise ValueError("merged needs at least one accumulator")
        result = copy.deepcopy(items[0])
        for item in items[1:]:
            result.merge(item)
        return result

    def compute(self) -> EvaluationResults:
        """The results of :func:`~rankstats.evaluate` on every rank collected so far."""
        if not self._sides:
            raise ValueError("no ranks to evaluate: call update() first")
        sides = self._sides
        labels: list[Hashable] | None = None
        if self._grouped:
            # label the groups in sorted order, as evaluate does
            unique, inverse = np.unique(np.asarray(self._labels), return_inverse=True)
            labels = list(unique.tolist())
            mapping = inverse.astype(np.int64).reshape(-1)
            sides = {side: stats.relabel_groups(mapping) for side, stats in sides.items()}
        return compute_results(
            sides,
            labels,
            self.metrics,
            self.rank_types,
            self.average,
            default_metrics=self._default_metrics,
        )

    # --- state --------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The accumulator's configuration and collected counts as JSON-able Python objects."""
        return {
            "metrics": [metric.key for metric in self.metrics],
            "default_metrics": self._default_metrics,
            "rank_types": None if self.rank_types is None else list(self.rank_types),
            "average": self.average,
            "grouped": self._grouped,
            "labels": list(self._labels),
            "sides": {
                side: {name: table.state() for name, table in stats.tables().items()}
                for side, stats in self._sides.items()
            },
        }

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> RankAccumulator:
        """Rebuild an accumulator from :meth:`state_dict`."""
        metrics = None if state["default_metrics"] else state["metrics"]
        accumulator = cls(metrics, rank_types=state["rank_types"], average=state["average"])
        accumulator._grouped = state["grouped"]
        for label in state["labels"]:
            accumulator._label_id(label)
        for side, tables in state["sides"].items():
            accumulator._sides[side] = _side_from_state(tables)
        return accumulator

    def __repr__(self) -> str:
        metrics = ", ".join(metric.key for metric in self.metrics)
        return (
            f"RankAccumulator(metrics=[{metrics}], sides={list(self._sides)}, "
            f"num_ranks={self.num_ranks})"
        )


def _table_from_state(state: dict[str, list[Any]]) -> Table:
    count = np.asarray(state["count"], dtype=np.int64)
    columns = {}
    for name, values in state.items():
        if name == "count":
            continue
        dtype = np.float64 if name in ("rank", "weight") else np.int64
        columns[name] = np.asarray(values, dtype=dtype).reshape(-1)
    return Table(columns, count)


def _side_from_state(tables: dict[str, dict[str, list[Any]]]) -> SideStatistics:
    ranks = {}
    pairs = candidates = None
    for name, state in tables.items():
        table = _table_from_state(state)
        if name == "pairs":
            pairs = table
        elif name == "candidates":
            candidates = table
        else:
            ranks[name.removeprefix("ranks.")] = table
    return SideStatistics(pairs=pairs, ranks=ranks, candidates=candidates)

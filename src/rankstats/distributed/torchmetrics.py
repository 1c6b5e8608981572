r"""rankstats as a :class:`torchmetrics.Metric`: the accumulator's bounded state, Lightning's loop.

:class:`RankMetrics` wraps a :class:`~rankstats.RankAccumulator`: ``update`` compresses a batch
of ranks on its device (:func:`~rankstats.distributed.torch.update_from_tensors`), the state is
the accumulator's distinct cells (never one entry per query), ``compute`` returns the flat
dictionary of :func:`~rankstats.evaluate` (PyKEEN's keys), and under torch.distributed the sync
before ``compute`` merges the accumulators of every process
(:func:`~rankstats.distributed.torch.all_reduce`), so every process gets the results of all the
ranks, bit for bit those of :func:`~rankstats.evaluate` on them at once.

Importing this module needs :mod:`torchmetrics` (``pip install 'rankstats[torchmetrics]'``).

Examples
--------
In a :class:`lightning.LightningModule`::

    from rankstats.distributed.torchmetrics import RankMetrics

    class Model(LightningModule):
        def __init__(self):
            super().__init__()
            self.ranking = RankMetrics(["mrr", "hits@10", "amri"])

        def validation_step(self, batch, batch_idx):
            scores = self(batch)  # (batch, num_candidates)
            optimistic = (scores > scores.gather(1, batch.target[:, None])).sum(1) + 1
            pessimistic = (scores >= scores.gather(1, batch.target[:, None])).sum(1)
            self.ranking.update(
                optimistic=optimistic, pessimistic=pessimistic, num_candidates=scores.shape[1]
            )

        def on_validation_epoch_end(self):
            self.log_dict(self.ranking.compute())  # synced across processes first
            self.ranking.reset()

A plain loop:

>>> import torch
>>> metric = RankMetrics(["mrr", "hits@1"])
>>> metric.update(torch.tensor([1.0, 2.0]), num_candidates=10)
>>> metric.update(torch.tensor([1.0]), num_candidates=10)
>>> metric.compute()["both.realistic.inverse_harmonic_mean_rank"]
0.8333333333333334
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from rankstats.distributed import require
from rankstats.distributed.torch import all_reduce, update_from_tensors
from rankstats.evaluation.evaluate import Average, MetricHint
from rankstats.evaluation.results import EvaluationResults
from rankstats.evaluation.streaming import RankAccumulator

__all__ = ["RankMetrics"]

_Metric: Any = require("torchmetrics", "torchmetrics").Metric


class _Held:
    """One accumulator in the list state, as torchmetrics treats the items of list states.

    torchmetrics moves the items to the CPU with ``.to("cpu")`` (``compute_on_cpu``), and a
    :class:`~torchmetrics.MetricCollection` compares the items of two metrics' list states,
    shape first, to let metrics with equal states share them. The accumulator's arrays are numpy
    arrays on the CPU already, and no two accumulators are taken for one state.
    """

    __slots__ = ("accumulator",)

    def __init__(self, accumulator: RankAccumulator) -> None:
        self.accumulator = accumulator

    @property
    def shape(self) -> tuple[int]:
        """A shape of its own: a collection never shares one metric's state with another's."""
        return (id(self),)

    def to(self, *args: Any, **kwargs: Any) -> _Held:
        """Nothing to move: the state is numpy arrays on the CPU."""
        return self


def _unheld(items: Sequence[Any]) -> list[RankAccumulator]:
    """The accumulators of a list state, of a list of accumulators or of their state dicts."""
    return [
        item.accumulator
        if isinstance(item, _Held)
        else RankAccumulator.from_state_dict(item)
        if isinstance(item, Mapping)
        else item
        for item in items
    ]


class RankMetrics(_Metric):  # type: ignore[misc]
    """Rank-based metrics as a :class:`torchmetrics.Metric` over a rankstats accumulator.

    Parameters
    ----------
    metrics : sequence of str or RankBasedMetric, optional
        The metrics, as :func:`~rankstats.evaluate` takes them (the defaults if omitted).
    rank_types : sequence of str, optional
        The rank types to compute.
    average : {"micro", "macro"}, default="micro"
        How to average over groups.
    **kwargs
        Passed to :class:`torchmetrics.Metric` (``process_group``, ``dist_sync_fn`` is not used:
        the sync merges accumulators).

    Notes
    -----
    The metric state is one list state, ``accumulators``, holding accumulators (merged into one
    whenever read): torchmetrics caches, copies and restores it around a sync like any list
    state, and the sync itself is :func:`~rankstats.distributed.torch.all_reduce`, an exchange of
    the accumulators' small state, not of the ranks.
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = None

    def __init__(
        self,
        metrics: Sequence[MetricHint] | MetricHint | None = None,
        *,
        rank_types: Sequence[str] | str | None = None,
        average: Average = "micro",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # validated now: a bad metric name fails at construction, not at the first batch
        self._template = RankAccumulator(metrics, rank_types=rank_types, average=average)
        self.add_state("accumulators", default=[], dist_reduce_fx=None)

    @property
    def accumulator(self) -> RankAccumulator:
        """The accumulated state, the list state's accumulators merged into one."""
        parts: list[_Held] = self.accumulators
        if not parts:
            parts.append(_Held(copy.deepcopy(self._template)))  # never updated: empty
        elif len(parts) > 1:
            merged = RankAccumulator.merged(_unheld(parts))
            parts.clear()
            parts.append(_Held(merged))
        return parts[0].accumulator

    def update(
        self,
        ranks: Any = None,
        num_candidates: Any = None,
        *,
        optimistic: Any = None,
        pessimistic: Any = None,
        groups: Any = None,
        weights: Any = None,
    ) -> None:
        """Add a batch of ranks held in tensors (see :func:`update_from_tensors`)."""
        update_from_tensors(
            self.accumulator,
            ranks,
            num_candidates,
            optimistic=optimistic,
            pessimistic=pessimistic,
            groups=groups,
            weights=weights,
        )

    def results(self) -> EvaluationResults:
        """The results of every rank collected (on this process, or all after a sync)."""
        return self.accumulator.compute()

    def compute(self) -> dict[str, float]:
        """The flat dictionary of the results, ``side.rank_type.metric`` to value."""
        return self.results().to_flat_dict()

    def merge_state(self, incoming_state: Any) -> None:
        """Add the ranks of another :class:`RankMetrics` (or of its state dictionary)."""
        if isinstance(incoming_state, RankMetrics):
            incoming = incoming_state.accumulator
        elif isinstance(incoming_state, dict) and "accumulators" in incoming_state:
            parts = _unheld(incoming_state["accumulators"])
            if not parts:  # the state of a metric never updated: nothing to add
                return
            incoming = RankAccumulator.merged(parts)
        else:
            raise ValueError(
                "incoming_state must be a RankMetrics or a state dictionary with 'accumulators', "
                f"got {type(incoming_state).__name__}"
            )
        self.accumulator.merge(incoming)
        self._computed = None  # as torchmetrics does on update: the cached result is stale

    def state_dict(
        self, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """The module's state; with persistent states, the accumulators' own state dictionaries.

        Those are plain Python objects (:meth:`RankAccumulator.state_dict
        <rankstats.evaluation.streaming.RankAccumulator.state_dict>`), so a checkpoint holding
        them loads with ``torch.load(..., weights_only=True)``, PyTorch's default.
        """
        found: dict[str, Any] = super().state_dict(
            destination=destination, prefix=prefix, keep_vars=keep_vars
        )
        key = prefix + "accumulators"
        if key in found:
            found[key] = [item.accumulator.state_dict() for item in self.accumulators]
        return found

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        # the accumulators' state dictionaries (or, from older checkpoints, the held objects)
        key = prefix + "accumulators"
        if key in state_dict:
            state_dict[key] = [_Held(item) for item in _unheld(state_dict[key])]
        super()._load_from_state_dict(state_dict, prefix, *args)

    def _sync_dist(self, dist_sync_fn: Any = None, process_group: Any = None) -> None:
        merged = all_reduce(self.accumulator, group=process_group or self.process_group)
        self.accumulators = [_Held(merged)]

    def _apply(self, fn: Any, exclude_state: Sequence[str] = ()) -> Any:
        # .to(), .cpu(), .double(), set_dtype(): the tensors move or change type, the
        # accumulators (numpy arrays on the CPU, exact counts) stay as they are
        return super()._apply(fn, exclude_state=(*exclude_state, "accumulators"))

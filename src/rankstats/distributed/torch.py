r"""Evaluation across the processes of a :mod:`torch.distributed` process group.

Each process collects its shard of the evaluation ranks in a :class:`~rankstats.RankAccumulator`
(with :meth:`~rankstats.RankAccumulator.update`, or :func:`update_from_tensors` for ranks held in
tensors, on a GPU too), then one call, :func:`all_reduce` or :func:`compute`, merges the
accumulators of every process of the group. Every process then holds the same state and the same
results, equal to the last bit to :func:`~rankstats.evaluate` on the ranks of all processes at
once, weighted or not.

What moves between processes is only the state: the distinct (rank, candidate count, group)
cells with their counts, a few kilobytes to megabytes whatever the number of ranks. The
exchange is one :func:`torch.distributed.all_gather_object`, so it works with every backend
(gloo on CPUs, NCCL on GPUs: NCCL then needs the usual ``torch.cuda.set_device(local_rank)``
before the call). Ranks in CUDA tensors are compressed on their device by
:func:`update_from_tensors` (one :func:`torch.unique`); only the distinct rows and their counts
are copied to the host.

Examples
--------
An evaluation loop under DDP (``torchrun --nproc-per-node=4 eval.py``)::

    import torch.distributed as dist
    from rankstats import RankAccumulator, ranks_from_scores
    from rankstats.distributed.torch import compute

    dist.init_process_group("gloo")  # or "nccl"
    accumulator = RankAccumulator(metrics=["mrr", "hits@10", "amri"])
    for batch in shard_of_this_process:  # e.g. a DataLoader with a DistributedSampler
        scores = model(batch)  # (batch, num_candidates)
        accumulator.update(ranks_from_scores(scores.cpu().numpy(), batch.targets))
    results = compute(accumulator)  # the same on every process
    if dist.get_rank() == 0:
        print(results)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rankstats.distributed import check_rank_arguments, require
from rankstats.evaluation.results import EvaluationResults
from rankstats.evaluation.streaming import RankAccumulator
from rankstats.validation import is_scalar

__all__ = ["all_reduce", "compute", "update_from_tensors"]


def _dist() -> Any:
    torch = require("torch", "torch")
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(
            "torch.distributed is not initialised: call torch.distributed.init_process_group "
            "first (or use the accumulator's own compute() in a single process)"
        )
    return dist


def all_reduce(
    accumulator: RankAccumulator, group: Any = None, *, method: str = "all_gather"
) -> RankAccumulator:
    """The accumulators of every process of ``group`` merged, on every process alike.

    A collective call: every process of the group must call it (with an accumulator built for
    the same metrics, rank types and averaging; one that saw no ranks is fine). The local
    accumulator is left unchanged, so it may go on collecting.

    Parameters
    ----------
    accumulator : RankAccumulator
        This process's accumulator.
    group : torch.distributed.ProcessGroup, optional
        The process group; ``None`` for the default (world) group.
    method : {"all_gather", "gather"}, default="all_gather"
        ``"all_gather"``: every process receives every state and merges them (one collective;
        each process receives :math:`P - 1` states). ``"gather"``: the group's first process
        receives every state, merges them and broadcasts the merged state (two collectives;
        the other processes receive one state), for groups of hundreds of processes.

    Returns
    -------
    RankAccumulator
        A new accumulator holding the ranks of every process, the same on every process.

    Raises
    ------
    RuntimeError
        If :mod:`torch.distributed` is not initialised, or this process is not in ``group``.
    ValueError
        If the accumulators cannot be merged (different metrics, sides, kinds of ranks, ...);
        every process raises it.
    """
    if not isinstance(accumulator, RankAccumulator):
        raise TypeError(f"accumulator must be a RankAccumulator, got {type(accumulator).__name__}")
    if method not in ("all_gather", "gather"):
        raise ValueError(f"method must be 'all_gather' or 'gather', got {method!r}")
    dist = _dist()
    rank = dist.get_rank(group)
    if rank < 0:
        raise RuntimeError("this process is not a member of the process group it reduces over")
    size = dist.get_world_size(group)
    if method == "all_gather":
        gathered: list[Any] = [None] * size
        dist.all_gather_object(gathered, accumulator, group=group)
        # merging adds integer counts (and exact weight sums): the result does not depend on
        # the order, but every process merges in the same (rank) order anyway
        return RankAccumulator.merged(gathered)
    root = 0 if group is None else dist.get_global_rank(group, 0)
    collected: list[Any] | None = [None] * size if rank == 0 else None
    dist.gather_object(accumulator, collected, dst=root, group=group)
    box: list[Any] = [None]
    if collected is not None:
        try:
            box[0] = RankAccumulator.merged(collected)
        except (TypeError, ValueError) as error:
            box[0] = error  # every process raises it, not only the first
    dist.broadcast_object_list(box, src=root, group=group)
    if isinstance(box[0], Exception):
        raise box[0]
    merged: RankAccumulator = box[0]
    return merged


def compute(
    accumulator: RankAccumulator, group: Any = None, *, method: str = "all_gather"
) -> EvaluationResults:
    """The results over every process of ``group``: :func:`all_reduce`, then ``compute()``.

    A collective call; every process gets the same results. See :func:`all_reduce`.
    """
    return all_reduce(accumulator, group, method=method).compute()


def update_from_tensors(
    accumulator: RankAccumulator,
    ranks: Any = None,
    num_candidates: Any = None,
    *,
    optimistic: Any = None,
    pessimistic: Any = None,
    groups: Any = None,
    weights: Any = None,
) -> None:
    """Add ranks held in tensors, compressing them on their device first.

    The ranks, candidate counts, integer group labels and weights of the batch are stacked into
    one ``float64`` tensor on the ranks' device and reduced to distinct rows with their counts
    (:func:`torch.unique`); only those rows go to the host, where the accumulator validates and
    adds them (:meth:`~rankstats.RankAccumulator.update` with ``counts``). On a GPU, the ranks
    themselves never leave the device. Integer tensors of any dtype, unsigned ones too, are
    fine; their values must not exceed 2**53.

    Parameters
    ----------
    accumulator : RankAccumulator
        The accumulator to update.
    ranks : torch.Tensor of shape (n,), optional
        Realistic ranks (integers or half-integers); or give ``optimistic`` and ``pessimistic``.
    num_candidates : torch.Tensor of shape (n,) or int, optional
        The number of candidates of each task.
    optimistic, pessimistic : torch.Tensor of shape (n,), optional
        Optimistic and pessimistic ranks (e.g. from counting scores above and at least as high
        as the target's), instead of ``ranks``: then every rank type, ``expected`` too, can be
        computed.
    groups : torch.Tensor of shape (n,), optional
        Integer group labels.
    weights : torch.Tensor of shape (n,), optional
        Non-negative task weights.

    Raises
    ------
    TypeError
        If an argument is not a tensor of real numbers (or ``num_candidates`` one integer).
    ValueError
        If neither ``ranks`` nor both ``optimistic`` and ``pessimistic`` are given, or
        ``ranks`` with either; on tensors of different shapes or devices; on bad values (the
        message gives the index of the first bad entry in the tensors as given: only then is
        the whole batch copied to the host). The accumulator is then left unchanged.

    Examples
    --------
    >>> import torch
    >>> accumulator = RankAccumulator(["mrr", "hits@1"])
    >>> update_from_tensors(accumulator, torch.tensor([1.0, 2.0, 1.0]), num_candidates=10)
    >>> accumulator.num_ranks, accumulator.compute()["mrr"]
    (3, 0.8333333333333334)
    """
    torch = require("torch", "torch")
    check_rank_arguments(ranks, optimistic, pessimistic, "ranks")
    given = {"ranks": ranks} if ranks is not None else {}
    if ranks is None:
        given = {"optimistic": optimistic, "pessimistic": pessimistic}
    names = list(given)
    if isinstance(num_candidates, torch.Tensor) and num_candidates.ndim == 0:
        num_candidates = num_candidates.item()  # one count for all, as a Python integer is
    if num_candidates is not None:
        given["num_candidates"] = num_candidates
    if groups is not None:
        given["groups"] = groups
    if weights is not None:
        given["weights"] = weights
    first = given[names[0]]
    if not isinstance(first, torch.Tensor):
        raise TypeError(f"{names[0]} must be a torch.Tensor, got {type(first).__name__}")
    if first.ndim != 1:
        raise ValueError(f"{names[0]} must be a 1-D tensor, got shape {tuple(first.shape)}")
    size = first.shape[0]
    columns = []
    for name, value in given.items():
        if name == "num_candidates" and not isinstance(value, torch.Tensor):
            if not is_scalar(value):
                raise TypeError("num_candidates must be a torch.Tensor or one integer")
            continue  # one count for all: passed on as it is
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
        if value.shape != (size,):
            raise ValueError(
                f"{name} must have shape ({size},) like {names[0]}, got {tuple(value.shape)}"
            )
        if value.dtype == torch.bool or value.is_complex():
            raise TypeError(f"{name} must hold real numbers, got {value.dtype}")
        if name == "groups" and value.is_floating_point():
            raise TypeError(f"groups must be an integer tensor, got {value.dtype}")
        if not value.is_floating_point() and value.numel():
            value = _checked_integers(torch, value, name)
        if value.device != first.device:
            raise ValueError(f"{name} is on {value.device}, {names[0]} on {first.device}")
        columns.append((name, value))
    if size == 0:
        return
    stacked = torch.stack([value.detach().to(torch.float64) for _, value in columns], dim=1)
    rows, counts = torch.unique(stacked, dim=0, return_counts=True)
    column_names = [name for name, _ in columns]
    try:
        # the distinct rows only go to the host
        _update(accumulator, column_names, rows.cpu().numpy(), num_candidates, counts.cpu().numpy())
    except (TypeError, ValueError):
        pass  # the index in the message is that of a distinct row, not the user's
    else:
        return
    # bad input (the accumulator is unchanged): validate the batch itself, whose error names
    # the bad entry by its index in the user's tensors
    _update(accumulator, column_names, stacked.cpu().numpy(), num_candidates, None)


def _checked_integers(torch: Any, value: Any, name: str) -> Any:
    """An integer tensor as one of a signed dtype, or an error if it exceeds 2**53.

    The rows are compressed as float64, exact for integers up to 2**53. Unsigned tensors of
    more than 8 bits support little beyond conversions: they are converted to ``int64``,
    where ``uint64`` values of 2**63 and more wrap to negative numbers, refused too.
    """
    too_large = f"{name} must be at most 2**53 in absolute value here"
    if not value.is_signed():
        value = value.to(torch.int64)
        if bool((value < 0).any()):
            raise ValueError(f"{too_large}, got an unsigned value of 2**63 or more")
    low, high = int(value.min()), int(value.max())
    if high > 2**53 or low < -(2**53):
        raise ValueError(f"{too_large}, got {high if high > 2**53 else low}")
    return value


def _update(
    accumulator: RankAccumulator,
    names: list[str],
    host: Any,
    num_candidates: Any,
    counts: Any,
) -> None:
    """Update ``accumulator`` with the columns ``names`` of the float64 rows ``host``."""
    found = {name: host[:, index] for index, name in enumerate(names)}
    for name in ("num_candidates", "groups", "optimistic", "pessimistic"):
        if name in found:
            found[name] = _as_int(found[name], name)
    batch: Any = (
        found["ranks"]
        if "ranks" in found
        else {"optimistic": found["optimistic"], "pessimistic": found["pessimistic"]}
    )
    accumulator.update(
        batch,
        found.get("num_candidates", num_candidates),
        groups=found.get("groups"),
        weights=found.get("weights"),
        counts=counts,
    )


def _as_int(values: Any, name: str) -> Any:
    """Integers held as float64 back to int64 (non-integers are left for validation to refuse)."""
    if isinstance(values, Mapping):  # pragma: no cover - never a mapping here
        return values
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(values).all() and (values == np.floor(values)).all()
    return values.astype(np.int64) if whole else values

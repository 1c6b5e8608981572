"""The torchmetrics adapter: a Metric over the accumulator's bounded state."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

from rankstats import Ranks, UnknownMetricError, evaluate  # noqa: E402
from rankstats.distributed.torchmetrics import RankMetrics  # noqa: E402

METRICS = ["mrr", "hits@1", "hits@10", "amri", "z_mrr"]


def batches(seed: int = 0, n: int = 300) -> tuple[Ranks, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    candidates = rng.integers(2, 60, size=n)
    optimistic = np.minimum(rng.geometric(0.2, size=n), candidates)
    pessimistic = np.minimum(optimistic + rng.binomial(1, 0.3, size=n), candidates)
    return Ranks(optimistic, pessimistic, candidates), np.array_split(np.arange(n), 7)


def feed(metric: RankMetrics, ranks: Ranks, rows: np.ndarray) -> None:
    metric.update(
        optimistic=torch.tensor(ranks.optimistic[rows]),
        pessimistic=torch.tensor(ranks.pessimistic[rows]),
        num_candidates=torch.tensor(ranks.num_candidates[rows]),
    )


def test_compute_equals_evaluate_and_the_state_stays_small() -> None:
    ranks, parts = batches()
    metric = RankMetrics(METRICS)
    for rows in parts:
        feed(metric, ranks, rows)
    assert metric.compute() == evaluate(ranks, metrics=METRICS).to_flat_dict()
    assert metric.results().to_json() == evaluate(ranks, metrics=METRICS).to_json()
    assert len(metric.accumulators) == 1
    cells = sum(len(t["count"]) for t in metric.accumulator.state_dict()["sides"]["both"].values())
    assert cells < len(ranks)  # distinct cells, not one entry per rank


def test_forward_gives_the_batch_and_accumulates() -> None:
    ranks, parts = batches(1)
    metric = RankMetrics(METRICS)
    for rows in parts:
        sub = Ranks(ranks.optimistic[rows], ranks.pessimistic[rows], ranks.num_candidates[rows])
        batch = metric(
            optimistic=torch.tensor(sub.optimistic),
            pessimistic=torch.tensor(sub.pessimistic),
            num_candidates=torch.tensor(sub.num_candidates),
        )
        assert batch == evaluate(sub, metrics=METRICS).to_flat_dict()
    assert metric.compute() == evaluate(ranks, metrics=METRICS).to_flat_dict()


def test_reset_merge_copy_and_pickle() -> None:
    ranks, parts = batches(2)
    first, second = RankMetrics(METRICS), RankMetrics(METRICS)
    for index, rows in enumerate(parts):
        feed(first if index % 2 else second, ranks, rows)
    copied = pickle.loads(pickle.dumps(copy.deepcopy(first)))
    first.merge_state(second)
    assert first.compute() == evaluate(ranks, metrics=METRICS).to_flat_dict()
    assert copied.accumulator.num_ranks + second.accumulator.num_ranks == len(ranks)
    copied.merge_state({"accumulators": [second.accumulator]})
    assert copied.compute() == first.compute()
    first.reset()
    assert first.accumulator.num_ranks == 0
    with pytest.raises(ValueError, match="incoming_state"):
        first.merge_state(3)


def test_merge_state_clears_the_cached_result() -> None:
    key = "both.realistic.inverse_harmonic_mean_rank"
    first, second = RankMetrics(["mrr"]), RankMetrics(["mrr"])
    first.update(torch.tensor([1.0]), num_candidates=10)
    assert first.compute()[key] == 1.0  # cached by torchmetrics
    second.update(torch.tensor([5.0]), num_candidates=10)
    first.merge_state(second)
    assert first.compute()[key] == pytest.approx(0.6)
    first.merge_state({"accumulators": [second.accumulator]})
    assert first.compute()[key] == pytest.approx(1.4 / 3)


def test_bad_metrics_fail_at_construction() -> None:
    with pytest.raises(UnknownMetricError, match="mrrr"):
        RankMetrics(["mrrr"])
    metric = RankMetrics()  # the defaults
    metric.update(torch.tensor([1.0, 3.0]), num_candidates=5)
    assert metric.compute() == evaluate(np.array([1.0, 3.0]), [5, 5]).to_flat_dict()


def test_moving_or_casting_the_module_leaves_the_accumulators() -> None:
    """torchmetrics applies .to() and casts to every item of a list state: the accumulators had
    raised AttributeError once they held ranks (in a module moved by Lightning too)."""
    metric = RankMetrics(["mrr"])
    metric.update(torch.tensor([1, 2]), 5)
    metric.to("cpu")
    metric.cpu()
    metric.set_dtype(torch.float64)
    parent = torch.nn.Module()
    parent.metric = metric
    parent.to(torch.float64)
    assert metric.compute() == evaluate([1, 2], 5, metrics=["mrr"]).to_flat_dict()
    on_cpu = RankMetrics(["mrr"], compute_on_cpu=True)  # moves list states to the CPU
    on_cpu.update(torch.tensor([1]), 5)
    on_cpu.update(torch.tensor([3]), 5)
    assert on_cpu.compute() == evaluate([1, 3], 5, metrics=["mrr"]).to_flat_dict()


def test_in_a_metric_collection_with_compute_groups() -> None:
    """The collection compares list states item by item (shapes first): it had raised
    AttributeError on the first update."""
    from torchmetrics import MetricCollection

    collection = MetricCollection({"a": RankMetrics(["mrr"]), "b": RankMetrics(["hits@1"])})
    collection.update(torch.tensor([1, 2]), torch.tensor([5, 5]))
    collection.update(torch.tensor([3]), torch.tensor([5]))
    assert collection.compute() == evaluate([1, 2, 3], 5, metrics=["mrr", "hits@1"]).to_flat_dict()


def test_merging_the_state_of_a_metric_never_updated_changes_nothing() -> None:
    metric = RankMetrics(["mrr"])
    metric.update(torch.tensor([1]), 5)
    metric.merge_state(RankMetrics(["mrr"]).metric_state)  # {"accumulators": []}
    assert metric.compute() == evaluate([1], 5, metrics=["mrr"]).to_flat_dict()


def test_persistent_state_loads_with_weights_only() -> None:
    """Persistent states are the accumulators' plain state dicts: PyTorch's default
    ``torch.load(weights_only=True)`` reads a checkpoint of them (pickled accumulators it
    refuses), inside a parent module too, and they load back to the same results."""
    import io

    ranks, parts = batches(seed=3)
    parent = torch.nn.ModuleDict({"val": RankMetrics(METRICS)})
    parent["val"].persistent(True)
    for rows in parts:
        feed(parent["val"], ranks, rows)
    buffer = io.BytesIO()
    torch.save(parent.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    assert list(state) == ["val.accumulators"]
    restored = torch.nn.ModuleDict({"val": RankMetrics(METRICS)})
    restored["val"].persistent(True)
    restored.load_state_dict(state)
    expected = evaluate(ranks, metrics=METRICS).to_flat_dict()
    assert restored["val"].results().to_flat_dict() == parent["val"].results().to_flat_dict()
    assert restored["val"].results().to_flat_dict() == pytest.approx(expected, rel=1e-12)
    # the state dict merges like a metric's state, and an empty metric saves an empty list
    merged = RankMetrics(METRICS)
    merged.merge_state({"accumulators": state["val.accumulators"]})
    assert merged.results().to_flat_dict() == parent["val"].results().to_flat_dict()
    empty = RankMetrics(METRICS)
    empty.persistent(True)
    assert empty.state_dict() == {"accumulators": []}
    assert "accumulators" not in RankMetrics(METRICS).state_dict()  # not persistent: not saved

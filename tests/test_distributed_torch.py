"""torch.distributed: real gloo process groups give every process the results of evaluate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed")

from distributed_torch_worker import (  # noqa: E402
    LINEAR_METRICS,
    WEIGHTED_METRICS,
    dataset,
    shards,
)
from rankstats import RankAccumulator, Ranks, evaluate  # noqa: E402
from rankstats.distributed.torch import all_reduce, compute, update_from_tensors  # noqa: E402

WORKER = Path(__file__).with_name("distributed_torch_worker.py")
TIMEOUT = 240.0


def launch(world_size: int, tmp_path: Path) -> list[dict[str, str]]:
    """Run the worker script in ``world_size`` processes (gloo, file:// init); their outputs."""
    init_file = tmp_path / "init"
    outputs = [tmp_path / f"out{rank}.json" for rank in range(world_size)]
    src = str(Path(__file__).parents[1] / "src")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "OMP_NUM_THREADS": "1",
    }
    processes = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(rank), str(world_size), str(init_file), str(out)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for rank, out in enumerate(outputs)
    ]
    deadline = time.monotonic() + TIMEOUT
    logs = []
    try:
        for process in processes:
            remaining = max(deadline - time.monotonic(), 1.0)
            log, _ = process.communicate(timeout=remaining)
            logs.append(log.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {world_size} worker processes did not finish in {TIMEOUT} s")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, log in zip(processes, logs, strict=True):
        assert process.returncode == 0, log[-3000:]
    return [json.loads(out.read_text()) for out in outputs]


@pytest.mark.parametrize("world_size", [2, 4])
def test_every_process_gets_the_results_of_evaluate(world_size: int, tmp_path: Path) -> None:
    outputs = launch(world_size, tmp_path)
    data = dataset()
    labels = np.array([f"relation {g}" for g in data["groups"]], dtype=object)
    ranks = Ranks(data["optimistic"], data["pessimistic"], data["num_candidates"])
    # groups live on some processes only
    parts = shards(world_size)
    assert any(not part.size for part in parts)
    assert any(
        set(data["groups"][a]) != set(data["groups"][b]) for a in parts for b in parts if a.size
    )

    expected = evaluate(ranks, groups=labels).to_json()
    realistic = (data["optimistic"] + data["pessimistic"]) / 2
    macro = evaluate(
        realistic,
        np.full(realistic.size, 50),
        metrics=["mrr", "hits@3", "amri", "median_rank"],
        groups=data["groups"],
        average="macro",
    ).to_json()
    one = RankAccumulator(WEIGHTED_METRICS)
    one.update(ranks, groups=data["groups"], weights=data["weights"])
    weighted = one.compute().to_json()

    linear = evaluate(
        ranks, metrics=LINEAR_METRICS, groups=data["groups"], weights=data["weights"]
    ).to_json()
    plain = evaluate(ranks, metrics=LINEAR_METRICS, weights=data["weights"]).to_flat_dict()
    for rank, output in enumerate(outputs):
        assert output["linear"] == linear
        if output["torchmetrics"]:
            assert json.loads(output["torchmetrics"]) == plain  # synced: every rank
            assert int(output["torchmetrics_local"]) == len(parts[rank])
    for output in outputs:
        assert output["grouped"] == expected  # bit for bit, every group, every statistic
        assert output["macro"] == macro
        assert output["weighted"] == weighted
        assert output["weighted_state"] == outputs[0]["weighted_state"]
    # weighted: bit for bit the same as evaluate on all ranks at once
    assert (
        outputs[0]["weighted"]
        == evaluate(
            ranks, metrics=WEIGHTED_METRICS, groups=data["groups"], weights=data["weights"]
        ).to_json()
    )

    members = [0, world_size - 1]
    indices = np.concatenate([parts[rank] for rank in members])
    sub = evaluate(
        Ranks(
            data["optimistic"][indices],
            data["pessimistic"][indices],
            data["num_candidates"][indices],
        ),
        groups=labels[indices],
    ).to_json()
    for rank in members:
        assert outputs[rank]["subgroup"] == sub
        assert outputs[rank]["subgroup_gather"] == sub
    for output in outputs:
        assert output["gather"] == weighted
    for rank in range(world_size):
        assert ("subgroup" in outputs[rank]) == (rank in members)


# --- in this process --------------------------------------------------------------------------


def test_update_from_tensors_equals_update() -> None:
    data = dataset()
    by_tensors = RankAccumulator()
    update_from_tensors(
        by_tensors,
        optimistic=torch.as_tensor(data["optimistic"]),
        pessimistic=torch.as_tensor(data["pessimistic"]),
        num_candidates=torch.as_tensor(data["num_candidates"], dtype=torch.int32),
        groups=torch.as_tensor(data["groups"]),
    )
    direct = RankAccumulator()
    direct.update(
        Ranks(data["optimistic"], data["pessimistic"], data["num_candidates"]),
        groups=data["groups"],
    )
    assert by_tensors.state_dict() == direct.state_dict()

    realistic = torch.as_tensor((data["optimistic"] + data["pessimistic"]) / 2)
    a, b = RankAccumulator(["mrr", "amri"]), RankAccumulator(["mrr", "amri"])
    update_from_tensors(a, realistic, 40, weights=torch.as_tensor(data["weights"]))
    b.update(realistic.numpy(), 40, weights=data["weights"])
    assert a.state_dict() == b.state_dict()
    update_from_tensors(a, realistic[:0], 40, weights=torch.as_tensor(data["weights"])[:0])
    assert a.state_dict() == b.state_dict()  # an empty batch is a no-op


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "either ranks, or both"),
        ({"ranks": [1, 2]}, TypeError, "must be a torch.Tensor"),
        ({"ranks": torch.ones(2, 2)}, ValueError, "1-D tensor"),
        ({"ranks": torch.ones(3), "num_candidates": torch.ones(2)}, ValueError, r"shape \(3,\)"),
        ({"ranks": torch.ones(2), "groups": torch.ones(2)}, TypeError, "integer tensor"),
        ({"ranks": torch.tensor([1.0, 3.0]), "num_candidates": 2}, ValueError, "num_candidates"),
        ({"ranks": torch.tensor([1, 2**60])}, ValueError, "2\\*\\*53"),
        ({"optimistic": torch.ones(2)}, ValueError, "either ranks, or both"),
        (
            {"ranks": torch.ones(1), "pessimistic": torch.tensor([5])},
            ValueError,
            "either ranks, or both optimistic and pessimistic, not both: got ranks and pess",
        ),
        (
            {"ranks": torch.ones(1), "optimistic": torch.tensor([1])},
            ValueError,
            "not both: got ranks and optimistic",
        ),
        (
            {"ranks": torch.tensor([1, 2**63 + 1], dtype=torch.uint64)},
            ValueError,
            "ranks must be at most 2\\*\\*53",
        ),
        ({"ranks": torch.tensor([1, 2**53 + 1])}, ValueError, "got 9007199254740993"),
        # the index of the bad entry in the tensors as given, not among their distinct rows
        ({"ranks": torch.tensor([3.0, 1, 2, 0.5, 4])}, ValueError, "got 0.5 at index 3"),
        (
            {
                "ranks": torch.tensor([3.0, 1, 2, 2, 4]),
                "num_candidates": torch.tensor([5] * 4 + [0]),
            },
            ValueError,
            "num_candidates must be integers >= 1, got 0 at index 4",
        ),
        (
            {"ranks": torch.tensor([3.0, 1, 2, 2]), "weights": torch.tensor([1.0, 1, 1, -1])},
            ValueError,
            "got -1.0 at index 3",
        ),
    ],
)
def test_bad_tensors(kwargs: dict[str, object], error: type, match: str) -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(error, match=match):
        update_from_tensors(accumulator, **kwargs)  # type: ignore[arg-type]
    assert accumulator.num_ranks == 0


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_integer_tensors(dtype: str) -> None:
    if not hasattr(torch, dtype):
        pytest.skip(f"this torch has no {dtype}")
    by_tensors, direct = RankAccumulator(["mrr", "amri"]), RankAccumulator(["mrr", "amri"])
    ranks, candidates = np.array([1, 2, 2, 7]), np.array([10, 10, 20, 20])
    update_from_tensors(
        by_tensors,
        torch.tensor(ranks, dtype=getattr(torch, dtype)),
        torch.tensor(candidates, dtype=getattr(torch, dtype)),
        groups=torch.tensor([0, 1, 1, 0], dtype=getattr(torch, dtype)),
    )
    direct.update(ranks, candidates, groups=[0, 1, 1, 0])
    assert by_tensors.state_dict() == direct.state_dict()


def test_without_a_process_group() -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(ValueError, match="method must be"):
        all_reduce(accumulator, method="tree")
    with pytest.raises(RuntimeError, match="init_process_group"):
        compute(accumulator)
    with pytest.raises(TypeError, match="RankAccumulator"):
        all_reduce(object())  # type: ignore[arg-type]


def test_one_count_for_all_as_a_zero_dimensional_tensor() -> None:
    """torch.tensor(5) is one count, as 5 is (it had been refused as a shape mismatch)."""
    tensor, plain = RankAccumulator(["mrr"]), RankAccumulator(["mrr"])
    update_from_tensors(tensor, torch.tensor([1, 2]), torch.tensor(5))
    update_from_tensors(plain, torch.tensor([1, 2]), 5)
    assert tensor.compute().to_flat_dict() == plain.compute().to_flat_dict()
    with pytest.raises(ValueError, match=r"num_candidates must be integers >= 1, got 5\.5"):
        update_from_tensors(tensor, torch.tensor([1, 2]), torch.tensor(5.5))

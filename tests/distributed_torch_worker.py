"""One process of the torch.distributed tests (tests/test_distributed_torch.py starts several).

Usage: python distributed_torch_worker.py RANK WORLD_SIZE INIT_FILE OUT_FILE

Every process builds the same random data set, takes its shard (uneven; shard 1 is empty; the
data are sorted by group before sharding so that most groups live on some processes only),
accumulates it in several ways, reduces across the process group and writes the results (as
exact JSON) to OUT_FILE.
"""

from __future__ import annotations

import json
import sys

import numpy as np

NUM_TASKS = 400
#: weighted: the geometric mean rank and the variance need every weight (their expectation over
#: ties, and the null model), the others only weight sums
WEIGHTED_METRICS = ["mrr", "hits@10", "mr", "amri", "zmrr", "gmr", "variance"]
#: weighted with weight sums only (bounded state)
LINEAR_METRICS = ["mrr", "hits@10", "mr", "amri", "zmrr"]


def dataset(seed: int = 0) -> dict[str, np.ndarray]:
    """Ranks with ties, candidate counts (some 1), group labels and weights."""
    rng = np.random.default_rng(seed)
    n = NUM_TASKS
    candidates = rng.integers(1, 40, size=n)
    optimistic = np.minimum(rng.geometric(0.15, size=n), candidates)
    pessimistic = np.minimum(optimistic + rng.binomial(1, 0.3, size=n) * 3, candidates)
    groups = rng.integers(0, 7, size=n)
    weights = rng.exponential(size=n) * (rng.random(n) > 0.1)  # some exact zeros
    # sort most of the data by group, so that contiguous shards hold few groups
    order = np.argsort(groups + 3 * rng.random(n), kind="stable")
    data = {
        "optimistic": optimistic,
        "pessimistic": pessimistic,
        "num_candidates": candidates,
        "groups": groups,
        "weights": weights,
    }
    return {name: value[order] for name, value in data.items()}


def shards(world_size: int, seed: int = 1) -> list[np.ndarray]:
    """Uneven contiguous shards of the task indices; shard 1 is empty."""
    rng = np.random.default_rng(seed + world_size)
    cuts = np.sort(rng.choice(np.arange(1, NUM_TASKS), size=world_size - 1, replace=False))
    parts = np.split(np.arange(NUM_TASKS), cuts)
    if world_size > 1:
        parts[0] = np.concatenate([parts[0], parts[1]])
        parts[1] = parts[1][:0]
    return parts


def run(rank: int, world_size: int, init_file: str, out_file: str) -> None:
    import torch
    import torch.distributed as dist

    from rankstats import RankAccumulator
    from rankstats.distributed.torch import all_reduce, compute, update_from_tensors

    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    data = dataset()
    mine = shards(world_size)[rank]
    labels = np.array([f"relation {g}" for g in data["groups"]], dtype=object)
    out: dict[str, str] = {}

    # 1. optimistic and pessimistic ranks with string group labels, in two batches (maybe
    # empty: Ranks objects cannot be, arrays can)
    grouped = RankAccumulator()
    for part in np.array_split(mine, 2):
        ranks = {"optimistic": data["optimistic"][part], "pessimistic": data["pessimistic"][part]}
        grouped.update(ranks, data["num_candidates"][part], groups=labels[part])
    before = grouped.state_dict()
    out["grouped"] = compute(grouped).to_json()
    assert grouped.state_dict() == before  # the local accumulator is left as it was

    # 2. macro average, realistic ranks only, a scalar candidate count
    macro = RankAccumulator(["mrr", "hits@3", "amri", "median_rank"], average="macro")
    realistic = (data["optimistic"][mine] + data["pessimistic"][mine]) / 2
    macro.update(realistic, 50, groups=data["groups"][mine])
    out["macro"] = compute(macro).to_json()

    def weighted_tensors(metrics: list[str]) -> RankAccumulator:
        """This process's shard as tensors, weighted, compressed on their device."""
        accumulator = RankAccumulator(metrics)
        columns = ("optimistic", "pessimistic", "num_candidates", "groups", "weights")
        update_from_tensors(
            accumulator, **{name: torch.as_tensor(data[name][mine]) for name in columns}
        )
        return accumulator

    # 3. tensors, weighted, compressed on their device
    weighted = weighted_tensors(WEIGHTED_METRICS)
    reduced = all_reduce(weighted)
    out["weighted"] = reduced.compute().to_json()
    out["weighted_state"] = json.dumps(reduced.state_dict())

    # 3b. weighted, the metrics whose null models need only weight sums
    out["linear"] = compute(weighted_tensors(LINEAR_METRICS)).to_json()

    # 3c. the torchmetrics adapter: compute() syncs across the processes first
    try:
        from rankstats.distributed.torchmetrics import RankMetrics
    except ImportError:
        out["torchmetrics"] = ""
    else:
        metric = RankMetrics(LINEAR_METRICS)
        for part in np.array_split(mine, 3):
            metric.update(
                optimistic=torch.as_tensor(data["optimistic"][part]),
                pessimistic=torch.as_tensor(data["pessimistic"][part]),
                num_candidates=torch.as_tensor(data["num_candidates"][part]),
                weights=torch.as_tensor(data["weights"][part]),
            )
        out["torchmetrics"] = json.dumps(metric.compute())
        out["torchmetrics_local"] = str(metric.accumulator.num_ranks)  # unsynced again

    # 4. a sub-group: the first and the last process only; by gather and broadcast too
    members = [0, world_size - 1]
    sub = dist.new_group(members)
    if rank in members:
        out["subgroup"] = compute(grouped, group=sub).to_json()
        out["subgroup_gather"] = compute(grouped, group=sub, method="gather").to_json()
    out["gather"] = all_reduce(weighted, method="gather").compute().to_json()

    dist.barrier()
    dist.destroy_process_group()
    with open(out_file, "w") as handle:
        json.dump(out, handle)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])

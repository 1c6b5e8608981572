"""Scale-out: ranks in Parquet partitions on a Dask LocalCluster against one-process evaluate.

Usage: ``python benchmarks/bench_distributed.py [--size N] [--partition-size M] [--dir PATH]``
(``--size 1e8`` for the issue's scale; the default, 2e6, runs in well under a minute here).

The data: ``N`` ranking tasks as Knowledge-graph link prediction produces them (optimistic and
pessimistic ranks with ties, a filtered candidate count near 14,541, one of 237 relations as the
group), written as Parquet partitions of ``M`` rows, one at a time (the generating process never
holds more than one partition).

Measured:

1. one process: read every partition into memory and call :func:`rankstats.evaluate` (in a
   child process, so that its peak memory is its own);
2. a LocalCluster of 1 and of 2 worker processes (one thread each), each driven from a fresh
   process:
   :func:`rankstats.distributed.dask.evaluate_dataframe` on ``read_parquet`` of the folder; the
   wall time, the throughput per worker, every worker's and the driver's peak resident memory,
   and the reduction: gathering the per-partition accumulators, merging them and ``compute()``;
3. the state: its pickled size, the time of one merge and of ``compute()``, as the number of
   distinct ranks and of groups grows.

``run()`` (for ``benchmarks/run.py``) runs the default size and returns the ratios as rows.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _timing import Row, best_time  # noqa: E402

NUM_ENTITIES = 14_541
NUM_RELATIONS = 237
METRICS = ["mrr", "hits@1", "hits@10", "mr", "amri", "amrr", "zmrr"]


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_partition(seed: int, size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    candidates = NUM_ENTITIES - rng.poisson(15, size=size)
    optimistic = np.minimum(rng.geometric(0.02, size=size), candidates)
    ties = rng.binomial(1, 0.05, size=size) * rng.integers(1, 4, size=size)
    return {
        "optimistic": optimistic.astype(np.int64),
        "pessimistic": np.minimum(optimistic + ties, candidates).astype(np.int64),
        "candidates": candidates.astype(np.int64),
        "relation": rng.zipf(1.5, size=size) % NUM_RELATIONS,
    }


def write_partitions(folder: Path, size: int, partition_size: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for index, start in enumerate(range(0, size, partition_size)):
        part = make_partition(index, min(partition_size, size - start))
        pq.write_table(pa.table(part), folder / f"part.{index:05d}.parquet")
        count += 1
    return count


def _single_process(folder: str, queue: Any) -> None:
    import pandas as pd

    from rankstats import Ranks, evaluate

    start = time.perf_counter()
    frame = pd.read_parquet(folder)
    read = time.perf_counter() - start
    ranks = Ranks(frame["optimistic"], frame["pessimistic"], frame["candidates"])
    results = evaluate(ranks, metrics=METRICS, groups=frame["relation"].to_numpy())
    queue.put(
        {
            "seconds": time.perf_counter() - start,
            "read": read,
            "peak_mb": peak_rss_mb(),
            "mrr": results["mrr"],
        }
    )


def _in_child(target: Any, *args: Any) -> dict[str, float]:
    """Run ``target(*args, queue)`` in a fresh process, so that its peak memory is its own."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    result: dict[str, float] = queue.get(timeout=3600)
    process.join(timeout=60)
    return result


def single_process(folder: Path) -> dict[str, float]:
    return _in_child(_single_process, str(folder))


def _cluster_child(folder: str, workers: int, queue: Any) -> None:
    queue.put(on_cluster(Path(folder), workers))


def _timed_partition(frame: Any) -> tuple[Any, float]:
    from rankstats import RankAccumulator

    start = time.perf_counter()
    accumulator = RankAccumulator(METRICS)
    accumulator.update(
        {
            "optimistic": frame["optimistic"].to_numpy(),
            "pessimistic": frame["pessimistic"].to_numpy(),
        },
        frame["candidates"].to_numpy(),
        groups=frame["relation"].to_numpy(),
    )
    return accumulator, time.perf_counter() - start


def on_cluster(folder: Path, workers: int) -> dict[str, float]:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from rankstats import RankAccumulator
    from rankstats.distributed.dask import evaluate_dataframe

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: None)  # the workers are up
        start = time.perf_counter()
        results = evaluate_dataframe(
            dd.read_parquet(str(folder)),
            optimistic="optimistic",
            pessimistic="pessimistic",
            num_candidates="candidates",
            group="relation",
            metrics=METRICS,
        )
        seconds = time.perf_counter() - start
        # peaks of the evaluation itself, before the timing below holds every partition's
        # accumulator at once
        worker_peaks = client.run(peak_rss_mb)
        driver_peak = peak_rss_mb()
        # the parts: per-partition accumulators (timed on the workers), then the reduction
        frame = dd.read_parquet(str(folder))
        parts = [dask.delayed(_timed_partition)(part) for part in frame.to_delayed()]
        start = time.perf_counter()
        gathered = dask.compute(*parts)
        map_seconds = time.perf_counter() - start
        start = time.perf_counter()
        merged = RankAccumulator.merged([accumulator for accumulator, _ in gathered])
        merge_seconds = time.perf_counter() - start
        start = time.perf_counter()
        merged.compute()
        compute_seconds = time.perf_counter() - start
    task_seconds = [elapsed for _, elapsed in gathered]
    return {
        "seconds": seconds,
        "map_seconds": map_seconds,
        "task_seconds": float(np.sum(task_seconds)),
        "merge_seconds": merge_seconds,
        "compute_seconds": compute_seconds,
        "worker_peak_mb": max(worker_peaks.values()),
        "driver_peak_mb": driver_peak,
        "state_bytes": len(pickle.dumps(merged)),
        "mrr": results["mrr"],
    }


def state_growth() -> list[dict[str, float]]:
    """State size, merge and compute time as distinct ranks and groups grow (1e6 ranks each)."""
    from rankstats import RankAccumulator

    rows = []
    rng = np.random.default_rng(0)
    n = 1_000_000
    for distinct in (100, 10_000, 1_000_000):
        for groups in (1, 100):
            candidates = np.full(n, 1_000_000)
            ranks = rng.integers(1, distinct + 1, size=n)
            labels = rng.integers(0, groups, size=n)
            halves = []
            for part in (slice(0, n // 2), slice(n // 2, n)):
                accumulator = RankAccumulator(["mrr", "hits@10", "amri"])
                accumulator.update(ranks[part], candidates[part], groups=labels[part])
                halves.append(accumulator)
            merge = best_time(lambda: halves[0] + halves[1], repeat=2)  # noqa: B023
            merged = halves[0] + halves[1]
            compute = best_time(merged.compute, repeat=1)
            rows.append(
                {
                    "distinct_ranks": distinct,
                    "groups": groups,
                    "state_kb": len(pickle.dumps(merged)) / 1024,
                    "merge_s": merge,
                    "compute_s": compute,
                }
            )
    return rows


def measure(size: int, partition_size: int, folder: Path) -> dict[str, Any]:
    start = time.perf_counter()
    partitions = write_partitions(folder, size, partition_size)
    print(
        f"wrote {size:.3g} ranks in {partitions} partitions in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    single = single_process(folder)
    # each cluster's driver in a fresh process too: its peak memory is that run's alone
    clusters = {workers: _in_child(_cluster_child, str(folder), workers) for workers in (1, 2)}
    for workers, found in clusters.items():
        assert found["mrr"] == single["mrr"], (workers, found["mrr"], single["mrr"])
    return {
        "size": size,
        "partitions": partitions,
        "single": single,
        "clusters": clusters,
    }


def report(found: dict[str, Any]) -> None:
    size = found["size"]
    single = found["single"]
    print(f"{size:.3g} ranks in {found['partitions']} Parquet partitions")
    print(
        f"  one process, evaluate: {single['seconds']:.2f} s (reading {single['read']:.2f} s), "
        f"{size / single['seconds']:.3g} ranks/s, peak {single['peak_mb']:.0f} MB"
    )
    for workers, c in found["clusters"].items():
        print(
            f"  LocalCluster {workers} worker(s): {c['seconds']:.2f} s, "
            f"{size / c['seconds'] / workers:.3g} ranks/s per worker, speedup "
            f"{single['seconds'] / c['seconds']:.2f}x; worker peak {c['worker_peak_mb']:.0f} MB; "
            f"partition tasks {c['task_seconds'] / found['partitions'] * 1e3:.0f} ms each; "
            f"reduction: merge {c['merge_seconds'] * 1e3:.0f} ms + compute "
            f"{c['compute_seconds'] * 1e3:.0f} ms = "
            f"{(c['merge_seconds'] + c['compute_seconds']) / c['seconds']:.1%} of the time; "
            f"state {c['state_bytes'] / 1024:.0f} kB; driver peak {c['driver_peak_mb']:.0f} MB"
        )


def run() -> list[Row]:
    """The default size, as rows for benchmarks/run.py (nothing without dask and pyarrow)."""
    own = sys.modules.get(__name__)
    if own is None or getattr(own, "run", None) is not run:
        # loaded from its file without an entry in sys.modules (benchmarks/run.py): import it
        # properly, so that the functions run in child processes can be found there by name
        module = importlib.import_module(__name__)
        rows: list[Row] = module.run()
        return rows
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        return []
    with tempfile.TemporaryDirectory() as folder:
        found = measure(2_000_000, 250_000, Path(folder) / "ranks")
    report(found)
    single = found["single"]["seconds"]
    one, two = found["clusters"][1], found["clusters"][2]
    return [
        Row(
            "dask LocalCluster 1 worker, 2e6 ranks in Parquet",
            one["seconds"],
            "evaluate, one process",
            single,
        ),
        Row(
            "dask LocalCluster 2 workers, 2e6 ranks in Parquet",
            two["seconds"],
            "evaluate, one process",
            single,
        ),
        Row(
            "dask reduction (merge + compute) share",
            two["merge_seconds"] + two["compute_seconds"],
            "whole run on 2 workers",
            two["seconds"],
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=2e6, help="number of ranks (default 2e6)")
    parser.add_argument("--partition-size", type=float, default=2.5e5, help="rows per partition")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the partitions")
    parser.add_argument("--no-state", action="store_true", help="skip the state-growth table")
    args = parser.parse_args(argv)
    size, partition_size = int(args.size), int(args.partition_size)
    if args.dir is None:
        with tempfile.TemporaryDirectory() as folder:
            found = measure(size, partition_size, Path(folder) / "ranks")
    else:
        found = measure(size, partition_size, args.dir)
    report(found)
    if not args.no_state:
        print("state growth, 1e6 ranks: distinct ranks, groups -> pickled state, merge, compute")
        for row in state_growth():
            print(
                f"  {row['distinct_ranks']:>9,} {row['groups']:>5}: {row['state_kb']:9.1f} kB, "
                f"merge {row['merge_s'] * 1e3:7.1f} ms, compute {row['compute_s'] * 1e3:7.1f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Dask: ranks in DataFrames (Parquet partitions) and arrays give the results of evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")
pd = pytest.importorskip("pandas")

import dask  # noqa: E402

from distributed_torch_worker import dataset  # noqa: E402  (plain numpy: the shared data set)
from rankstats import RankAccumulator, Ranks, evaluate  # noqa: E402
from rankstats.distributed.dask import (  # noqa: E402
    accumulate_dataframe,
    evaluate_arrays,
    evaluate_dataframe,
)

# dask's own Parquet reader still calls pandas with inplace=, deprecated in pandas 3.1
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")

WEIGHTED_METRICS = ["mrr", "hits@10", "mr", "amri", "zmrr", "gmr"]
WEIGHTED_TYPES = ["optimistic", "realistic", "pessimistic"]


def frame() -> pd.DataFrame:
    data = dataset()
    return pd.DataFrame(
        {
            "optimistic": data["optimistic"],
            "pessimistic": data["pessimistic"],
            "realistic": (data["optimistic"] + data["pessimistic"]) / 2,
            "candidates": data["num_candidates"],
            "relation": pd.Categorical([f"r{g}" for g in data["groups"]]),
            "weight": data["weights"],
        }
    )


def uneven_partitions(table: pd.DataFrame, seed: int) -> list[pd.DataFrame]:
    """Random uneven contiguous partitions, one of them empty."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(table)), size=5, replace=False))
    parts = [table.iloc[a:b] for a, b in zip([0, *cuts], [*cuts, len(table)], strict=True)]
    parts.insert(int(rng.integers(0, len(parts))), table.iloc[:0])
    return parts


def references(table: pd.DataFrame) -> dict[str, str]:
    ranks = Ranks(table["optimistic"], table["pessimistic"], table["candidates"])
    labels = table["relation"].astype(object).to_numpy()
    one = RankAccumulator(WEIGHTED_METRICS, rank_types=WEIGHTED_TYPES)
    one.update(ranks, groups=labels, weights=table["weight"].to_numpy())
    return {
        "pairs": evaluate(ranks, groups=labels).to_json(),
        "macro": evaluate(
            table["realistic"].to_numpy(),
            table["candidates"].to_numpy(),
            metrics=["mrr", "hits@3", "amri", "median_rank"],
            groups=labels,
            average="macro",
        ).to_json(),
        "weighted": one.compute().to_json(),
    }


def evaluate_all(data: dd.DataFrame, **kwargs: object) -> dict[str, str]:
    return {
        "pairs": evaluate_dataframe(
            data,
            optimistic="optimistic",
            pessimistic="pessimistic",
            num_candidates="candidates",
            group="relation",
            split_every=3,
            **kwargs,
        ).to_json(),
        "macro": evaluate_dataframe(
            data,
            "realistic",
            "candidates",
            group="relation",
            metrics=["mrr", "hits@3", "amri", "median_rank"],
            average="macro",
            **kwargs,
        ).to_json(),
        "weighted": evaluate_dataframe(
            data,
            optimistic="optimistic",
            pessimistic="pessimistic",
            num_candidates="candidates",
            group="relation",
            weight="weight",
            metrics=WEIGHTED_METRICS,
            rank_types=WEIGHTED_TYPES,
            split_every=2,
            **kwargs,
        ).to_json(),
    }


@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of Parquet partitions of uneven sizes (one empty), rows sorted by group."""
    folder = tmp_path_factory.mktemp("ranks")
    table = frame().sort_values("relation", kind="stable")
    for index, part in enumerate(uneven_partitions(table, seed=3)):
        part.to_parquet(folder / f"part.{index:03d}.parquet", index=False)
    return folder


@pytest.mark.parametrize("seed", [0, 1])
def test_threaded_scheduler_random_partitions(seed: int) -> None:
    table = frame().sample(frac=1.0, random_state=seed)
    parts = uneven_partitions(table, seed)
    data = dd.from_delayed([dask.delayed(part) for part in parts], meta=table.iloc[:0])
    assert data.npartitions == len(parts)
    assert evaluate_all(data, scheduler="threads") == references(table)


def test_parquet_partitions(parquet_folder: Path) -> None:
    data = dd.read_parquet(str(parquet_folder))
    assert data.npartitions > 3
    got = evaluate_all(data, scheduler="sync")
    assert got == references(frame())


def test_arrays_with_different_chunks() -> None:
    table = frame()
    ranks = da.from_array(table["realistic"].to_numpy(), chunks=(7, 100, 1, 200, 92))
    candidates = da.from_array(table["candidates"].to_numpy(), chunks=150)
    groups = da.from_array(table["relation"].astype(str).to_numpy(), chunks=33)
    got = evaluate_arrays(ranks, candidates, groups=groups, scheduler="threads")
    expected = evaluate(
        table["realistic"].to_numpy(),
        table["candidates"].to_numpy(),
        groups=table["relation"].astype(str).to_numpy(),
    )
    assert got.to_json() == expected.to_json()
    pairs = evaluate_arrays(
        optimistic=da.from_array(table["optimistic"].to_numpy(), chunks=64),
        pessimistic=da.from_array(table["pessimistic"].to_numpy(), chunks=64),
        num_candidates=da.from_array(table["candidates"].to_numpy(), chunks=64),
        metrics=["mrr", "amri"],
        split_every=2,
    )
    ranks_all = Ranks(table["optimistic"], table["pessimistic"], table["candidates"])
    assert pairs.to_json() == evaluate(ranks_all, metrics=["mrr", "amri"]).to_json()
    scalar = evaluate_arrays(ranks, 40, metrics="mrr")
    assert (
        scalar.to_json()
        == evaluate(table["realistic"].to_numpy(), np.full(len(table), 40), metrics="mrr").to_json()
    )


def test_arrays_of_unknown_chunk_sizes() -> None:
    table = frame()
    data = dd.from_pandas(table, npartitions=4)
    ranks = data["realistic"].to_dask_array()
    assert np.isnan(ranks.chunks[0]).all()
    got = evaluate_arrays(ranks, 40, metrics="mrr", scheduler="sync")
    expected = evaluate(table["realistic"].to_numpy(), np.full(len(table), 40), metrics="mrr")
    assert got.to_json() == expected.to_json()
    # the columns of one frame pair up block by block
    pairs = evaluate_arrays(
        optimistic=data["optimistic"].to_dask_array(),
        pessimistic=data["pessimistic"].to_dask_array(),
        num_candidates=data["candidates"].to_dask_array(),
        metrics=["mrr", "amri"],
        scheduler="sync",
    )
    ranks_all = Ranks(table["optimistic"], table["pessimistic"], table["candidates"])
    assert pairs.to_json() == evaluate(ranks_all, metrics=["mrr", "amri"]).to_json()
    # known against unknown chunk sizes cannot be aligned without computing the sizes
    known = da.from_array(table["candidates"].to_numpy(), chunks=100)
    with pytest.raises(ValueError, match=r"num_candidates .*compute_chunk_sizes\(\)"):
        evaluate_arrays(ranks, known)
    with pytest.raises(ValueError, match=r"num_candidates .*lengths=True"):
        evaluate_arrays(known, data["candidates"].to_dask_array())
    other = dd.from_pandas(table, npartitions=2)["candidates"].to_dask_array()
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        evaluate_arrays(ranks, other)


def test_the_lazy_accumulator_state_does_not_depend_on_the_partitioning() -> None:
    table = frame()
    states = []
    for npartitions, split_every in ((1, 2), (4, 2), (9, 3), (30, 8)):
        data = dd.from_pandas(table, npartitions=npartitions, sort=False)
        lazy = accumulate_dataframe(
            data,
            "realistic",
            "candidates",
            group="relation",
            weight="weight",
            metrics=["mrr", "amri"],
            split_every=split_every,
        )
        states.append(json.dumps(lazy.compute(scheduler="sync").state_dict()))
    assert len(set(states)) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "either rank, or both"),
        ({"rank": "nope"}, ValueError, "not a column"),
        ({"rank": 0}, TypeError, r"column names must be strings, got 0 \(the frame's columns"),
        ({"rank": "realistic", "num_candidates": "realistic"}, ValueError, "used once"),
        ({"optimistic": "optimistic"}, ValueError, "either rank, or both"),
        # a rank beside one bound: the bound had been ignored
        ({"rank": "realistic", "optimistic": "optimistic"}, ValueError, "not both: got rank and"),
        ({"rank": "realistic", "pessimistic": "pessimistic"}, ValueError, "not both"),
        ({"rank": "realistic", "split_every": 1}, ValueError, "split_every"),
        ({"rank": "realistic", "metrics": "nope"}, (KeyError, ValueError), "nope"),
        ({"rank": "realistic", "average": "mean"}, ValueError, "average"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], error: type, match: str) -> None:
    data = dd.from_pandas(frame(), npartitions=2)
    with pytest.raises(error, match=match):
        accumulate_dataframe(data, **kwargs)  # type: ignore[arg-type]


def test_bad_values_are_refused_when_computed() -> None:
    table = frame()
    table.loc[5, "realistic"] = 99.0  # more than its candidate count
    data = dd.from_pandas(table, npartitions=3)
    with pytest.raises(ValueError, match=r"num_candidates|candidates"):
        evaluate_dataframe(data, "realistic", "candidates", scheduler="sync")


# --- on a cluster of worker processes ----------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> object:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
    )
    with cluster, distributed.Client(cluster, timeout="60s") as connected:
        yield connected


def test_local_cluster_of_two_worker_processes(client: object, parquet_folder: Path) -> None:
    data = dd.read_parquet(str(parquet_folder))
    got = evaluate_all(data)  # the active client computes
    assert got == references(frame())
    table = frame()
    ranks = da.from_array(table["realistic"].to_numpy(), chunks=37)
    on_cluster = evaluate_arrays(ranks, 40, metrics=["mrr", "amri"])
    assert (
        on_cluster.to_json()
        == evaluate(
            table["realistic"].to_numpy(), np.full(len(table), 40), metrics=["mrr", "amri"]
        ).to_json()
    )

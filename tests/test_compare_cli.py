"""``rankstats compare``: the command line gives the library's numbers, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankstats import compare
from rankstats.cli import main
from rankstats.io import read_ranks


def _write(path: Path, ids, ranks, candidates, side=None) -> str:
    lines = (
        ["query_id,side,rank,num_candidates"] if side is not None else ["qid,rank,num_candidates"]
    )
    for i in range(len(ranks)):
        row = (
            [str(ids[i])]
            + ([side[i]] if side is not None else [])
            + [f"{ranks[i]:g}", str(candidates[i])]
        )
        lines.append(",".join(row))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, object]:
    rng = np.random.default_rng(0)
    n = 80
    candidates = rng.integers(5, 30, size=n)
    a = rng.integers(1, candidates + 1)
    b = np.minimum(a + rng.integers(0, 3, size=n), candidates)
    c = rng.integers(1, candidates + 1)
    ids = np.array([f"q{i}" for i in range(n)])
    side = np.where(np.arange(n) % 2 == 0, "head", "tail")
    order = rng.permutation(n)
    return {
        "a": _write(tmp_path / "a.csv", ids, a, candidates, side),
        "b": _write(tmp_path / "b.csv", ids, b, candidates, side),
        "c_shuffled": _write(
            tmp_path / "c.csv", ids[order], c[order], candidates[order], side[order]
        ),
        "arrays": (a, b, c, candidates, side),
        "tmp": tmp_path,
    }


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_equals_library(files, capsys) -> None:
    a, b, c, candidates, side = files["arrays"]
    code, out, err = _run(
        capsys,
        "compare",
        files["a"],
        files["b"],
        files["c_shuffled"],
        "--metrics",
        "mrr,amri",
        "--resamples",
        "500",
        "--seed",
        "3",
        "--format",
        "json",
        "--group-by",
        "side",
    )
    assert code == 0, err
    expected = compare(
        {"a": a, "b": b, "c": c},
        candidates,
        metrics=["mrr", "amri"],
        n_resamples=500,
        seed=3,
        groups=side,
    )
    assert json.loads(out) == json.loads(expected.to_json())


def test_cli_reads_like_evaluate(files, capsys) -> None:
    data = read_ranks(files["a"])
    assert list(data.columns) == ["query_id", "side"]
    code, out, _ = _run(
        capsys, "compare", files["a"], files["b"], "--format", "markdown", "--seed", "0"
    )
    assert code == 0
    assert out.startswith("| Model | MRR ↑ | Hits@1 ↑ | Hits@3 ↑ | Hits@10 ↑ |")
    assert "seed 0" in out
    assert "Holm" in out


@pytest.mark.parametrize("output_format", ["table", "csv", "latex"])
def test_cli_formats(files, capsys, output_format: str) -> None:
    code, out, _ = _run(
        capsys,
        "compare",
        files["a"],
        files["b"],
        "--resamples",
        "100",
        "--format",
        output_format,
        "--names",
        "first,second",
        "--interval",
        "percentile",
        "--test",
        "t",
    )
    assert code == 0
    assert "first" in out
    assert "second" in out


def test_cli_errors(files, capsys, tmp_path: Path) -> None:
    a, b, _c, candidates, side = files["arrays"]
    other_ids = np.array([f"x{i}" for i in range(len(a))])
    mismatched = _write(tmp_path / "m.csv", other_ids, b, candidates, side)
    shorter = _write(tmp_path / "s.csv", other_ids[:-1], b[:-1], candidates[:-1])
    plain_a = tmp_path / "pa.csv"
    plain_a.write_text(
        "rank,num_candidates\n" + "".join(f"{r},{k}\n" for r, k in zip(a, candidates, strict=True))
    )
    plain_b = tmp_path / "pb.csv"
    plain_b.write_text(
        "rank,num_candidates\n"
        + "".join(f"{r},{k + 1}\n" for r, k in zip(b, candidates, strict=True))
    )
    # (arguments, message, exit status: 1 for the input, 2 for a mistake in the arguments)
    cases = [
        ((files["a"],), "two or more files", 2),
        ((files["a"], mismatched), "query id 'x0' of model 'm' is not among", 1),
        ((str(plain_a), shorter, "--query-id", "qid"), "no column 'qid'", 1),
        ((str(plain_a), str(plain_b)), "query 0 has", 1),
        ((files["a"], files["b"], "--per-group"), "--per-group needs --group-by", 2),
        ((files["a"], files["b"], "--metrics", "nope"), "unknown metric", 2),
        ((files["a"], files["b"], "--group-by", "relation"), "--group-by", 1),
    ]
    for argv, message, status in cases:
        code, out, err = _run(capsys, "compare", *argv)
        assert code == status, (argv, err)
        assert message in err, (argv, err)
        assert err.count("\n") == 1
        assert out == ""
    for argv in (
        ("--confidence-level", "95"),
        ("--seed", "-1"),
        ("--test", "anova"),
        ("--resamples", "1"),  # had reached the library: "n_resamples must be at least 2"
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(["compare", files["a"], files["b"], *argv])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_cli_weights_follow_the_queries(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(1)
    n = 30
    ranks = {"a": rng.integers(1, 10, size=n), "b": rng.integers(1, 10, size=n)}
    weights = rng.integers(1, 4, size=n)
    order = rng.permutation(n)
    (tmp_path / "a.csv").write_text(
        "query_id,rank,weight\n" + "".join(f"q{i},{ranks['a'][i]},{weights[i]}\n" for i in range(n))
    )
    (tmp_path / "b.csv").write_text(
        "query_id,rank,weight\n" + "".join(f"q{i},{ranks['b'][i]},{weights[i]}\n" for i in order)
    )
    (tmp_path / "c.csv").write_text(
        "query_id,rank,weight\n" + "".join(f"q{i},{ranks['b'][i]},1\n" for i in range(n))
    )
    files = [str(tmp_path / name) for name in ("a.csv", "b.csv")]
    code, out, err = _run(capsys, "compare", *files, "--metrics", "mrr", "--format", "json")
    assert code == 0, err
    expected = compare(ranks, metrics=["mrr"], weights=weights, seed=None, interval=None)
    assert json.loads(out)["values"][0]["value"] == expected.values[0].value
    code, _, err = _run(capsys, "compare", files[0], str(tmp_path / "c.csv"))
    assert code == 1
    assert "other weights" in err

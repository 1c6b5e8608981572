"""Tests of the ``rankstats`` command line.

The first part runs the real command in a subprocess (``python -m rankstats`` and the installed
console script): the main success paths, and one case of every kind of error, checking the exit
status, that standard error is a single line naming the problem, and that no traceback is shown.
The second part calls :func:`rankstats.cli.main`, the console script's entry point, in-process for
the many variants of each error (every bad line, every bad array), which would take minutes as
subprocesses; it checks the same three properties. Numbers are always checked against the library
called directly.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import gzip
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankstats
from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    HitsAtK,
    InverseHarmonicMeanRank,
    metric_resolver,
)
from rankstats.cli import main
from rankstats.evaluation import evaluate

COMMAND = [sys.executable, "-m", "rankstats"]
SOURCE = Path(rankstats.__file__).parent


def split(args: Sequence[str | Path]) -> list[str]:
    """Arguments as a shell would split them; a path stays one argument."""
    return [
        part for arg in args for part in ([str(arg)] if isinstance(arg, Path) else shlex.split(arg))
    ]


def run(
    *args: str | Path,
    stdin: str | bytes | None = None,
    command: Sequence[str] = COMMAND,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the real command; standard input is /dev/null unless ``stdin`` is given."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    result = subprocess.run(
        [*command, *split(args)],
        input=data,
        stdin=subprocess.DEVNULL if data is None else None,
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def call(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Call the command's entry point in this process, capturing its output and exit status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        if stdin is not None:
            stack.enter_context(_stdin(stdin))
        try:
            status = main(split(args))
        except SystemExit as exit_:  # argparse: --help, --version and usage errors
            status = int(exit_.code or 0)
    return subprocess.CompletedProcess(list(map(str, args)), status, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _stdin(data: bytes) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    try:
        yield
    finally:
        sys.stdin = saved


def succeeded(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def failed(result: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """Check a failure: the exit status, one line on standard error, no traceback."""
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("rankstats"), lines[0]
    assert "error: " in lines[0]
    return lines[0]


def ok(*args: str | Path, stdin: str | None = None) -> str:
    return succeeded(run(*args, stdin=stdin))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def csv_rows(output: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(output)))


def by_metric(rows: list[dict[str, Any]], **group: Any) -> dict[str, dict[str, Any]]:
    return {
        row["metric"]: row
        for row in rows
        if all(row.get(key) == value for key, value in group.items())
    }


def bundled() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bundled example read straight from the package: sides, ranks, candidates."""
    text = (resources.files("rankstats") / "data" / "nations_transe.csv").read_text()
    table = csv_rows(text)
    sides = np.array([row["side"] for row in table])
    ranks = np.array([float(row["rank"]) for row in table])
    candidates = np.array([int(row["num_candidates"]) for row in table])
    return sides, ranks, candidates


# === the real command ============================================================================


def test_evaluate_without_file_evaluates_the_bundled_example() -> None:
    sides, ranks, candidates = bundled()
    assert len(ranks) == 402
    assert set(sides) == {"head", "tail"}
    rows = by_metric(json.loads(ok("evaluate --format json --metrics mrr,hits@10,amri")))
    mrr = InverseHarmonicMeanRank()
    assert rows["inverse_harmonic_mean_rank"]["value"] == pytest.approx(mrr(ranks), rel=1e-12)
    assert rows["hits_at_10"]["value"] == pytest.approx(HitsAtK(k=10)(ranks), rel=1e-12)
    amri = AdjustedArithmeticMeanRankIndex()(ranks, candidates)
    assert rows["adjusted_arithmetic_mean_rank_index"]["value"] == pytest.approx(amri, rel=1e-12)
    row = rows["inverse_harmonic_mean_rank"]
    assert row["rank_type"] == "realistic"
    assert row["expected_value"] == pytest.approx(mrr.expected_value(candidates), rel=1e-12)
    assert row["std"] == pytest.approx(mrr.std(candidates), rel=1e-12)
    z = (row["value"] - row["expected_value"]) / row["std"]
    assert row["z_score"] == pytest.approx(z, rel=1e-12)


def test_default_output_is_an_aligned_table_and_quiet_on_stderr() -> None:
    result = run("evaluate")
    header, *body = succeeded(result).splitlines()
    assert result.stderr == ""  # standard error is a pipe here: no progress, no notes
    # the rank type is always shown, even when there is only one (issue 10)
    assert header.split() == [
        "side",
        "rank",
        "type",
        "metric",
        "value",
        "expected",
        "std",
        "z-score",
    ]
    assert all(line.split()[:2] == ["both", "realistic"] for line in body)
    keys = [line.split()[2] for line in body]
    assert keys[0] == "inverse_harmonic_mean_rank"
    assert "adjusted_arithmetic_mean_rank_index" in keys
    assert "z_inverse_harmonic_mean_rank" in keys


def test_own_csv_with_weights_and_groups(tmp_path: Path) -> None:
    path = write(
        tmp_path / "ranks.csv",
        "relation,rank,num_candidates,weight\n"
        "likes,1,10,1\nlikes,3,10,2\nknows,2,5,1\nknows,5,5,0.5\nknows,1.5,5,1\n",
    )
    output = csv_rows(ok("evaluate", path, "--metrics mrr,hits@1 --group-by relation --format csv"))
    ranks = np.array([1, 3, 2, 5, 1.5])
    candidates = np.array([10, 10, 5, 5, 5])
    weights = np.array([1, 2, 1, 0.5, 1])
    relation = np.array(["likes", "likes", "knows", "knows", "knows"])
    for name, mask in [
        ("", slice(None)),
        ("likes", relation == "likes"),
        ("knows", relation == "knows"),
    ]:
        rows = by_metric(output, relation=name)  # the overall rows have an empty group cell
        args = (ranks[mask], candidates[mask], weights[mask])
        assert float(rows["inverse_harmonic_mean_rank"]["value"]) == pytest.approx(
            InverseHarmonicMeanRank()(*args), rel=1e-12
        )
        assert float(rows["hits_at_1"]["value"]) == pytest.approx(HitsAtK(k=1)(*args), rel=1e-12)
        assert float(rows["hits_at_1"]["expected_value"]) == pytest.approx(
            HitsAtK(k=1).expected_value(candidates[mask], weights=weights[mask]), rel=1e-12
        )


def test_standard_input_as_dash_and_as_pipe() -> None:
    text = "rank,num_candidates\n1,4\n2,4\n"
    dash = ok("evaluate - --metrics mrr --format csv", stdin=text)
    assert ok("evaluate --metrics mrr --format csv", stdin=text) == dash
    assert float(csv_rows(dash)[0]["value"]) == pytest.approx(0.75)


def test_metrics_lists_every_metric() -> None:
    listing = json.loads(ok("metrics --format json"))
    assert {row["class"].removeprefix("rankstats.") for row in listing} == {
        cls.__name__ for cls in metric_resolver
    }
    mrr = next(row for row in listing if row["key"] == "inverse_harmonic_mean_rank")
    assert "mrr" in mrr["synonyms"]
    assert mrr["value_range"] == "(0, 1]"
    assert mrr["increasing"] is True
    assert mrr["exact_expectation"] is True
    assert mrr["description"] == InverseHarmonicMeanRank.get_description()


def test_null_matches_the_library() -> None:
    (row,) = json.loads(ok("null --metric mrr --num-candidates 14541 --n 20466 --format json"))
    candidates = np.full(20466, 14541)
    mrr = InverseHarmonicMeanRank()
    assert row["expected"] == pytest.approx(mrr.expected_value(candidates), rel=1e-12)
    assert row["std"] == pytest.approx(mrr.std(candidates), rel=1e-12)
    assert row["exact"] is True


def test_null_with_a_published_value() -> None:
    (row,) = json.loads(ok("null --metric mr --num-candidates 101 --n 50 --value 11 --format json"))
    assert row["expected"] == pytest.approx(51.0)
    assert row["adjusted"] == pytest.approx(
        AdjustedArithmeticMeanRankIndex().adjust(11, [101] * 50)
    )
    assert row["z"] == pytest.approx((11.0 - 51.0) / row["std"])  # as in evaluate's results


def test_null_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "null.png"
    ok(
        "null --metric hits@3 --num-candidates 10 --n 20 --value 0.6 --samples 500 --seed 0 --plot",
        path,
    )
    assert path.read_bytes().startswith(b"\x89PNG")


def test_version_and_example() -> None:
    assert ok("--version") == f"rankstats {rankstats.__version__}\n"
    example = ok("example")
    assert example == (resources.files("rankstats") / "data" / "nations_transe.csv").read_text()


def test_console_script() -> None:
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    script = shutil.which("rankstats", path=search)
    if script is None:
        pytest.skip("the rankstats console script is not installed")
    output = succeeded(run("null --metric mrr --num-candidates 3", command=[script]))
    assert "inverse_harmonic_mean_rank" in output


def test_progress_only_when_asked_or_on_a_terminal() -> None:
    args = "null --metric std --num-candidates 50 --n 400 --samples 3000 --seed 0 --format json"
    quiet = run(args)
    assert succeeded(quiet)
    assert quiet.stderr == ""
    shown = run(args, "--progress")
    assert json.loads(succeeded(shown)) == json.loads(quiet.stdout)
    assert "Monte-Carlo" in shown.stderr  # tqdm's bar of the library's sampler


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_of_a_large_file_appears_on_a_terminal(tmp_path: Path) -> None:
    lines = "".join(f"{1 + i % 7},10\n" for i in range(100_000))
    path = write(tmp_path / "big.csv", "rank,num_candidates\n" + lines)
    leader, follower = os.openpty()
    import fcntl
    import struct
    import termios

    # a terminal of 24 x 100 characters: a fresh pty has 0 columns, where tqdm draws nothing
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        result = subprocess.run(
            [*COMMAND, "evaluate", str(path), "--metrics", "mrr", "--format", "csv"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
        )
    finally:
        os.close(follower)
    seen = b""
    with contextlib.suppress(OSError):  # reading a pty whose other end is closed ends in EIO
        while chunk := os.read(leader, 65536):
            seen += chunk
    os.close(leader)
    assert result.returncode == 0
    assert b"reading" in seen
    assert b"%|" in seen  # tqdm's bar
    assert b"Traceback" not in seen
    assert csv_rows(result.stdout.decode())[0]["metric"] == "inverse_harmonic_mean_rank"


@pytest.mark.parametrize(
    ("args", "stdin", "status", "message"),
    [
        ("evaluate no/such/file.csv", None, 1, "no such file: no/such/file.csv"),
        ("evaluate -", "score\n1\n", 1, "<stdin> has no 'rank' column"),
        ("evaluate - --num-candidates 5", "rank\n1\n9\n", 1, "line 3: rank 9 is larger than"),
        ("evaluate -", "rank\n1\nabc\n", 1, "<stdin>, line 3: rank must be a number, got 'abc'"),
        ("evaluate --metrics mrrr", None, 2, "unknown metric 'mrrr'; closest valid names: 'mrr'"),
        ("evaluate --format xml", None, 2, "invalid choice: 'xml'"),
        ("null --metric std --num-candidates 5 --n 3", None, 1, "pass --samples N"),
        ("evaluate -", b"\x93NUMPY garbage", 1, "<stdin> is not a readable npy file"),
    ],
)
def test_errors_of_the_real_command(
    args: str, stdin: str | bytes | None, status: int, message: str
) -> None:
    assert message in failed(run(args, stdin=stdin), status)


def test_debug_environment_shows_the_traceback() -> None:
    result = run("evaluate -", stdin="rank\n0\n", env={"RANKSTATS_DEBUG": "1"})
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_importing_rankstats_stays_light() -> None:
    names = {"rankstats.cli", "rankstats.io", "rankstats.plot", "rankstats.__main__", "matplotlib"}
    code = f"import sys, rankstats; print(sorted(set(sys.modules) & {names!r}))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr


def test_only_the_command_line_modules_import_argparse_csv_or_matplotlib() -> None:
    heavy = {"argparse", "csv", "gzip", "matplotlib"}
    allowed = {
        *(SOURCE / "cli").glob("*.py"),
        *(SOURCE / "io").glob("*.py"),
        SOURCE / "evaluation" / "report.py",  # csv, imported where CSV is written
        SOURCE / "plot.py",
    }
    for path in SOURCE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in heavy or name in {"rankstats.cli", "rankstats.plot"}:
                    assert path in allowed or path.name == "__main__.py", (path, name)


# === the entry point in-process: every variant of the errors, and the formats =====================


def test_help_and_bare_command() -> None:
    assert "evaluate" in succeeded(call("--help"))
    assert "--group-by" in succeeded(call("evaluate --help"))
    assert "COMMAND" in succeeded(call())


def test_every_input_format_gives_the_same_table(tmp_path: Path) -> None:
    ranks = np.array([1, 4, 2, 7, 3])
    candidates = np.array([9, 9, 8, 8, 9])
    text = "rank,num_candidates\n" + "".join(
        f"{r},{c}\n" for r, c in zip(ranks, candidates, strict=True)
    )
    paths = [
        write(tmp_path / "r.csv", text),
        write(tmp_path / "r.tsv", text.replace(",", "\t")),
        write(tmp_path / "r.txt", text.replace(",", "\t")),  # the tab is found in the header
        write(tmp_path / "quoted.csv", text.replace("rank,", '"rank",')),
    ]
    (tmp_path / "r.csv.gz").write_bytes(gzip.compress(text.encode()))
    np.savez(tmp_path / "r.npz", rank=ranks, num_candidates=candidates)
    structured = np.zeros(5, dtype=[("rank", "f8"), ("num_candidates", "i8")])
    structured["rank"], structured["num_candidates"] = ranks, candidates
    np.save(tmp_path / "r.npy", structured)
    paths += [tmp_path / "r.csv.gz", tmp_path / "r.npz", tmp_path / "r.npy"]
    outputs = {path.name: succeeded(call("evaluate", path, "--format csv")) for path in paths}
    assert len(set(outputs.values())) == 1, outputs
    stdin = succeeded(call("evaluate - --format csv", stdin=(tmp_path / "r.npz").read_bytes()))
    assert stdin == outputs["r.csv"]


def test_plain_npy_of_ranks_with_the_num_candidates_flag(tmp_path: Path) -> None:
    np.save(tmp_path / "ranks.npy", np.array([1, 2, 3, 10]))
    args = "--num-candidates 10 --metrics amri --format json"
    (row,) = json.loads(succeeded(call("evaluate", tmp_path / "ranks.npy", args)))
    assert row["value"] == pytest.approx(AdjustedArithmeticMeanRankIndex()([1, 2, 3, 10], [10] * 4))


def test_headerless_column_of_ranks() -> None:
    args = "evaluate - --num-candidates 4 --metrics mrr --format json"
    (row,) = json.loads(succeeded(call(args, stdin=b"1\n2\n\n4\n")))
    assert row["value"] == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)


def test_pykeen_layout_npz_with_all_rank_types(tmp_path: Path) -> None:
    low = {"head": np.array([1, 2, 3]), "tail": np.array([1, 4, 1])}
    high = {"head": np.array([1, 3, 3]), "tail": np.array([2, 4, 1])}
    arrays = {}
    for side in ("head", "tail"):
        arrays[f"{side}.optimistic"] = low[side]
        arrays[f"{side}.pessimistic"] = high[side]
        arrays[f"{side}.realistic"] = (low[side] + high[side]) / 2
        arrays[f"num_candidates.{side}"] = np.array([5, 5, 6])
    np.savez(tmp_path / "pykeen.npz", **arrays)
    args = "--group-by side --metrics mrr --format json"
    output = json.loads(succeeded(call("evaluate", tmp_path / "pykeen.npz", args)))
    assert {row["rank_type"] for row in output} == {
        "optimistic",
        "realistic",
        "pessimistic",
        "expected",
    }
    for side in ("head", "tail"):
        for rank_type, ranks in [("optimistic", low[side]), ("pessimistic", high[side])]:
            (row,) = [r for r in output if r["side"] == side and r["rank_type"] == rank_type]
            assert row["value"] == pytest.approx(InverseHarmonicMeanRank()(ranks))
    both = evaluate(
        {
            "optimistic": np.concatenate(list(low.values())),
            "pessimistic": np.concatenate(list(high.values())),
        },
        [5, 5, 6, 5, 5, 6],
        metrics=["mrr"],
    )
    (row,) = [r for r in output if r["side"] is None and r["rank_type"] == "expected"]
    assert row["value"] == pytest.approx(both["expected.mrr"])


def test_optimistic_and_pessimistic_columns_add_the_expected_rank_type(tmp_path: Path) -> None:
    path = write(tmp_path / "ties.csv", "optimistic,pessimistic,num_candidates\n1,4,4\n2,2,4\n")
    table = succeeded(call("evaluate", path, "--metrics mrr,amrr --rank-types realistic,expected"))
    assert table.splitlines()[0].split()[:4] == ["side", "rank", "type", "metric"]
    output = json.loads(
        succeeded(call("evaluate", path, "--metrics amrr --rank-types expected --format json"))
    )
    # the first task ties with every candidate: in expectation it is exactly at chance level
    ties = {"optimistic": [1, 2], "pessimistic": [4, 2]}
    expected = evaluate(ties, [4, 4], metrics=["amrr"])["expected.amrr"]
    assert output[0]["value"] == pytest.approx(expected)


def test_macro_average_counts_every_group_once(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "g,rank\na,1\na,1\na,1\nb,4\n")
    micro = json.loads(
        succeeded(call("evaluate", path, "--metrics mrr --group-by g --format json"))
    )
    macro = json.loads(
        succeeded(
            call("evaluate", path, "--metrics mrr --group-by g --average macro --format json")
        )
    )
    assert micro[0]["value"] == pytest.approx((3 + 0.25) / 4)
    assert macro[0]["value"] == pytest.approx((1 + 0.25) / 2)


def test_group_by_two_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "relation,side,rank\nr,head,1\nr,tail,2\ns,head,4\ns,head,2\n")
    output = json.loads(
        succeeded(call("evaluate", path, "--metrics mrr --group-by relation,side --format json"))
    )
    groups = {(row["relation"], row["side"]): row["value"] for row in output}
    assert groups == {
        (None, None): pytest.approx((1 + 1 / 2 + 1 / 4 + 1 / 2) / 4),
        ("r", "head"): 1.0,
        ("r", "tail"): 0.5,
        ("s", "head"): pytest.approx(0.375),
    }
    table = succeeded(call("evaluate", path, "--metrics mrr --group-by relation,side"))
    assert table.splitlines()[1].startswith("(all)")


def test_expected_values_are_missing_without_candidates(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "rank\n1\n2\n")
    (row,) = json.loads(succeeded(call("evaluate", path, "--metrics mrr --format json")))
    assert row["value"] == pytest.approx(0.75)
    assert row["expected_value"] is None
    assert row["z_score"] is None
    default = succeeded(call("evaluate", path))  # the defaults leave out what needs candidates
    assert "adjusted" not in default


def test_metrics_query_and_formats() -> None:
    keys = [row["key"] for row in json.loads(succeeded(call("metrics reciprocal --format json")))]
    assert "inverse_harmonic_mean_rank" in keys
    assert "hits_at_k" not in keys
    table = succeeded(call("metrics"))
    assert table.splitlines()[0].split() == [
        "key",
        "synonyms",
        "value_range",
        "direction",
        "E",
        "V",
        "description",
    ]
    assert "hits_at_k" in table
    assert len(csv_rows(succeeded(call("metrics --format csv")))) == len(list(metric_resolver))


def test_null_defaults_and_monte_carlo() -> None:
    table = succeeded(call("null --num-candidates 20 --n 5"))
    for key in ("inverse_harmonic_mean_rank", "hits_at_1", "hits_at_10", "arithmetic_mean_rank"):
        assert key in table
    args = "null --metric mrr,std --num-candidates 20 --n 5 --samples 4000 --seed 1 --format json"
    mrr, std = json.loads(succeeded(call(args)))
    assert mrr["exact"] is True  # a closed form wins over sampling
    assert std["exact"] is False
    values = metric_resolver.make("std").get_sampled_values([20] * 5, 20_000, generator=0)
    assert std["expected"] == pytest.approx(values.mean(), rel=0.05)
    assert json.loads(succeeded(call(args))) == [mrr, std]  # the seed makes it reproducible


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("\n\n", "is empty"),
        ("score,num_candidates\n1,2\n", "no 'rank' column"),
        ("rank,rank\n1,2\n", "names the column 'rank' more than once"),
        ("rank,realistic\n1,1\n", "both a 'rank' and a 'realistic' column"),
        ("rank,num_candidates\n", "has a header but no rows"),
        ("rank,num_candidates\n1,5\n2\n", "line 3: expected 2 fields"),
        ("rank,num_candidates\n1,5\n\nabc,5\n", "line 4: rank must be a number, got 'abc'"),
        ("rank,num_candidates\n1,5\n,5\n", "line 3: rank must be a number, got an empty field"),
        ("rank,num_candidates\n1,5\n0,5\n", "line 3: rank must be a number >= 1, got 0"),
        ("rank,num_candidates\n1,5\ninf,5\n", "line 3: rank must be a number >= 1, got inf"),
        (
            "rank,num_candidates\n1,5\n2,2\n15,14\n",
            "line 4: rank 15 is larger than num_candidates 14",
        ),
        ("rank,num_candidates\n1,2.5\n", "line 2: num_candidates must be a whole number >= 1"),
        ("rank,weight\n1,1\n2,-1\n", "line 3: weight must be a number >= 0, got -1"),
        ("rank,weight\n1,0\n2,0\n", "every weight is zero"),
        ('rank,note\n1,"two\nlines"\n2,x,y\n', "line 4: expected 2 fields"),
        ("optimistic,pessimistic\n1,2\n3,2\n", "line 3: the pessimistic rank 2 is smaller"),
        ("optimistic,pessimistic\n1.5,2\n", "line 2: optimistic must be a whole number >= 1"),
        ("optimistic,pessimistic,rank\n1,3,2\n1,3,3\n", "line 3: the realistic rank 3 is not"),
    ],
)
def test_bad_text_input(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "bad.csv", text)
    line = failed(call("evaluate", path, "--metrics mrr"))
    assert message in line
    assert str(path) in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("evaluate .", "is a directory"),
        ("evaluate --group-by relation", "no column 'relation' to group by"),
        ("evaluate --num-candidates 20", "use one or the other"),
        ("evaluate --rank-types expected", "rank type 'expected' needs the optimistic"),
        ("metrics no-such-metric-at-all", "no metric matches 'no-such-metric-at-all'"),
    ],
)
def test_bad_arguments(args: str, message: str) -> None:
    assert message in failed(call(args))


def test_metric_needing_candidates_without_them(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "rank\n1\n2\n")
    line = failed(call("evaluate", path, "--metrics mrr,amri"))
    assert "needs the number of candidates" in line
    assert "--num-candidates" in line


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.npy", b"not numpy at all", "not a valid .npy file"),
        ("bad.npz", b"PK\x03\x04 truncated", "not a readable npz file"),
        ("bad.csv.gz", b"not gzip", "not a valid gzip file"),
        ("latin1.csv", "rank,relation\n1,caf\xe9\n".encode("latin-1"), "not UTF-8 text"),
    ],
)
def test_unreadable_files(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert message in failed(call("evaluate", path))


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"rank": np.array([1, 2]), "num_candidates": np.array([3])}, "equal lengths"),
        ({"ranks_of_something": np.array([1, 2])}, "no 'rank' column"),
        ({"rank": np.ones((2, 2))}, "must be 1-D"),
        ({"rank": np.array([1.0, np.nan])}, "row 2: rank must be a number >= 1, got nan"),
        (
            {"rank": np.array([2, 2]), "num_candidates": np.array([1, 5])},
            "row 1: rank 2 is larger than num_candidates 1",
        ),
        ({"rank": np.array(["a", "b"])}, "must hold numbers"),
        ({"rank": np.array([], dtype=float)}, "holds no ranks"),
    ],
)
def test_bad_npz(tmp_path: Path, arrays: dict[str, np.ndarray], message: str) -> None:
    np.savez(tmp_path / "bad.npz", **arrays)
    assert message in failed(call("evaluate", tmp_path / "bad.npz"))


def test_two_dimensional_npy(tmp_path: Path) -> None:
    np.save(tmp_path / "bad.npy", np.ones((3, 2)))
    assert "got an array of shape (3, 2)" in failed(call("evaluate", tmp_path / "bad.npy"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("frobnicate", "invalid choice: 'frobnicate'"),
        ("evaluate --num-candidates 0", "argument --num-candidates: expected a positive integer"),
        ("evaluate --num-candidates many", "got 'many'"),
        ("evaluate --num-candidates 99999999999999999999", "got '99999999999999999999'"),
        ("null --num-candidates 99999999999999999999", "at most 2**53"),
        ("null --num-candidates 3 --n 99999999999999999999999", "got '99999999999999999999999'"),
        ("evaluate --format yaml", "invalid choice: 'yaml'"),
        ("plot hits", "the following arguments are required: --output"),
        ("plot hits -o x.png --max-k 0", "expected an integer in 1..1000"),
        ("evaluate --average median", "invalid choice: 'median'"),
        ("null --metric mrr", "the following arguments are required: --num-candidates"),
        ("null --num-candidates 3 --value nan", "expected a finite number, got 'nan'"),
        ("null --num-candidates 3 --samples -5", "expected an integer >= 2"),
        ("evaluate --samples 1", "argument --samples: expected an integer >= 2"),
        ("evaluate --samples 10 --seed -1", "argument --seed: expected a non-negative integer"),
        ("null --num-candidates 3 --seed x", "argument --seed: expected a non-negative integer"),
        ("evaluate --rank-types best", "argument --rank-types: expected a comma-separated list"),
        ("evaluate a.csv b.csv", "unrecognized arguments: b.csv"),
        # argument mistakes found after parsing: the same form and status (they had exited 1)
        ("evaluate --metrics foo", "evaluate: error: --metrics: unknown metric 'foo'"),
        ("evaluate --metrics hits@0", "--metrics: metric 'hits@0': k must be a positive"),
        ("evaluate --seed 3", "evaluate: error: --seed needs --samples N"),
        ("evaluate --average macro", "--average macro averages over groups and needs"),
        ("evaluate -o out.xyz", "--output: the file's suffix gives the format, one of .csv"),
        ("compare a.csv b.csv --resamples 1", "argument --resamples: expected an integer >= 2"),
        ("compare a.csv b.csv --names x", "--names needs one name per file (2), got 1"),
        ("compare a.csv b.csv --per-group", "--per-group needs --group-by COLUMNS"),
        ("null --num-candidates 3 --metric mrr,mr --value 1", "--value needs exactly one"),
        ("null --metric mrr,mr --num-candidates 3 --plot x.png", "--plot needs exactly one"),
        ("null --metric nope --num-candidates 3", "null: error: --metric: unknown metric 'nope'"),
        ("evaluate --metrics ' , '", "--metrics needs at least one metric"),
    ],
)
def test_usage_errors_are_one_line_with_status_2(args: str, message: str) -> None:
    line = failed(call(args), status=2)
    assert message in line
    assert "--help" in line


# === issue 10: the command line as a new user meets it ==========================================


def test_macro_average_without_groups_is_refused() -> None:
    line = failed(call("evaluate --average macro --metrics mrr"), status=2)
    assert "--average macro" in line
    assert "--group-by" in line


def test_truncated_gzip_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ranks.csv.gz"
    path.write_bytes(gzip.compress(b"rank,num_candidates\n" + b"1,5\n" * 1000)[:-20])
    line = failed(call("evaluate", path))
    assert str(path) in line
    assert "ended unexpectedly" in line


def test_ranks_that_ties_cannot_give_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "rank,num_candidates\n1,5\n2.5,5\n1.25,5\n")
    line = failed(call("evaluate", path))
    assert f"{path}, line 4: rank must be a whole or half-integer" in line


@pytest.mark.parametrize("column", ["rank", "optimistic", "pessimistic"])
def test_a_single_rank_type_is_always_named(tmp_path: Path, column: str) -> None:
    path = write(tmp_path / "r.csv", f"{column},num_candidates\n1,5\n2,5\n")
    rank_type = "realistic" if column == "rank" else column
    body = succeeded(call("evaluate", path, "--metrics mrr")).splitlines()[1:]
    assert body[0].split()[:3] == ["both", rank_type, "inverse_harmonic_mean_rank"]
    (row,) = json.loads(succeeded(call("evaluate", path, "--metrics mrr --format json")))
    assert row["rank_type"] == rank_type


@pytest.mark.parametrize("output_format", ["table", "csv", "json", "markdown", "latex"])
def test_every_format_is_what_the_results_object_renders(output_format: str) -> None:
    from rankstats.io import read_ranks

    args = f"evaluate --metrics mrr,hits@10 --group-by side --format {output_format}"
    results = read_ranks(None).evaluate(metrics=["mrr", "hits@10"], group_by="side")
    options = {"groups": True, "group_names": ["side"]}
    expected = {
        "table": lambda: results.to_table(**options) + "\n",
        "csv": lambda: results.to_csv(**options),
        "json": lambda: json.dumps(results.to_records(**options), indent=2) + "\n",
        "markdown": lambda: results.to_markdown(**options),
        "latex": lambda: results.to_latex(**options),
    }[output_format]()
    assert succeeded(call(args)) == expected


def test_output_file_holds_the_same_records(tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    printed = succeeded(call("evaluate --metrics mrr --group-by side --format csv -o", target))
    assert target.read_text() == printed


def test_plot_commands_write_images(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    for kind in ("hits", "ranks"):
        path = tmp_path / f"{kind}.png"
        succeeded(call(f"plot {kind} --max-k 5 -o", path))
        assert path.read_bytes().startswith(b"\x89PNG")
    # the format and the folder are checked before any work (they had failed at the end)
    assert "'.unknown' is no image format" in failed(call("plot ranks -o", tmp_path / "x.unknown"))
    missing = tmp_path / "nowhere" / "x.png"
    assert "does not exist" in failed(call("null --metric mrr --num-candidates 10 --plot", missing))
    assert "--seed needs --samples N or --plot" in failed(
        call("null --metric mrr --num-candidates 10 --seed 5"), 2
    )


def test_plot_hits_needs_candidates(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = write(tmp_path / "r.csv", "rank\n1\n2\n")
    assert "needs the number of candidates" in failed(call("plot hits", path, "-o x.png"))


def test_monte_carlo_estimates_come_from_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "w.csv", "rank,num_candidates,weight\n1,5,1\n3,9,2\n2,4,0.5\n")
    args = "--metrics median --samples 400 --seed 7 --format json"
    (row,) = json.loads(succeeded(call("evaluate", path, args)))
    expected = evaluate(
        [1, 3, 2], [5, 9, 4], weights=[1, 2, 0.5], metrics=["median"], num_samples=400, seed=7
    ).rows[0]
    assert row["method"] == "monte-carlo"
    assert row["expected_value"] == expected.expected_value
    assert row["standard_error"] == expected.standard_error
    table = succeeded(call("evaluate", path, "--metrics median --samples 400 --seed 7"))
    assert "Monte-Carlo estimates from 400 null samples, seed 7" in table
    empty = succeeded(call("evaluate", path, "--metrics median"))  # no samples: a note says why
    assert "[1]" in empty.splitlines()[1]
    assert empty.splitlines()[-1].startswith("[1] ")


# === values, names, images and input the commands used to take without a word ===================


@pytest.mark.parametrize(
    ("metric", "value", "shown"),
    [
        ("mrr", "1.5", "in (0, 1], got 1.5"),
        ("mrr", "0", "in (0, 1], got 0.0"),
        ("mrr", "1e308", "in (0, 1], got 1e+308"),
        ("hits@1", "2", "in [0, 1], got 2.0"),
        ("hits@10", "-0.1", "in [0, 1], got -0.1"),
        ("mr", "0.5", "in [1, ∞), got 0.5"),
        ("amri", "1.5", "in [-1, 1], got 1.5"),
    ],
)
def test_null_refuses_a_value_outside_the_metric_range(metric: str, value: str, shown: str) -> None:
    line = failed(
        call(f"null --num-candidates 10 --n 5 --metric {metric} --value {value}"), status=2
    )
    assert "--value must be a value of" in line
    assert shown in line
    assert metric_resolver.make(metric).value_range.notate() in line  # the library's range


@pytest.mark.parametrize(
    ("metric", "value", "shown"),
    [
        ("mr", "10.5", "lies between 1 and 10"),  # had got a z-score: 2.46
        ("mrr", "0.01", "lies between 0.1 and 1"),  # below 1/C
        ("gmr", "11", "lies between 1 and 10"),
        ("aamri", "1.01", "must be a value of"),
    ],
)
def test_null_refuses_a_value_no_ranks_of_these_tasks_give(
    metric: str, value: str, shown: str
) -> None:
    line = failed(
        call(f"null --num-candidates 10 --n 2 --metric {metric} --value {value}"), status=2
    )
    assert shown in line


@pytest.mark.parametrize(
    ("metric", "value"), [("mr", 10.0), ("mrr", 0.1), ("gmr", 1.0), ("variance", 5.0)]
)
def test_null_takes_the_values_at_the_extreme_ranks(metric: str, value: float) -> None:
    args = f"null --num-candidates 10 --n 2 --metric {metric} --value {value} --format json"
    (row,) = json.loads(succeeded(call(args)))
    assert row["value"] == value


@pytest.mark.parametrize(("metric", "value"), [("mrr", 1.0), ("hits@1", 0.0), ("mr", 1.0)])
def test_null_takes_the_ends_of_the_range(metric: str, value: float) -> None:
    args = f"null --num-candidates 10 --n 5 --metric {metric} --value {value} --format json"
    (row,) = json.loads(succeeded(call(args)))
    assert row["z"] == pytest.approx((value - row["expected"]) / row["std"])


def test_null_refuses_a_bad_value_before_drawing(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "null.png"
    result = call("null --num-candidates 10 --metric mrr --value 2 --samples 100 --plot", path)
    assert "--value" in failed(result, status=2)
    assert result.stdout == ""
    assert not path.exists()


@pytest.mark.parametrize(
    ("query", "keys"),
    [
        ("hits@10", ["hits_at_k"]),  # a name the resolver reads, as --metrics hits@10 is read
        ("Hits @ 3", ["hits_at_k"]),
        ("h@1", ["hits_at_k"]),
        ("z_hits_at_7", ["z_hits_at_k"]),
        ("mean_reciprocal_rank", ["inverse_harmonic_mean_rank"]),
        ("hits", ["adjusted_hits_at_k", "hits_at_k", "z_hits_at_k"]),  # a part of names: search
        ("MRR", [f"{p}inverse_harmonic_mean_rank" for p in ("adjusted_", "", "z_")]),
    ],
)
def test_metrics_query_resolves_names_and_searches_parts(query: str, keys: list[str]) -> None:
    rows = json.loads(succeeded(call("metrics", Path(query), "--format json")))
    found = [row["key"] for row in rows]
    assert set(keys) <= set(found)
    if query not in ("hits", "MRR"):
        named = metric_resolver.make(query)
        assert f"rankstats.{type(named).__name__}" in [row["class"] for row in rows]


def test_metrics_query_with_a_bad_cut_off_gets_the_resolver_error() -> None:
    assert "k must be a positive integer, got 0" in failed(call("metrics hits@0"))


@pytest.mark.parametrize("command", ["evaluate", "compare a.csv b.csv"])
@pytest.mark.parametrize("columns", [",", "''", "' , '"])
def test_an_empty_group_by_is_a_usage_error(command: str, columns: str) -> None:
    line = failed(call(f"{command} --group-by {columns}"), status=2)
    assert "argument --group-by: expected a comma-separated list of column names" in line


def test_plot_refuses_a_directory_or_a_name_without_suffix(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    folder = tmp_path / "figures"
    folder.mkdir()
    assert f"--output: {folder} is a directory" in failed(call("plot ranks -o", folder))
    line = failed(call("plot hits -o", tmp_path / "noext"))
    assert "--output: " in line
    assert "has no suffix" in line
    assert ".png" in line
    assert ".pdf" in line
    line = failed(call("null --metric mrr --num-candidates 5 --plot", tmp_path / "noext"))
    assert "--plot: " in line
    assert "has no suffix" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["figures"]  # nothing written


def test_plot_reads_piped_standard_input_as_evaluate_does(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "hits.png"
    # the bundled example has candidate counts; these ranks have none
    line = failed(run("plot hits -o", path, stdin="rank\n1\n2\n"))
    assert "needs the number of candidates" in line
    assert "<stdin>" in line
    succeeded(run("plot hits --num-candidates 5 -o", path, stdin="rank\n1\n2\n"))
    assert path.read_bytes().startswith(b"\x89PNG")


def test_plot_ranks_refuses_ranks_evaluate_refuses(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    ranks = write(tmp_path / "h.csv", "rank\n1e300\n2\n")
    image = tmp_path / "p.png"
    assert "must be at most 2**53" in failed(run("evaluate", ranks))
    line = failed(run("plot ranks", ranks, "-o", image))  # one line: no RuntimeWarning either
    assert "must be at most 2**53" in line
    assert "h.csv" in line
    line = failed(run("plot ranks -o", image, stdin="rank\n1e300\n2\n"))
    assert "must be at most 2**53" in line
    assert "stdin" in line
    assert not image.exists()


def test_files_of_one_name_are_told_apart(tmp_path: Path) -> None:
    """Two inputs named alike (a/ranks.csv, b/ranks.csv) are two curves: plot had keyed them by
    base name, so the second replaced the first; compare and plot now share one naming."""
    from rankstats.cli.common import file_names

    assert file_names(["a/ranks.csv", "b/ranks.csv.gz"]) == ["ranks (1)", "ranks (2)"]
    assert file_names([None, "-", "x.parquet"]) == ["example", "stdin", "x"]
    pytest.importorskip("matplotlib")
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder / "ranks.csv", "rank,num_candidates\n1,5\n2,5\n")
    path = tmp_path / "hits.png"
    succeeded(
        call("plot hits", tmp_path / "a" / "ranks.csv", tmp_path / "b" / "ranks.csv", "-o", path)
    )
    assert path.read_bytes().startswith(b"\x89PNG")

"""Tests of rankstats.io: every format gives the same RankData, errors name file, line and column,
both text engines agree, and results written back read the same."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats import evaluate
from rankstats.io import RankData, RankFileError, read_ranks, write_results
from rankstats.io.text import read_text

DATA = Path(__file__).parent / "data"
RANKS = np.array([1, 4, 2.5, 7, 3])
CANDIDATES = np.array([9, 9, 8, 8, 9])
SIDES = np.array(["head", "tail", "head", "tail", "tail"])
TEXT = "side,rank,num_candidates\n" + "".join(
    f"{s},{r:g},{c}\n" for s, r, c in zip(SIDES, RANKS, CANDIDATES, strict=True)
)


def engines() -> list[str]:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return ["numpy"]
    return ["numpy", "pyarrow"]


def check(data: RankData) -> None:
    assert list(data.ranks) == ["realistic"]
    np.testing.assert_array_equal(data.ranks["realistic"], RANKS)
    np.testing.assert_array_equal(data.num_candidates, CANDIDATES)
    np.testing.assert_array_equal(data.columns["side"], SIDES)
    assert data.weights is None
    assert len(data) == 5


def write_formats(folder: Path) -> list[Path]:
    paths = []
    for name, text in [
        ("r.csv", TEXT),
        ("r.tsv", TEXT.replace(",", "\t")),
        ("r.txt", TEXT.replace(",", "   ")),
        ("crlf.csv", TEXT.replace("\n", "\r\n")),
        ("cr.csv", TEXT.replace("\n", "\r")),  # classic Mac OS line ends
        ("blank.csv", "\n \n" + TEXT.replace("\n", "\n\n")),
        ("quoted.csv", TEXT.replace("side,", '"side",').replace("head", '"head"')),
        ("bom.csv", "\ufeff" + TEXT),
        ("spaces.csv", TEXT.replace(",", " , ")),
    ]:
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    (folder / "r.csv.gz").write_bytes(gzip.compress(TEXT.encode()))
    (folder / "noext").write_bytes(gzip.compress(TEXT.encode()))  # found from the magic bytes
    np.savez(folder / "r.npz", side=SIDES, rank=RANKS, num_candidates=CANDIDATES)
    structured = np.zeros(5, dtype=[("side", "U4"), ("rank", "f8"), ("num_candidates", "i8")])
    structured["side"], structured["rank"], structured["num_candidates"] = SIDES, RANKS, CANDIDATES
    np.save(folder / "r.npy", structured)
    paths += [folder / "r.csv.gz", folder / "noext", folder / "r.npz", folder / "r.npy"]
    try:
        import pyarrow
        import pyarrow.feather
        import pyarrow.parquet
    except ImportError:
        return paths
    table = pyarrow.table({"side": SIDES, "rank": RANKS, "num_candidates": CANDIDATES})
    pyarrow.parquet.write_table(table, folder / "r.parquet")
    pyarrow.feather.write_feather(table, folder / "r.feather")
    paths += [folder / "r.parquet", folder / "r.feather"]
    return paths


@pytest.mark.parametrize("engine", ["numpy", "pyarrow", "auto"])
def test_every_format_gives_the_same_data(tmp_path: Path, engine: str) -> None:
    if engine == "pyarrow":
        pytest.importorskip("pyarrow")
    for path in write_formats(tmp_path):
        check(read_ranks(path, engine=engine))  # type: ignore[arg-type]
    check(read_ranks(io.BytesIO(TEXT.encode())))
    check(read_ranks(str(tmp_path / "r.csv"), format="csv"))


def test_blocks_of_any_size_give_the_same_data_and_lines() -> None:
    text = b"rank,num_candidates,g\n" + b"".join(
        b"%d,%d,%s\n%s" % (1 + i % 5, 9, b"ab"[i % 2 : i % 2 + 1], b"\n" * (i % 3 == 0))
        for i in range(200)
    )
    full = read_text(io.BytesIO(text), "t", numeric={"rank", "num_candidates"})
    for size in (1, 7, 64, 1000):
        parts = read_text(
            io.BytesIO(text), "t", numeric={"rank", "num_candidates"}, block_size=size
        )
        for name in ("rank", "num_candidates", "g"):
            np.testing.assert_array_equal(parts.columns[name], full.columns[name])
        assert parts.line_of is not None
        assert full.line_of is not None
        assert [parts.line_of(i) for i in range(200)] == [full.line_of(i) for i in range(200)]
    lines = text.decode().split("\n")
    assert full.line_of is not None
    for row in (0, 1, 57, 199):  # the line found holds the row's values
        fields = lines[full.line_of(row) - 1].split(",")
        assert float(fields[0]) == full.columns["rank"][row]


@pytest.mark.parametrize("engine", engines())
@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("rank,num_candidates\n1,5\n\nabc,5\n", 4, "rank", "rank must be a number, got 'abc'"),
        ("rank,num_candidates\n1,5\n,5\n", 3, "rank", "got an empty field"),
        ("rank,num_candidates\n1,5\n1_0,5\n", 3, "rank", "must be a number, got '1_0'"),
        ("rank,num_candidates\n1,5\n2\n", 3, None, "expected 2 fields"),
        ("rank,num_candidates\n1,5\n\n\n9,5\n", 5, "num_candidates", "rank 9 is larger"),
        ("rank,num_candidates\n1,5\n1.25,5\n", 3, "rank", "whole or half-integer"),
        ("rank,num_candidates\n1,5\n2,0.5\n", 3, "num_candidates", "whole number >= 1"),
        ("rank,num_candidates\n1,5\n2,1e30\n", 3, "num_candidates", r"at most 2\*\*53"),
        ("rank,weight\n1,1\n2,-1\n", 3, "weight", "weight must be a number >= 0, got -1"),
        ("optimistic,pessimistic\n1,2\n3,2\n", 3, "pessimistic", "is smaller than"),
        ("rank,num_candidates\r1,5\r\r9,5\r", 4, "num_candidates", "rank 9 is larger"),
        (
            "rank,num_candidates\n1,5\n2,9007199254740993\n",
            3,
            "num_candidates",
            r"at most 2\*\*53 .*got 9007199254740993, which it would round to 9007199254740992$",
        ),
        ("rank\n1\n9007199254740993\n", 3, "rank", "got 9007199254740993, which it would round"),
        ("rank\n1\n4503599627370496.5\n", 3, "rank", "got 4503599627370496.5, which it would"),
        ("rank\n1\n1152921504606846976\n", 3, "rank", "rank must be at most 2\\*\\*53"),
        ('rank,note\n1,"two\nlines"\n2,x,y\n', 4, None, "expected 2 fields"),
    ],
)
def test_errors_name_file_line_and_column(
    tmp_path: Path, engine: str, text: str, line: int, column: str | None, message: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(RankFileError, match=message) as caught:
        read_ranks(path, engine=engine)  # type: ignore[arg-type]
    assert caught.value.source == str(path)
    assert caught.value.line == line
    assert caught.value.column == column
    assert str(caught.value).startswith(f"{path}, line {line}: ")


def test_binary_formats_name_rows(tmp_path: Path) -> None:
    np.savez(tmp_path / "r.npz", rank=np.array([1.0, 2.0, 0.5]))
    with pytest.raises(RankFileError, match=r"r.npz, row 3: rank must be a number >= 1") as caught:
        read_ranks(tmp_path / "r.npz")
    assert (caught.value.line, caught.value.column) == (3, "rank")


def test_line_ends_of_any_kind_give_the_same_data_and_lines() -> None:
    text = b"rank,g\n" + b"".join(
        b"%d,%s\n%s" % (i, b"ab"[i % 2 :][:1], b"\n" * (i % 3 == 0)) for i in range(1, 60)
    )
    full = read_text(io.BytesIO(text), "t", numeric={"rank"})
    assert full.line_of is not None
    for ending in (b"\r", b"\r\n"):
        for size in (1, 2, 7, 1000):  # a CR LF may be cut between blocks
            other = read_text(
                io.BytesIO(text.replace(b"\n", ending)), "t", numeric={"rank"}, block_size=size
            )
            np.testing.assert_array_equal(other.columns["rank"], full.columns["rank"])
            np.testing.assert_array_equal(other.columns["g"], full.columns["g"])
            assert other.line_of is not None
            assert [other.line_of(i) for i in range(59)] == [full.line_of(i) for i in range(59)]


@pytest.mark.parametrize("engine", engines())
def test_a_column_of_ranks_with_cr_line_ends(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b"Rank\r1\r2.5\r")  # pyarrow read one column named 'rank\r1\r2.5'
    data = read_ranks(path, engine=engine)  # type: ignore[arg-type]
    np.testing.assert_array_equal(data.ranks["realistic"], [1, 2.5])


@pytest.mark.parametrize("engine", engines())
def test_ranks_and_counts_that_float64_would_round_are_refused(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "rank,num_candidates,weight\n9007199254740992,9007199254740992,9007199254740993\n"
    )
    data = read_ranks(path, engine=engine)  # type: ignore[arg-type]
    assert data.num_candidates is not None
    assert data.num_candidates.tolist() == [2**53]  # the bound itself is exact
    assert data.weights is not None  # weights are any real number: rounding them is fine
    pytest.importorskip("pyarrow")
    import pyarrow
    import pyarrow.parquet

    table = pyarrow.table({"rank": [1, 2], "num_candidates": pyarrow.array([5, 2**53 + 1])})
    pyarrow.parquet.write_table(table, tmp_path / "r.parquet")
    message = r"r.parquet, row 2: num_candidates must be at most 2\*\*53 .*got 9007199254740993,"
    with pytest.raises(RankFileError, match=message) as caught:
        read_ranks(tmp_path / "r.parquet")
    assert (caught.value.line, caught.value.column) == (2, "num_candidates")
    np.save(tmp_path / "r.npy", np.array([1, 2**53 + 1], dtype=np.uint64))
    with pytest.raises(RankFileError, match=r"r.npy, row 2: rank must .*got 9007199254740993"):
        read_ranks(tmp_path / "r.npy")


def test_column_names_that_differ_in_case_are_refused_in_every_format(tmp_path: Path) -> None:
    message = "names the column 'rank' more than once"
    np.savez(tmp_path / "r.npz", rank=[1, 2], RANK=[5, 6])
    with pytest.raises(RankFileError, match=f"{message} \\(as 'rank' and 'RANK'"):
        read_ranks(tmp_path / "r.npz")
    structured = np.zeros(2, dtype=[("rank", "f8"), ("Rank", "f8")])
    np.save(tmp_path / "r.npy", structured)
    with pytest.raises(RankFileError, match=message):
        read_ranks(tmp_path / "r.npy")
    with pytest.raises(RankFileError, match=message):
        read_ranks(io.BytesIO(b"rank,RANK\n1,5\n"))
    pytest.importorskip("pyarrow")
    import pyarrow
    import pyarrow.parquet

    pyarrow.parquet.write_table(pyarrow.table({"rank": [1, 2], "Rank": [5, 6]}), tmp_path / "r.pq")
    with pytest.raises(RankFileError, match=message) as caught:
        read_ranks(tmp_path / "r.pq")
    assert caught.value.column == "rank"


def test_parquet_from_streams_that_cannot_seek(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow
    import pyarrow.parquet

    table = pyarrow.table({"side": SIDES, "rank": RANKS, "num_candidates": CANDIDATES})
    pyarrow.parquet.write_table(table, tmp_path / "r.parquet")
    data = (tmp_path / "r.parquet").read_bytes()
    check(read_ranks(io.BytesIO(data)))
    check(read_ranks(io.BytesIO(gzip.compress(data))))
    result = subprocess.run(  # standard input as a pipe
        [sys.executable, "-m", "rankstats", "evaluate", "-", "--metrics", "mrr"],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()


def test_binary_columns_that_are_not_numbers_or_text(tmp_path: Path) -> None:
    np.savez(tmp_path / "r.npz", rank=[1, 2], g=np.array([b"a", b"\xff"]))
    with pytest.raises(RankFileError, match=r"r.npz, row 2: g must be a number or UTF-8 text"):
        read_ranks(tmp_path / "r.npz")
    np.savez(tmp_path / "r.npz", rank=[1, 2], g=np.array([b"a", b"b"]))
    assert read_ranks(tmp_path / "r.npz").columns["g"].tolist() == ["a", "b"]
    pytest.importorskip("pyarrow")
    import decimal

    import pyarrow
    import pyarrow.parquet

    path = tmp_path / "r.parquet"
    for column, message in [
        (pyarrow.array([[1], [2]]), r"r.parquet: column 'g' must hold one number or text per row"),
        (pyarrow.array([b"a", b"\xff"]), "r.parquet, row 2: g must be a number or UTF-8 text"),
    ]:
        pyarrow.parquet.write_table(pyarrow.table({"rank": [1, 2], "g": column}), path)
        with pytest.raises(RankFileError, match=message) as caught:
            read_ranks(path)
        assert caught.value.column == "g"
    pyarrow.parquet.write_table(pyarrow.table({"rank": ["1", "2"]}), path)
    with pytest.raises(
        RankFileError, match=r"column 'rank' must hold numbers .*got text such as '1'"
    ):
        read_ranks(path)
    ranks = [decimal.Decimal("1.5"), decimal.Decimal("2")]  # decimals are numbers
    counts = [decimal.Decimal(3), decimal.Decimal(2**53 + 1)]
    pyarrow.parquet.write_table(pyarrow.table({"rank": ranks}), path)
    assert read_ranks(path).ranks["realistic"].tolist() == [1.5, 2.0]
    pyarrow.parquet.write_table(pyarrow.table({"rank": ranks, "num_candidates": counts}), path)
    with pytest.raises(RankFileError, match="row 2: num_candidates must be at most 2"):
        read_ranks(path)


def test_half_integers_are_realistic_ranks() -> None:
    data = read_ranks(io.BytesIO(b"rank\n1.5\n2\n"))
    np.testing.assert_array_equal(data.ranks["realistic"], [1.5, 2.0])


class _Failing(io.RawIOBase):
    name = "disk.csv"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        raise OSError(5, "Input/output error")


def test_io_and_truncation_errors_name_the_file(tmp_path: Path) -> None:
    stream = _Failing()
    with pytest.raises(RankFileError, match=r"^disk.csv: cannot read: Input/output error$"):
        read_ranks(stream)  # type: ignore[arg-type]
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(b"rank\n" + b"1\n" * 5000)[:-30])
    with pytest.raises(RankFileError, match=f"^{path}: the input ended unexpectedly"):
        read_ranks(path)
    (tmp_path / "bad.csv.gz").write_bytes(b"plain text")
    with pytest.raises(RankFileError, match=r"bad\.csv\.gz is not a valid gzip file"):
        read_ranks(tmp_path / "bad.csv.gz")
    with pytest.raises(RankFileError, match=r"no such file: nope\.csv"):
        read_ranks("nope.csv")


def test_pykeen_layout_evaluates_as_the_arrays(tmp_path: Path) -> None:
    data = read_ranks(DATA / "nations_transe_ranks.npz")
    assert set(data.ranks) == {"optimistic", "realistic", "pessimistic"}
    arrays = np.load(DATA / "nations_transe_ranks.npz")
    both = {t: np.concatenate([arrays[f"head.{t}"], arrays[f"tail.{t}"]]) for t in data.ranks}
    candidates = np.concatenate([arrays["num_candidates.head"], arrays["num_candidates.tail"]])
    expected = evaluate(both, candidates, metrics=["mrr", "hits@10", "amri"])
    results = data.evaluate(metrics=["mrr", "hits@10", "amri"], group_by="side")
    flat, reference = results.to_dict(statistics=True), expected.to_dict(statistics=True)
    assert flat.keys() == reference.keys()
    for key, value in reference.items():  # grouped sums may round differently
        assert flat[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    head = {t: arrays[f"head.{t}"] for t in data.ranks}
    by_side = evaluate(head, arrays["num_candidates.head"], metrics=["mrr"])
    assert results.by_group["head"]["mrr"] == pytest.approx(by_side["mrr"], rel=1e-15)
    pykeen = json.loads((DATA / "nations_transe_pykeen_results.json").read_text())
    assert results["both.realistic.mrr"] == pytest.approx(
        pykeen["both.realistic.inverse_harmonic_mean_rank"], rel=1e-6
    )


def test_group_labels_of_several_columns_are_tuples() -> None:
    data = read_ranks(io.BytesIO(b"r,s,rank\na,x,1\nb,y,2\na,x,4\n"))
    results = data.evaluate(metrics=["mrr"], group_by=["r", "s"])
    assert sorted(results.by_group) == [("a", "x"), ("b", "y")]
    assert results.by_group[("a", "x")]["mrr"] == pytest.approx((1 + 1 / 4) / 2)
    with pytest.raises(ValueError, match="no column 'q' to group by; the columns to group by"):
        data.group_labels("q")
    with pytest.raises(ValueError, match="a column of numbers with a meaning 'rank'"):
        data.group_labels("rank")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "xlsx"}, "format must be one of"),
        ({"engine": "polars"}, "engine must be one of"),
        ({"num_candidates": 0}, "num_candidates must be an integer in 1..2\\*\\*53"),
        ({"num_candidates": 2**60}, "num_candidates must be an integer"),
        ({"num_candidates": True}, "num_candidates must be an integer"),
        ({"progress": "yes"}, "progress must be True, False or None"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        read_ranks(io.BytesIO(b"rank\n1\n"), **kwargs)  # type: ignore[arg-type]


def test_num_candidates_argument_and_its_conflict_with_a_column() -> None:
    data = read_ranks(io.BytesIO(b"rank\n1\n3\n"), num_candidates=np.int64(4))
    np.testing.assert_array_equal(data.num_candidates, [4, 4])
    with pytest.raises(RankFileError, match="line 3: rank 3 is larger than num_candidates 2"):
        read_ranks(io.BytesIO(b"rank\n1\n3\n"), num_candidates=2)
    with pytest.raises(RankFileError, match="use one or the other"):
        read_ranks(io.BytesIO(b"rank,num_candidates\n1,3\n"), num_candidates=3)


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet", ".md", ".tex"])
def test_written_results_hold_the_records(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    data = read_ranks(None)
    results = data.evaluate(metrics=["mrr", "hits@10"], group_by="side")
    path = write_results(results, tmp_path / f"out{suffix}", group_names=["side"])
    records = results.to_records(groups=True, group_names=["side"])
    if suffix == ".csv":
        assert path.read_text() == results.to_csv(groups=True, group_names=["side"])
    elif suffix == ".json":
        assert json.loads(path.read_text()) == records
    elif suffix == ".parquet":
        import pyarrow.parquet

        assert pyarrow.parquet.read_table(path).to_pylist() == records
    elif suffix == ".md":
        assert path.read_text() == results.to_markdown(groups=True, group_names=["side"])
    else:
        assert path.read_text() == results.to_latex(groups=True, group_names=["side"])
    with pytest.raises(ValueError, match="format must be one of"):
        write_results(results, tmp_path / "out.xlsx")


def test_group_names_must_be_distinct(tmp_path: Path) -> None:
    data = read_ranks(io.BytesIO(b"r,s,rank\na,x,1\nb,y,2\n"))
    results = data.evaluate(metrics=["mrr"], group_by=["r", "s"])
    path = write_results(results, tmp_path / "out.csv", group_names=["r", "s"])
    assert path.read_text().splitlines()[2].startswith("a,x,")
    with pytest.raises(ValueError, match=r"group_names must be distinct.*names 'a' more than once"):
        write_results(results, tmp_path / "out.csv", group_names=["a", "a"])


def test_missing_pyarrow_is_a_clear_import_error(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow
    import pyarrow.parquet

    pyarrow.parquet.write_table(pyarrow.table({"rank": [1.0]}), tmp_path / "r.parquet")
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from rankstats.io import read_ranks\n"
        f"try:\n    read_ranks({str(tmp_path / 'r.parquet')!r})\n"
        "except ImportError as error:\n    print(error)\n"
        "print(read_ranks(" + repr(str(tmp_path / "r.csv")) + ").ranks['realistic'])\n"
    )
    (tmp_path / "r.csv").write_text("rank\n2\n")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install 'rankstats[parquet]'" in result.stdout
    assert "[2.]" in result.stdout  # text files need no pyarrow


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 2**40),
            st.integers(0, 2**40),
            st.booleans(),
            st.sampled_from(["a", "b", "c d", "é"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_round_trip_through_csv_text(rows: list[tuple[int, int, bool, str]]) -> None:
    """Any table written as CSV reads back exactly, with either engine's rules."""
    lines = ["rank,num_candidates,label"]
    for low, extra, half, label in rows:
        rank = low + (0.5 if half else 0.0)
        lines.append(f"{rank!r},{low + extra + 1},{label}")
    data = read_ranks(io.BytesIO(("\n".join(lines) + "\n").encode()))
    expected = [low + (0.5 if half else 0.0) for low, _, half, _ in rows]
    assert data.ranks["realistic"].tolist() == expected
    assert data.num_candidates is not None
    assert data.num_candidates.tolist() == [low + extra + 1 for low, extra, _, _ in rows]
    assert data.columns["label"].tolist() == [label for *_, label in rows]


@pytest.mark.skipif("pyarrow" not in engines(), reason="needs pyarrow")
@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 50), st.booleans()), min_size=1, max_size=25),
    st.integers(0, 40),
    st.sampled_from(["x", "0", "", "99", "1.25"]),
)
def test_engines_agree_on_data_and_on_the_line_of_a_bad_value(
    rows: list[tuple[int, bool]], position: int, bad: str
) -> None:
    """pyarrow and numpy read the same values, and name the same line for a bad one."""
    import tempfile

    lines = ["rank,num_candidates,g"]
    for rank, blank in rows:
        lines.append(f"{rank},60,g{rank % 3}")
        if blank:
            lines.append("")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.csv"
        path.write_text("\n".join(lines) + "\n")
        good = [read_ranks(path, engine=e) for e in ("numpy", "pyarrow")]  # type: ignore[arg-type]
        np.testing.assert_array_equal(good[0].ranks["realistic"], good[1].ranks["realistic"])
        np.testing.assert_array_equal(good[0].columns["g"], good[1].columns["g"])
        index = 1 + position % (len(lines) - 1)
        if not lines[index]:
            index -= 1 if index > 1 else -1
        lines[index] = f"{bad},60,g"
        path.write_text("\n".join(lines) + "\n")
        caught = []
        for engine in ("numpy", "pyarrow"):
            with pytest.raises(RankFileError) as error:
                read_ranks(path, engine=engine)  # type: ignore[arg-type]
            caught.append((str(error.value), error.value.line, error.value.column))
        assert caught[0] == caught[1]
        assert caught[0][1] == index + 1


@pytest.mark.parametrize("engine", engines())
def test_a_quote_never_closed_is_an_error(tmp_path: Path, engine: str) -> None:
    """The csv module (and Arrow) had read an open quote as a field running to the end of the
    file: every row after it lost, silently."""
    path = tmp_path / "open.csv"
    path.write_text('rank,rel\n1,a\n\n2,"abc\n3,d\n4,e\n')
    with pytest.raises(RankFileError, match=r"line 4: a quoted field opened on this row is never"):
        read_ranks(path, engine=engine)


@pytest.mark.parametrize("engine", engines())
def test_quotes_that_close_are_read_alike_by_both_engines(tmp_path: Path, engine: str) -> None:
    """A line break inside quotes, doubled quotes, a quote inside an unquoted field and text
    after a closing quote (read as the csv module and Arrow read it)."""
    path = tmp_path / "quoted.csv"
    path.write_text('rank,rel\n1,"x\ny"\n2,"a ""q"" b"\n3,ab"c\n4,"a"b\n')
    data = read_ranks(path, engine=engine)
    assert data.ranks["realistic"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert data.columns["rel"].tolist() == ["x\ny", 'a "q" b', 'ab"c', "ab"]


@pytest.mark.parametrize(
    ("source", "kind"),
    [(io.StringIO("rank\n1\n"), "a text stream"), (b"rank\n1\n", "bytes"), (42, "int")],
)
def test_sources_other_than_paths_and_binary_files_are_named(source: object, kind: str) -> None:
    """A text stream had failed in startswith (str against bytes), bytes on a missing .read."""
    with pytest.raises(TypeError, match=rf"a file opened in binary mode .* got {kind}"):
        read_ranks(source)  # type: ignore[arg-type]


def test_a_comment_line_before_the_header_is_named() -> None:
    """It had been read as a header of one column: "line 2: expected 1 fields"."""
    with pytest.raises(RankFileError, match=r"line 2: comment lines are not read; the first line"):
        read_ranks(io.BytesIO(b"\n# ranks of model x\nrank,num_candidates\n1,5\n"))


def test_nulls_in_parquet_are_refused_only_where_a_number_is_read(tmp_path: Path) -> None:
    """A null in a column of labels had refused the whole table; in a text file an empty field
    there is an empty label. Ranks, counts and weights still must not be null."""
    pytest.importorskip("pyarrow.parquet")
    import pyarrow
    import pyarrow.parquet

    path = tmp_path / "r.parquet"
    pyarrow.parquet.write_table(
        pyarrow.table(
            {
                "rank": [1, 2, 3],
                "num_candidates": [5, 5, 5],
                "rel": ["a", None, "a"],
                "rid": pyarrow.array([3, None, 4], pyarrow.int64()),
            }
        ),
        path,
    )
    data = read_ranks(path)
    assert data.columns["rel"].tolist() == ["a", "", "a"]
    assert data.columns["rid"].tolist() == ["3", "", "4"]
    text = tmp_path / "r.csv"
    text.write_text("rank,num_candidates,rel,rid\n1,5,a,3\n2,5,,\n3,5,a,4\n")
    assert read_ranks(text).columns["rel"].tolist() == ["a", "", "a"]
    for name, values in (
        ("rank", [1.0, None]),
        ("num_candidates", [5, None]),
        ("weight", [1.0, None]),
    ):
        columns = {"rank": [1.0, 2.0], "num_candidates": [5, 5], name: pyarrow.array(values)}
        pyarrow.parquet.write_table(pyarrow.table(columns), path)
        with pytest.raises(RankFileError, match=rf"row 2: {name} is missing \(null\)"):
            read_ranks(path)


def test_pykeen_layout_reads_every_array(tmp_path: Path) -> None:
    """An array of no side and rank type (a weight per task) or the counts of some sides only
    had been dropped without a word; both are refused, naming them."""
    ranks = {"head.realistic": [1.0, 2.0], "tail.realistic": [3.0]}
    counts = {"num_candidates.head": [10, 10], "num_candidates.tail": [10]}
    path = tmp_path / "extra.npz"
    np.savez(path, **ranks, **counts, weight=[0.0, 1.0, 1.0])
    with pytest.raises(RankFileError, match=r"the arrays 'weight' belong to no side and rank"):
        read_ranks(path)
    np.savez(path, **ranks, **{"num_candidates.head": [10, 10]})
    with pytest.raises(RankFileError, match=r"num_candidates.head but not num_candidates.tail"):
        read_ranks(path)
    np.savez(path, **ranks, **counts)
    assert read_ranks(path).num_candidates is not None


def test_parquet_is_read_through_arrow_files(tmp_path: Path) -> None:
    """A Parquet file handed to pyarrow as a Python file object aborted the interpreter at exit
    now and then (apache/arrow#33975): it is read by its path; run in fresh interpreters."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "ranks.parquet"
    pq.write_table(pa.table({"rank": [1, 2, 3], "num_candidates": [5, 5, 5]}), path)
    script = f"from rankstats.io import read_ranks; read_ranks({str(path)!r})"
    codes = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, check=False).returncode
        for _ in range(6)
    ]
    assert codes == [0] * 6

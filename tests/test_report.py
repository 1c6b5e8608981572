"""Tests of rankstats.evaluation.report: every format holds the same numbers as the results."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from rankstats import AdjustedHitsAtK, HitsAtK, InverseHarmonicMeanRank, ZHitsAtK, evaluate
from rankstats.evaluation.report import FIELDS, metric_label, records, render_json, tabulate
from rankstats.evaluation.results import EvaluationResults

RANKS = {"optimistic": [1, 2, 3, 1, 7], "pessimistic": [1, 4, 3, 2, 7]}
CANDIDATES = [5, 5, 9, 6, 9]
GROUPS = np.array(
    [("r1", "head"), ("r2", "tail"), ("r1", "tail"), ("r2", "tail"), ("r1", "head")],
    dtype=[("relation", "U2"), ("side", "U4")],
)


@pytest.fixture
def results() -> EvaluationResults:
    return evaluate(RANKS, CANDIDATES, metrics=["mrr", "hits@3", "amri"], groups=GROUPS)


def test_records_hold_every_row_and_group(results: EvaluationResults) -> None:
    found = records(results, groups=True, group_names=["relation", "side"])
    assert len(found) == len(results) + sum(len(g) for g in results.by_group.values())
    assert all(list(r) == ["relation", "side", *FIELDS[1:]] for r in found)
    overall = [r for r in found if r["relation"] is None]
    assert [r["metric"] for r in overall] == [row.metric.key for row in results.rows]
    # a group column named 'side' replaces the results' own (which is just 'both')
    assert "side" in found[0]
    assert {r["side"] for r in overall} == {None}
    for record in found:
        source = (
            results
            if record["relation"] is None
            else results.by_group[(record["relation"], record["side"])]
        )
        row = source.row(f"{record['rank_type']}.{record['metric']}")
        assert record["value"] == row.value or (
            math.isnan(record["value"]) and math.isnan(row.value)
        )
        assert record["expected_value"] == row.expected_value
        assert record["z_score"] == row.z_score
        assert record["method"] == row.method


def test_plain_table_is_str_and_always_names_the_rank_type() -> None:
    single = evaluate([1, 2, 4], [5, 5, 5], metrics=["mrr"])
    text = str(single)
    assert text == single.to_table()
    header, line = text.splitlines()
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
    assert line.split()[:3] == ["both", "realistic", "inverse_harmonic_mean_rank"]
    assert float(line.split()[3]) == pytest.approx(InverseHarmonicMeanRank()([1, 2, 4]), rel=1e-5)


def test_grouped_table_labels_the_overall_rows(results: EvaluationResults) -> None:
    lines = results.to_table(groups=True, group_names=["relation", "side"]).splitlines()
    assert lines[0].split()[:4] == ["relation", "side", "rank", "type"]
    assert lines[1].startswith("(all)")
    assert lines[-1] == f"(micro average over {len(results.by_group)} groups)"


def test_csv_and_json_parse_back_to_the_records(results: EvaluationResults) -> None:
    options = {"groups": True, "group_names": ["relation", "side"]}
    found = records(results, **options)  # type: ignore[arg-type]
    parsed = list(csv.DictReader(io.StringIO(results.to_csv(**options))))  # type: ignore[arg-type]
    assert len(parsed) == len(found)
    for row, record in zip(parsed, found, strict=True):
        for key, value in record.items():
            if isinstance(value, float) and not math.isnan(value):
                assert float(row[key]) == value  # repr round-trips exactly
            elif value is None:
                assert row[key] == ""
    assert json.loads(render_json(results, **options)) == found  # type: ignore[arg-type]


def test_monte_carlo_rows_show_their_standard_error_and_the_samples() -> None:
    weights = [1.0, 2.0, 1.0, 3.0, 1.0]
    sampled = evaluate(
        [1, 2, 3, 1, 7], CANDIDATES, metrics=["median"], weights=weights, num_samples=500, seed=3
    )
    row = sampled.rows[0]
    assert row.method == "monte-carlo"
    text = str(sampled)
    assert text.splitlines()[0].split()[-1] == "s.e."
    assert "Monte-Carlo estimates from 500 null samples, seed 3" in text
    assert f"{row.standard_error:.6g}" in text.splitlines()[1]
    assert "s.e." in sampled.to_markdown()
    assert "s.e." in sampled.to_latex()


def test_notes_are_footnotes() -> None:
    undefined = evaluate([1, 1], [1, 1], metrics=["amri"])
    (row,) = undefined.rows
    assert row.note
    for text in (str(undefined), undefined.to_markdown(), undefined.to_latex()):
        assert row.note.split(":")[0] in text
    assert "[1]" in str(undefined).splitlines()[1]
    assert r"\textsuperscript{1}" in undefined.to_latex()


def test_latex_is_booktabs_and_escaped() -> None:
    latex = evaluate([1, 3], [4, 4], metrics=["mrr", "hits@10"]).to_latex(
        caption="MRR & Hits@10 of 50% models", label="tab:ranks"
    )
    lines = latex.splitlines()
    assert lines[0] == r"\begin{table}[ht]"
    assert r"\caption{MRR \& Hits@10 of 50\% models}" in lines
    assert r"\label{tab:ranks}" in lines
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"\begin{tabular}{lllrrrr}" in lines
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    assert body[0].startswith("both & realistic & MRR & $0.6667$")
    assert body[1].startswith("both & realistic & Hits@10 & $1$ & $1$ & $0$ & --")
    assert all(line.endswith(r" \\") for line in body)


def test_markdown_alignment_row_matches_the_header() -> None:
    markdown = evaluate([1, 3], [4, 4], metrics=["mrr"]).to_markdown(digits=3)
    header, rule, row = markdown.splitlines()
    assert header.count("|") == rule.count("|") == row.count("|")
    assert rule.count("---:") == 4
    assert "| 0.667 |" in row


def test_metric_labels_carry_the_real_cutoff() -> None:
    assert metric_label(HitsAtK(k=7)) == "Hits@7"
    assert metric_label(AdjustedHitsAtK(k=10)) == "Adjusted Hits@10"
    assert metric_label(ZHitsAtK(k=3), short=True) == "z-Hits@3"
    assert metric_label(InverseHarmonicMeanRank()) == "Mean Reciprocal Rank (MRR)"


def test_clashing_group_names_are_refused(results: EvaluationResults) -> None:
    with pytest.raises(ValueError, match="group column 'metric' has the name of a results column"):
        records(results, groups=True, group_names=["metric", "x"])
    with pytest.raises(ValueError, match="group_names has 3 names"):
        records(results, groups=True, group_names=["relation", "side", "x"])
    sides = evaluate(
        {"head": [1, 2], "tail": [3, 1]},
        {"head": [4, 4], "tail": [4, 4]},
        metrics=["mrr"],
        groups={"head": ["a", "b"], "tail": ["a", "b"]},
    )
    with pytest.raises(ValueError, match="sides of their own"):
        records(sides, groups=True, group_names=["side"])


def test_tabulate_formats() -> None:
    rows = [{"key": "mrr", "x": 0.5, "ok": True, "names": ["a", "b"]}, {"key": "mr", "x": None}]
    columns = ["key", "x", "ok", "names"]
    assert tabulate(rows, columns).splitlines() == [
        "key    x  ok   names",
        "---  ---  ---  -----",
        "mrr  0.5  yes  a, b",
        "mr     -  -    -",
    ]
    assert tabulate(rows, columns, "csv").splitlines()[1:] == ["mrr,0.5,True,a;b", "mr,,,"]
    assert json.loads(tabulate(rows, columns, "json"))[1] == dict.fromkeys(columns[1:], None) | {
        "key": "mr"
    }
    with pytest.raises(ValueError, match="format must be"):
        tabulate(rows, columns, "xml")


def test_markdown_cells_escape_pipes_and_line_breaks() -> None:
    """A group label with ``|`` or a line break stays in its cell of the pipe table."""
    results = evaluate([1, 2, 3, 4], 5, groups=["a|b", "a|b", "c\nd", "e"], metrics=["mrr"])
    table = results.to_markdown(groups=True)
    rows = [line for line in table.splitlines() if line.startswith("|")]
    cells = {len(line.replace("\\|", "").split("|")) for line in rows}
    assert len(cells) == 1  # every row has the header's number of cells
    assert "| a\\|b |" in table
    assert "| c d |" in table
    for digits in (0, -1):
        with pytest.raises(ValueError, match=r"digits must be a positive integer, got"):
            results.to_markdown(digits=digits)
        with pytest.raises(ValueError, match=r"digits must be a positive integer, got"):
            results.to_latex(digits=digits)


def test_group_names_must_be_distinct_in_every_output() -> None:
    """A name given twice would keep one part of each label only: refused by every writer."""
    results = evaluate([1, 2, 3, 4], 5, groups=[("r", "h"), ("r", "t"), ("s", "h"), ("s", "t")])
    for write in (results.to_csv, results.to_markdown, results.to_latex):
        with pytest.raises(ValueError, match=r"group_names must be distinct .* 'a' more than"):
            write(groups=True, group_names=["a", "a"])


def test_json_refuses_group_labels_that_print_alike() -> None:
    """JSON keys are strings: 1 and '1' would be one key, one group's results lost."""
    results = evaluate([1, 2, 4, 1], [5] * 4, metrics=["mrr"], groups=["1", 1, "1", 1])
    assert len(results.by_group) == 2
    with pytest.raises(ValueError, match=r"the group labels .* are both '1' as JSON keys"):
        results.to_json()
    assert results.to_csv(groups=True).count("\n") == 1 + 3  # header, overall row, both groups


def test_latex_lines_after_a_break_cannot_start_its_argument() -> None:
    r"""``\\`` reads a following ``[`` as its optional length and ``*`` as its star: a note
    ``[1] ...`` and a group ``[CLS]`` had made the table fail to compile ("Illegal unit")."""
    results = evaluate(
        np.array([1, 2, 3, 4]),
        [5, 5, 5, 5],
        metrics=["median_rank"],
        weights=[1, 2, 1, 1],
        groups=["[CLS]", "*x", "[CLS]", "*x"],
    )
    latex = results.to_latex(groups=True)
    lines = latex.splitlines()
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    assert sorted(line.split(" & ")[0] for line in body) == ["(all)", "{}*x", "{}[CLS]"]
    assert r" \\ {}[1] no closed-form" in latex
    # nothing else that follows a break starts with [ or *
    after = [part.lstrip() for part in latex.replace("\n", " ").split("\\\\")[1:]]
    assert not any(part.startswith(("[", "*")) for part in after)


def test_csv_refuses_a_group_labelled_like_the_overall_rows() -> None:
    """The overall rows' group cells are empty in CSV: a group labelled '' would read as them."""
    results = evaluate([1, 2, 3, 4], [5] * 4, metrics=["mrr"], groups=["", "", "a", "a"])
    with pytest.raises(ValueError, match=r"the group label '' would be written as empty cells"):
        results.to_csv(groups=True)
    assert results.to_csv().count("\n") == 2  # without the groups' rows there is no clash
    records_ = json.loads(render_json(results, groups=True))
    assert [record["group"] for record in records_] == [None, "", "a"]
    # a tuple label clashes only where every part is empty
    pairs = [("", ""), ("", ""), ("", 1), ("", 1)]
    tupled = evaluate([1, 2, 3, 4], [5] * 4, metrics=["mrr"], groups=pairs)
    with pytest.raises(ValueError, match=r"the group label \('', ''\) would be written"):
        tupled.to_csv(groups=True)
    two = evaluate([1, 2, 3, 4], [5] * 4, metrics=["mrr"], groups=pairs[2:] * 2)
    rows = list(csv.reader(io.StringIO(two.to_csv(groups=True))))
    assert [row[:2] for row in rows[1:]] == [["", ""], ["", "1"]]

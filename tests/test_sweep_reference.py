"""A seeded sample of the accuracy sweep (``benchmarks/sweep_accuracy.py``), enforced at 1e-12.

Every registered metric with a closed form is compared, on each input, with references computed
in mpmath independently of rankstats (``benchmarks/sweep_reference.py``): ``expected_value``,
``variance`` and ``moments``, the values of the derived metrics (and their bases) on drawn ranks,
a ``ValueError`` where a derived metric is undefined, and no warning anywhere. The inputs are the
sweep's fixed edge cases (C = 1 and 2, counts (1, 1e12), expected values within 1e-3..1e-12 of
the best, Hits@k with counts at k and k + 1, ...) and seeded random cases over n up to 1e6,
counts up to 1e12 and every kind of weights, and inputs with an exact median law (n up to 60,
up to 12 distinct counts, even and odd n). The reciprocal-of-mean metrics (IAMR, HMR), whose
references are slow quadratures, are checked on a few of them. The unweighted inputs are also
evaluated as the groups of one grouped ``evaluate``, whose vectorised null moments are checked
against the same references.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mpmath as mp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import sweep_accuracy as sweep
import sweep_reference as reference
from rankstats import HarmonicMeanRank, InverseArithmeticMeanRank

SLOW = {"HarmonicMeanRank", "InverseArithmeticMeanRank"}


def _fast_metrics(k: int) -> list:
    return [m for m in sweep.registry_metrics(k) if type(m).__name__ not in SLOW]


def _misses(case: sweep.Case, metrics: list) -> list[str]:
    return [
        f"{r.metric} {r.quantity}: {r.error:.3g} {r.note}"
        for r in sweep.check_case(case, metrics)
        if r.error > sweep.TOLERANCE
    ]


EDGES = sweep.edge_cases()
RANDOM = sweep.make_cases(seed=20261123, count=32)
#: unweighted inputs with an exact median law (n up to 60, up to 12 distinct counts)
MEDIAN = sweep.median_cases(seed=5, count=8, top=80)


@pytest.mark.parametrize("case", EDGES + RANDOM + MEDIAN, ids=lambda case: case.label)
def test_closed_forms_and_derived_values_match_the_references(case: sweep.Case) -> None:
    assert _misses(case, _fast_metrics(case.k)) == []


#: reciprocal-of-mean metrics on a few inputs (the references integrate in mpmath; the harmonic
#: one, which sums exp(-s/j) by Euler-Maclaurin at every node, on the cheaper ones)
IAMR, HMR = InverseArithmeticMeanRank(), HarmonicMeanRank()
RECIPROCAL = [
    (sweep._case("(1, 1e12) x 50", [(1, 1.0, 50), (10**12, 1.0, 50)], False, 10), [IAMR, HMR]),
    (sweep._case("weighted", [(3, 0.25, 7), (100, 4.0, 2)], True, 10), [IAMR, HMR]),
    (sweep._case("C = 2, n = 1e6", [(2, 1.0, 10**6)], False, 10), [IAMR, HMR]),
    # V / E^2 = 5e-6: a reference integrating with too few digits misses here by 1.6e-12
    (
        sweep._case(
            "C ~ 1e12, n = 7e4", [(10**12 - 452, 1.0, 23544), (10**12, 1.0, 45000)], False, 10
        ),
        [IAMR],
    ),
    # V / E^2 ~ 1e-17: the reference needs 17 more digits
    (sweep._case("weights 1e4, 1e-4", [(1, 1e4, 1), (10**4, 1e-4, 1)], True, 10), [IAMR, HMR]),
]


@pytest.mark.parametrize(("case", "metrics"), RECIPROCAL, ids=lambda x: getattr(x, "label", ""))
def test_reciprocal_of_mean_metrics_match_the_quadrature_references(
    case: sweep.Case, metrics: list
) -> None:
    assert _misses(case, metrics) == []


def _grouped_misses(cases: list[sweep.Case], keys: tuple[str, ...]) -> list[str]:
    results = list(sweep.check_grouped(cases, keys=keys))
    assert {r.metric.split()[0] for r in results} == {"grouped"}
    assert len(results) >= 2 * len(cases)
    return [
        f"{r.metric} {r.quantity} {r.case}: {r.error:.3g}"
        for r in results
        if r.error > sweep.TOLERANCE
    ]


def test_grouped_null_moments_match_the_references() -> None:
    """One grouped evaluation of unweighted edge and median cases (each a group): every
    group's null moments of the bases with vectorised group paths, against its references."""
    cases = [case for case in EDGES + MEDIAN if not case.weighted]
    fast = tuple(key for key in sweep.GROUPED if key not in ("iamr", "hmr"))
    assert _grouped_misses(cases, fast) == []


def test_weighted_grouped_null_moments_match_the_references() -> None:
    """The same for the weighted edge cases: each task at its own share of its group (the
    geometric means' and the variance's closed forms for all groups at once)."""
    cases = [case for case in EDGES if case.weighted]
    assert len(cases) >= 4
    fast = tuple(key for key in sweep.GROUPED if key not in ("iamr", "hmr"))
    assert _grouped_misses(cases, fast) == []


def test_grouped_reciprocal_moments_match_the_quadrature_references() -> None:
    """The reciprocal-of-mean metrics' grouped quadrature, on the cheaper references."""
    # (their references, computed by the test above, are kept)
    cases = [case for case, metrics in RECIPROCAL if not case.weighted and HMR in metrics]
    cases += [case for case in EDGES if case.label in ("edge:n=1,C=2", "edge:n=1,C=3")]
    assert _grouped_misses(cases, ("iamr", "hmr")) == []


def test_the_references_match_enumeration() -> None:
    """The sweep's references themselves, against every rank tuple of small cases."""
    rows = [(2, 0.5, 1), (7, 2.0, 2), (4, 1.0, 1)]
    funcs = reference.ENUMERATED_VALUES
    with mp.workdps(40):
        for key, f in funcs.items():
            mean, var = reference.base_moments(key, rows, k=3, quad_dps=30)
            want = reference.enumerate_moments(rows, f)
            assert float(mean) == pytest.approx(want[0], rel=1e-14), key
            assert float(var) == pytest.approx(want[1], rel=1e-13), key
        for median_rows in ([(3, 2), (5, 2)], [(2, 3), (4, 1)], [(4, 2), (6, 4)]):
            exact = reference._enumerated_median([c for c, m in median_rows for _ in range(m)])
            assert reference._even_small_median(median_rows) == exact
        assert reference._two_task_median(3, 5) == pytest.approx(
            reference._enumerated_median([3, 5]), rel=1e-30
        )
        assert reference._odd_single_count_median(9, 5) == pytest.approx(
            reference._enumerated_median([9] * 5), rel=1e-30
        )
        for count, n in ((7, 4), (20, 4), (9, 6)):
            assert reference._even_single_count_closed_form(count, n) == pytest.approx(
                reference._even_small_median([(count, n)]), rel=1e-25
            )
        for count, n in ((9, 5), (300, 7), (1000, 3), (40, 21)):
            assert reference._odd_single_count_power_sums(count, n) == pytest.approx(
                reference._odd_single_count_median(count, n), rel=1e-25
            )
        direct = mp.fsum(mp.exp(-mp.mpf(900) / j) for j in range(1, 3001))
        assert reference.harmonic_transform_sum(3000, mp.mpf(900)) == pytest.approx(
            direct, rel=1e-30
        )
        direct = mp.fsum(mp.mpf(j) ** mp.mpf(-0.9) for j in range(1, 5001))
        assert reference.power_sum(5000, mp.mpf(-0.9)) == pytest.approx(direct, rel=1e-30)

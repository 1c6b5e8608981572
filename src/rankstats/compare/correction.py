r"""Corrections of p-values for multiple comparisons.

Comparing :math:`m` models makes :math:`m(m-1)/2` pairwise tests per metric; at level
:math:`\alpha` each, some will come out significant by chance alone. A correction controls the
family-wise error rate (the chance of *any* false positive: Bonferroni, Holm) or the false discovery
rate (the expected fraction of false positives among the significant results: Benjamini-Hochberg,
Benjamini-Yekutieli). Holm is uniformly more powerful than Bonferroni under the same guarantee;
Benjamini-Hochberg assumes independent or positively dependent tests, Benjamini-Yekutieli holds
under any dependence.

NaN p-values (undefined statistics) are left out of the family and stay NaN.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from rankstats.arrays import FloatArray
from rankstats.validation import as_array

__all__ = ["CORRECTIONS", "Correction", "check_correction", "correct_pvalues"]

Correction = Literal["holm", "bonferroni", "bh", "by", "none"]
#: the corrections and their names in reports
CORRECTIONS: dict[str, str] = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "by": "Benjamini-Yekutieli",
    "none": "none",
}


def check_correction(value: object) -> Correction:
    """Return ``value`` if it names a correction, else raise a clear error."""
    if not isinstance(value, str) or value.lower() not in CORRECTIONS:
        raise ValueError(f"correction must be one of {list(CORRECTIONS)}, got {value!r}")
    return value.lower()  # type: ignore[return-value]


def _holm(pvalues: FloatArray) -> FloatArray:
    m = pvalues.size
    order = np.argsort(pvalues, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * pvalues[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def correct_pvalues(pvalues: npt.ArrayLike, method: Correction) -> FloatArray:
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        The family's p-values; NaN entries are left out of it.
    method : {"holm", "bonferroni", "bh", "by", "none"}
        The correction.

    Returns
    -------
    numpy.ndarray of shape (m,)
        The adjusted p-values, in the input's order.

    Examples
    --------
    >>> correct_pvalues([0.01, 0.04, 0.03], "holm").round(6).tolist()
    [0.03, 0.06, 0.06]
    >>> correct_pvalues([0.01, 0.04, 0.03], "bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    method = check_correction(method)
    values = as_array(pvalues, "pvalues") if np.size(pvalues) else np.zeros(0)
    if np.ndim(pvalues) > 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {np.shape(pvalues)}")
    values = values.astype(np.float64, copy=False)
    valid = ~np.isnan(values)
    outside = valid & ~((values >= 0.0) & (values <= 1.0))
    if outside.any():
        bad = float(values[outside][0])
        raise ValueError(f"pvalues must lie in [0, 1] (or be NaN, left out), got {bad!r}")
    result = np.full(values.shape, np.nan)
    family = values[valid]
    if family.size == 0:
        return result
    if method == "none":
        adjusted = family
    elif method == "bonferroni":
        adjusted = np.minimum(family * family.size, 1.0)
    elif method == "holm":
        adjusted = _holm(family)
    else:
        adjusted = stats.false_discovery_control(family, method=method)
    result[valid] = adjusted
    return result

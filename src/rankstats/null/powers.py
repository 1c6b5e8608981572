r"""Power moments of a uniform rank and the null moments of the geometric mean rank.

For :math:`r` uniform on :math:`\{1, \dots, C\}` the moments of :math:`r^p` are power sums,

.. math:: \mathbb{E}[r^p] = \frac{S_p(C)}{C}, \qquad S_p(C) = \sum_{j=1}^{C} j^p = H_{-p}(C),

and the geometric mean rank :math:`G = \prod_i r_i^{a_i}` of independent ranks has
:math:`\mathbb{E}[G] = \prod_i \mathbb{E}[r_i^{a_i}]`. Everything is therefore written in terms of
the cumulant generating function of :math:`\ln r`,

.. math:: K_C(p) = \ln \mathbb{E}[r^p],

and of the dispersion :math:`D_C(p) = K_C(2p) - 2 K_C(p) = \ln(1 + \mathbb{V}[r^p] /
\mathbb{E}[r^p]^2)`, each computed to near double precision *relative to its own size*, also for
the tiny exponents :math:`p = 1/n` of an unweighted mean over millions of ranks.

Derivation
----------
Euler-Maclaurin summation of :math:`j^p` gives, for every real :math:`p \ne -1`, the asymptotic
expansion

.. math::

    S_p(C) = \zeta(-p) + \frac{C^{p+1}}{p+1} + \frac{C^p}{2}
        + \sum_{k \ge 1} \frac{B_{2k}}{(2k)!} F_k(p)\, C^{p-2k+1},
    \qquad F_k(p) = p (p-1) \cdots (p-2k+2),

whose constant is the Riemann zeta function (the Hurwitz remainder vanishes as
:math:`C \to \infty`). The pole of :math:`\zeta(-p)` at :math:`p = -1` cancels the one of
:math:`C^{p+1}/(p+1)`; the entire function :math:`E(p) = \zeta(-p) + 1/(1+p)` is stored as its
Taylor series at 0 (27 coefficients, accurate to :math:`10^{-19}` on :math:`[-2, 2]`). Six
Bernoulli terms leave a remainder below :math:`10^{-17}` relative for :math:`C > 16` and
:math:`|p| \le 2`; smaller :math:`C` are summed directly.

Dividing by the leading term gives the form used for :math:`p \ge -3/4`:

.. math::

    K_C(p) = p \ln C - \ln(1 + p) + \ln(1 + \varepsilon_C(p)), \qquad
    \varepsilon_C(p) = \frac{1}{C} \Big[ -\frac{C^{-p} - 1}{2} + C^{-p} P(p) + \frac{p}{2}
        + (p+1) \sum_{k \ge 1} \frac{B_{2k}}{(2k)!} F_k(p)\, C^{1-2k} \Big],

with :math:`P(p) = (p+1)\zeta(-p) + 1/2 = \sum_{m \ge 1} P_m p^m`. Every term of
:math:`\varepsilon` carries an explicit factor :math:`p`, so :math:`K` keeps its relative
accuracy as :math:`p \to 0` (``expm1`` gives :math:`C^{-p} - 1`). The large-:math:`C` law of
:math:`\ln r` is :math:`\ln C + \ln U` with :math:`-\ln U` standard exponential, whose cumulant
generating function is :math:`-\ln(1 + p)`; :math:`\varepsilon = O(p \ln C / C)` is the
correction. Hence

.. math::

    D_C(p) = \ln\Big(1 + \frac{p^2}{1 + 2p}\Big)
        + \big[\varepsilon(2p) - 2\varepsilon(p)\big]
        + \big[\ell(\varepsilon(2p)) - 2 \ell(\varepsilon(p))\big],
    \qquad \ell(e) = \ln(1 + e) - e,

where the :math:`\ln C` terms have cancelled exactly and
:math:`\varepsilon(2p) - 2\varepsilon(p)` is expanded term by term so that its :math:`O(p)` parts
cancel analytically (:math:`(C^{-2p} - 1) - 2(C^{-p} - 1) = (C^{-p} - 1)^2`, and
:math:`P(2p) - 2P(p) = \sum_{m \ge 2} (2^m - 2) P_m p^m`). Every piece is :math:`O(p^2)` and
computed to full relative precision, so :math:`D \approx p^2 \mathbb{V}[\ln r]` never cancels.

For :math:`p < -3/4` (:math:`\mathbb{E}[r^p]` small), :math:`K = \ln(S_p(C)/C)` from
:math:`S_p(C) = E(p) + (C^{p+1} - 1)/(p+1) + \dots`, written with ``expm1`` so that
:math:`p = -1` gives :math:`H(C)`; :math:`D(p)` for :math:`p < -3/8` is :math:`K(2p) - 2K(p)`,
which loses at most two digits there. For :math:`C \le 16`,
:math:`K = \ln(1 + \frac{1}{C}\sum_j \mathrm{expm1}(p \ln j))` and
:math:`D = \ln(1 + \frac{1}{C}\sum_j (j^p - \mathbb{E}[r^p])^2 / \mathbb{E}[r^p]^2)`.
"""

from __future__ import annotations

import math
import weakref
from typing import Literal

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray
from rankstats.null.tasks import Tasks

__all__ = [
    "geometric_mean_log_moments",
    "geometric_mean_log_moments_of",
    "geometric_mean_moments",
    "log_moment_terms",
    "log_power_moment",
    "log_power_moment_dispersion",
]


#: Numbers of candidates up to this are summed directly.
_DIRECT_MAX = 16

#: Block length for the sums in geometric_mean_moments.
_BLOCK = 1 << 14

#: The largest |p| for which K_C(p) is available (and |p| <= 1 for D_C(p), which needs K(2p)).
_P_MAX = 2.0

#: Taylor coefficients e_0, e_1, ... of E(p) = zeta(-p) + 1 / (1 + p) at p = 0 (mpmath, 50 digits).
_E_COEFFICIENTS = np.array(
    [
        0.5,
        -0.08106146679532726,
        -0.0031782279542924255,
        0.000785194477042408,
        0.00012070049942883505,
        1.940896320456038e-06,
        -1.3011460139596242e-06,
        -1.6861582638922007e-07,
        -5.764675979949394e-09,
        9.110164892314166e-10,
        1.4970075941901138e-10,
        9.406895665666177e-12,
        -4.092582630415831e-14,
        -6.539904805891015e-14,
        -6.54396874989192e-15,
        -3.0124248713667866e-16,
        3.988894706311055e-18,
        1.858215043378503e-18,
        1.602885638529224e-19,
        7.115582739216006e-21,
        7.930311915096389e-24,
        -2.6558642186988446e-23,
        -2.39515544093665e-24,
        -1.180327883917824e-25,
        -2.2955846859138454e-27,
        1.7456982436068651e-28,
        2.1331671504392736e-29,
    ]
)

#: Coefficients of P(p) = p / 2 + (p + 1) (E(p) - 1/2) = (p + 1) zeta(-p) + 1/2; P_0 = 0.
_P_COEFFICIENTS = np.concatenate(([0.0], _E_COEFFICIENTS[1:] + np.r_[0.5, _E_COEFFICIENTS[1:-1]]))

#: Coefficients of P(2p) - 2 P(p).
_P_DOUBLING = np.asarray(
    (2.0 ** np.arange(_P_COEFFICIENTS.size) - 2.0) * _P_COEFFICIENTS, dtype=np.float64
)

#: B_2k / (2k)! for k = 1..6.
_BERNOULLI_OVER_FACTORIAL = np.array(
    [
        b / math.factorial(2 * k)
        for k, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730), 1)
    ]
)


def _doubling_polynomials() -> list[npt.NDArray[np.float64]]:
    """Return, per k, the coefficients of 2p [T_k(2p) - T_k(p)] with T_k = (p + 1) F_k(p) / p."""
    result = []
    for k in range(1, _BERNOULLI_OVER_FACTORIAL.size + 1):
        roots = [-1.0] + [float(i) for i in range(1, 2 * k - 1)]
        t = np.polynomial.polynomial.polyfromroots(roots)  # increasing powers
        doubled = (2.0 ** np.arange(t.size) - 1.0) * t  # T(2p) - T(p); constant term 0
        result.append(np.concatenate(([0.0], 2.0 * doubled)))
    return result


_EM_DOUBLING = _doubling_polynomials()


def _horner(coefficients: FloatArray, p: FloatArray, p_max: float) -> FloatArray:
    """Evaluate sum_m c_m p^m, dropping the high terms that cannot matter for |p| <= p_max."""
    # The dropped terms together stay below 1e-18 of the largest non-constant term.
    sizes = np.abs(coefficients[1:]) * p_max ** np.arange(1, coefficients.size)
    tails = np.cumsum(sizes[::-1])[::-1]  # tails[m - 1] = sum of the sizes from degree m up
    keep = tails > 1e-18 * sizes.max()
    degree = int(np.flatnonzero(keep)[-1]) + 1 if keep.any() else 1
    value = np.full_like(p, coefficients[degree])
    for m in range(degree - 1, -1, -1):
        value = value * p + coefficients[m]
    return value


def _log1pmx(e: FloatArray) -> FloatArray:
    """Return ln(1 + e) - e to full relative precision (e > -1)."""
    e_max = float(np.max(np.abs(e))) if e.size else 0.0
    if e_max > 0.25:
        small = np.abs(e) <= 0.25
        el = np.where(small, 0.0, e)
        return np.where(small, _log1pmx(np.where(small, e, 0.0)), np.log1p(el) - el)
    # ln(1 + e) = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...) with z = e / (2 + e), |z| <= 1/7,
    # and 2z - e = -e^2 / (2 + e). Keep the terms z^(2m) / (2m + 3) above 1e-17.
    z = e / (2.0 + e)
    z2 = z * z
    z_max = e_max / (2.0 - e_max)
    terms = 0 if z_max < 1e-9 else math.ceil(-17.0 / math.log10(z_max * z_max))
    series = np.full_like(z2, 1.0 / (2 * terms + 3))
    for m in range(terms - 1, -1, -1):
        series = series * z2 + 1.0 / (2 * m + 3)
    return -e * e / (2.0 + e) + 2.0 * z * z2 * series


def _em_sum(
    p: FloatArray, inv2: FloatArray, polynomials: list[npt.NDArray[np.float64]] | None = None
) -> FloatArray:
    """Return sum_k B_2k/(2k)! c_k(p) inv2^(k-1), c_k = F_k (or the given polynomials)."""
    terms: list[FloatArray] = []
    if polynomials is None:
        falling = p
        for k in range(1, _BERNOULLI_OVER_FACTORIAL.size + 1):
            if k > 1:
                falling = falling * (p - (2 * k - 3)) * (p - (2 * k - 2))
            terms.append(_BERNOULLI_OVER_FACTORIAL[k - 1] * falling)
    else:
        for k, poly in enumerate(polynomials, 1):
            value = np.zeros_like(p)
            for coefficient in poly[::-1]:
                value = value * p + coefficient
            terms.append(_BERNOULLI_OVER_FACTORIAL[k - 1] * value)
    total = terms[-1]
    for term in terms[-2::-1]:
        total = total * inv2 + term
    return total


def _epsilon(p: FloatArray, x: FloatArray, em: FloatArray, p_max: float) -> FloatArray:
    """Return epsilon_C(p) for x = 1/C and em = C^-p - 1."""
    bracket = (
        -0.5 * em
        + (1.0 + em) * _horner(_P_COEFFICIENTS, p, p_max)
        + 0.5 * p
        + (p + 1.0) * x * _em_sum(p, x * x)
    )
    return x * bracket


def _large_log_moment(
    lnc: FloatArray, x: FloatArray, p: FloatArray, p_max: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return K_C(p), C^-p - 1 and epsilon_C(p) for C > 16 and -3/4 <= p <= 2 (x = 1/C)."""
    t = p * lnc
    em = np.expm1(-t)
    eps = _epsilon(p, x, em, p_max)
    return t - np.log1p(p) + np.log1p(eps), em, eps


def _large_log_moment_negative(lnc: FloatArray, x: FloatArray, p: FloatArray) -> FloatArray:
    """Return K_C(p) for C > 16 and -2 <= p < -3/4, given ln C and x = 1/C."""
    q = p + 1.0
    q_safe = np.where(q == 0.0, 1.0, q)
    integral = np.where(q == 0.0, lnc, np.expm1(q * lnc) / q_safe)  # (C^(p+1) - 1) / (p + 1)
    power_sum = (
        _horner(_E_COEFFICIENTS, p, _P_MAX)
        + integral
        + np.exp(p * lnc) * (0.5 + x * _em_sum(p, x * x))
    )
    return np.log(power_sum * x)


def _large_dispersion(
    x: FloatArray, p: FloatArray, p_max: float, em1: FloatArray, eps1: FloatArray
) -> FloatArray:
    """Return D_C(p) for C > 16 and -3/8 <= p <= 1 (x = 1/C, em1 = C^-p - 1, eps1 = eps_C(p))."""
    # eps(2p) - 2 eps(p), term by term with the O(p) parts cancelled analytically.
    zeta_part = em1 * _horner(_P_COEFFICIENTS, 2.0 * p, 2.0 * p_max) + _horner(
        _P_DOUBLING, p, p_max
    )
    bernoulli_part = x * _em_sum(p, x * x, _EM_DOUBLING)
    delta = x * (-0.5 * em1 * em1 + (1.0 + em1) * zeta_part + bernoulli_part)
    eps2 = 2.0 * eps1 + delta
    return np.log1p(p * p / (1.0 + 2.0 * p)) + delta + (_log1pmx(eps2) - 2.0 * _log1pmx(eps1))


def _direct(c: FloatArray, p: FloatArray, need_d: bool) -> tuple[FloatArray, FloatArray | None]:
    """Return K_C(p) and (if asked) D_C(p) by direct summation, for C <= 16."""
    logs = [math.log(j) for j in range(2, _DIRECT_MAX + 1)]
    sum_expm1 = np.zeros(np.broadcast_shapes(c.shape, p.shape))
    sum_power = np.ones_like(sum_expm1)  # j = 1
    terms = []
    for j, log_j in enumerate(logs, 2):
        inside = c >= j
        e = np.where(inside, np.expm1(p * log_j), 0.0)
        terms.append((inside, e))
        sum_expm1 += e
        sum_power += np.where(inside, np.exp(p * log_j), 0.0)
    u = sum_expm1 / c  # E[r^p] - 1
    close = u >= -0.5
    mean = np.where(close, 1.0 + u, sum_power / c)  # E[r^p]
    k = np.where(close, np.log1p(np.where(close, u, 0.0)), np.log(mean))
    if not need_d:
        return k, None
    sum_squares = u * u  # j = 1
    for inside, e in terms:
        sum_squares += np.where(inside, (e - u) ** 2, 0.0)
    return k, np.log1p(sum_squares / c / (mean * mean))


def _evaluate(
    C: npt.ArrayLike, p: npt.ArrayLike, need_k: bool, need_d: bool
) -> tuple[FloatArray, FloatArray, tuple[int, ...]]:
    """Return flat K_C(p) and D_C(p) (empty when not needed) and the broadcast shape."""
    c = np.asarray(C, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    shape = np.broadcast_shapes(c.shape, p.shape)
    limit = _P_MAX if not need_d else _P_MAX / 2
    p_max = float(np.max(np.abs(p))) if p.size else 0.0
    if not p_max <= limit:  # also catches NaN
        what = "K_C(p)" if not need_d else "D_C(p)"
        raise ValueError(
            f"{what} needs finite exponents with |p| <= {limit:g}, got max |p| = {p_max!r}"
        )
    cf = np.broadcast_to(c, shape).ravel()
    pf = p if p.ndim == 0 else np.broadcast_to(p, shape).ravel()
    k = np.empty(cf.size) if need_k else np.empty(0)
    d = np.empty(cf.size) if need_d else np.empty(0)

    def pick(a: FloatArray, index: slice | npt.NDArray[np.bool_]) -> FloatArray:
        return a if a.ndim == 0 else a[index]

    def where(mask: npt.NDArray[np.bool_]) -> slice | npt.NDArray[np.bool_]:
        return slice(None) if mask.all() else mask

    small = cf <= _DIRECT_MAX
    if small.any():
        index = where(small)
        k_small, d_small = _direct(cf[index], pick(pf, index), need_d)
        if need_k:
            k[index] = k_small
        if need_d and d_small is not None:
            d[index] = d_small
    large = ~small
    if not large.any():
        return k, d, shape
    index = where(large)
    cl, pl = cf[index], pick(pf, index)
    lnc, x = np.log(cl), 1.0 / cl
    kl, em, eps = np.empty(cl.size), np.empty(cl.size), np.empty(cl.size)
    positive = np.broadcast_to(pl >= -0.75, cl.shape)
    if positive.all():
        kl, em, eps = _large_log_moment(lnc, x, pl, p_max)
    else:
        sub = where(positive)
        if positive.any():
            kl[sub], em[sub], eps[sub] = _large_log_moment(lnc[sub], x[sub], pick(pl, sub), p_max)
        low = ~positive
        kl[low] = _large_log_moment_negative(lnc[low], x[low], pick(pl, low))
    if need_k:
        k[index] = kl
    if need_d:
        central = np.broadcast_to(pl >= -0.375, cl.shape)
        if central.all():
            dl = _large_dispersion(x, pl, p_max, em, eps)
        else:
            dl = np.empty(cl.size)
            sub = where(central)
            if central.any():
                dl[sub] = _large_dispersion(x[sub], pick(pl, sub), p_max, em[sub], eps[sub])
            low = ~central
            k2 = _large_log_moment_negative(lnc[low], x[low], 2.0 * pick(pl, low))
            dl[low] = k2 - 2.0 * kl[low]
        d[index] = dl
    return k, d, shape


def log_power_moment(C: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    r"""Return :math:`K_C(p) = \ln \mathbb{E}[r^p]` for :math:`r` uniform on :math:`\{1..C\}`.

    .. math:: K_C(p) = \ln \frac{1}{C} \sum_{j=1}^{C} j^p

    Parameters
    ----------
    C : array-like of int
        The numbers of candidates, :math:`C \ge 1` (up to :math:`10^{12}`).
    p : array-like of float
        The exponents, :math:`|p| \le 2`, broadcast against ``C``.

    Returns
    -------
    numpy.ndarray of float64
        :math:`K_C(p)`, of the broadcast shape; :math:`K_1(p) = K_C(0) = 0` exactly.

    Raises
    ------
    ValueError
        If some :math:`|p| > 2` or is not finite.

    Notes
    -----
    :math:`K_C` is the cumulant generating function of :math:`\ln r`:
    :math:`K_C(p) = p\,\mathbb{E}[\ln r] + \frac{p^2}{2} \mathbb{V}[\ln r] + \dots`. It is computed
    to a relative error (relative to :math:`|K_C(p)|`) below :math:`10^{-15}` on
    :math:`C \in [1, 10^{12}]`, :math:`10^{-9} \le |p| \le 2` (largest seen against 40-digit
    ``mpmath``: :math:`6 \cdot 10^{-16}`); see the module docstring for the expansion and
    ``tests/test_powers.py`` for the check.

    Examples
    --------
    >>> np.exp(log_power_moment([1, 3], 1.0)).round(12).tolist()  # E[r] = (C + 1) / 2
    [1.0, 2.0]
    >>> round(float(log_power_moment(10**9, 1e-9) / 1e-9), 9)  # ~ E[ln r] = ln(C!) / C
    19.723265849
    """
    k, _, shape = _evaluate(C, p, need_k=True, need_d=False)
    return k.reshape(shape)


def log_power_moment_dispersion(C: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    r"""Return :math:`D_C(p) = K_C(2p) - 2 K_C(p)` for :math:`r` uniform on :math:`\{1..C\}`.

    .. math::

        D_C(p) = \ln \frac{\mathbb{E}[r^{2p}]}{\mathbb{E}[r^p]^2}
            = \ln\Big(1 + \frac{\mathbb{V}[r^p]}{\mathbb{E}[r^p]^2}\Big)

    Parameters
    ----------
    C : array-like of int
        The numbers of candidates, :math:`C \ge 1` (up to :math:`10^{12}`).
    p : array-like of float
        The exponents, :math:`|p| \le 1`, broadcast against ``C``.

    Returns
    -------
    numpy.ndarray of float64
        :math:`D_C(p) \ge 0`, of the broadcast shape.

    Raises
    ------
    ValueError
        If some :math:`|p| > 1` or is not finite.

    Notes
    -----
    For small :math:`p`, :math:`D_C(p) \approx p^2\, \mathbb{V}[\ln r]`, so the difference
    :math:`K_C(2p) - 2K_C(p)` of two :math:`O(p)` numbers would lose about
    :math:`-\log_{10} |p|` digits; instead the :math:`O(p)` parts are cancelled analytically (module
    docstring), which keeps the relative error below :math:`10^{-14}` for
    :math:`10^{-9} \le |p| \le 1` (largest seen: :math:`8 \cdot 10^{-15}`, for
    :math:`-1/2 < p < -3/8` at large :math:`C`, where the plain difference is used).

    Examples
    --------
    >>> round(float(log_power_moment_dispersion(2, 1.0)), 15)  # ln(E[r^2] / E[r]^2) = ln(10/9)
    0.105360515657826
    >>> round(float(log_power_moment_dispersion(10**12, 1e-7) / 1e-14), 6)  # ~ V[ln r] -> 1
    1.0
    """
    _, d, shape = _evaluate(C, p, need_k=False, need_d=True)
    return d.reshape(shape)


def geometric_mean_moments(
    C: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    sign: Literal[1, -1] = 1,
) -> tuple[float, float]:
    r"""Return the null expectation and variance of the (inverse) geometric mean rank.

    .. math::

        G = \prod_{i=1}^{n} r_i^{s a_i}, \qquad a_i = \frac{w_i}{\sum_j w_j}, \qquad
        \mathbb{E}[G] = \exp\Big(\sum_i K_{C_i}(s a_i)\Big), \qquad
        \mathbb{V}[G] = \mathbb{E}[G]^2 \Big(\exp\Big(\sum_i D_{C_i}(s a_i)\Big) - 1\Big)

    Parameters
    ----------
    C : array-like of int, shape (n,)
        The numbers of candidates, :math:`C_i \ge 1`.
    weights : array-like of float, shape (n,), optional
        Non-negative weights with a positive sum; ``None`` weighs every rank equally.
    sign : {1, -1}, default=1
        :math:`s = 1` for the geometric mean rank (GMR), :math:`s = -1` for its inverse
        (IGMR = 1 / GMR).

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[G]`.
    variance : float
        :math:`\mathbb{V}[G]`.

    Raises
    ------
    ValueError
        If ``sign`` is neither 1 nor -1.

    Notes
    -----
    The ranks are independent, so
    :math:`\mathbb{E}[G] = \prod_i \mathbb{E}[r_i^{s a_i}]` and
    :math:`\mathbb{E}[G^2] = \prod_i \mathbb{E}[r_i^{2 s a_i}]`; hence
    :math:`\ln(\mathbb{E}[G^2] / \mathbb{E}[G]^2) = \sum_i (K_{C_i}(2 s a_i) - 2 K_{C_i}(s a_i))
    = \sum_i D_{C_i}(s a_i)`. Summing the per-rank dispersions (each computed without
    cancellation) rather than subtracting the two totals :math:`\ln \mathbb{E}[G^2]` and
    :math:`2 \ln \mathbb{E}[G]`, which agree to about :math:`\log_{10} n` digits, keeps the variance
    at full precision. Without weights the terms are grouped by distinct :math:`C`
    (:func:`~rankstats.null.grouping.distinct_counts`, in :math:`O(n)` for sorted counts or a
    narrow range), so the cost follows the number of distinct values; with weights every rank has
    its own exponent and is evaluated elementwise (still vectorised).

    Examples
    --------
    >>> e, v = geometric_mean_moments([1, 2, 3, 5])
    >>> round(e, 12), round(v, 12)
    (1.640871283216, 0.104437293245)
    >>> e, v = geometric_mean_moments([2], sign=-1)  # 1/r for r in {1, 2}
    >>> e, v
    (0.75, 0.0625)
    """
    log_mean, log_dispersion = geometric_mean_log_moments(C, weights, sign)
    expectation = math.exp(log_mean)
    return expectation, expectation * expectation * math.expm1(log_dispersion)


def geometric_mean_log_moments(
    C: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    sign: Literal[1, -1] = 1,
) -> tuple[float, float]:
    r"""The logarithms behind :func:`geometric_mean_moments`, before any rounding of ``exp``.

    Returns
    -------
    log_mean : float
        :math:`\ln \mathbb{E}[G] = \sum_i K_{C_i}(s a_i)`; :math:`1 - \mathbb{E}[G]` is
        ``-expm1(log_mean)``, without cancellation.
    log_dispersion : float
        :math:`\ln(\mathbb{E}[G^2] / \mathbb{E}[G]^2) = \sum_i D_{C_i}(s a_i)`.

    Examples
    --------
    >>> log_mean, log_dispersion = geometric_mean_log_moments([2], sign=-1)
    >>> round(math.exp(log_mean), 12)
    0.75
    """
    c = np.asarray(C)
    w = None if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    return geometric_mean_log_moments_of(Tasks(c.ravel().astype(np.int64, copy=False), w), sign)


def geometric_mean_log_moments_of(tasks: Tasks, sign: Literal[1, -1] = 1) -> tuple[float, float]:
    """:func:`geometric_mean_log_moments` of tasks given as rows with multiplicities.

    Both signs are computed together, once per :class:`~rankstats.null.tasks.Tasks` object: the
    geometric mean rank and its inverse of one cell of a table share one evaluation.
    """
    if sign not in (1, -1):
        raise ValueError(f"sign must be 1 or -1, got {sign!r}")
    both = _BOTH_SIGNS.get(tasks)
    if both is None:
        both = _BOTH_SIGNS[tasks] = _log_moments_both_signs(tasks)
    return both[0] if sign == 1 else both[1]


#: the log moments of both signs of the tasks seen last (a table holds its tasks while it
#: computes their null moments)
_BOTH_SIGNS: weakref.WeakKeyDictionary[Tasks, tuple[tuple[float, float], tuple[float, float]]] = (
    weakref.WeakKeyDictionary()
)


def log_moment_terms(
    candidates: FloatArray, exponents: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    r""":math:`K_C(p)`, :math:`D_C(p)`, :math:`K_C(-p)` and :math:`D_C(-p)`, one per row.

    Both signs of each row at once, in blocks of ``_BLOCK`` rows (scratch memory bounded
    whatever the rows). The per-task terms of the geometric mean rank's log moments
    (:func:`geometric_mean_log_moments`): for one input, or for the rows of many groups at once,
    each with its own exponent.
    """
    values = np.asarray(candidates, dtype=np.float64)
    p = np.asarray(exponents, dtype=np.float64)
    out = [np.empty(values.size) for _ in range(4)]
    for start in range(0, values.size, _BLOCK):
        block = slice(start, start + _BLOCK)
        size = values[block].size
        k, d, _ = _evaluate(
            np.concatenate((values[block], values[block])),
            np.concatenate((p[block], -p[block])),
            need_k=True,
            need_d=True,
        )
        out[0][block], out[1][block] = k[:size], d[:size]
        out[2][block], out[3][block] = k[size:], d[size:]
    return out[0], out[1], out[2], out[3]


def _log_moments_both_signs(
    tasks: Tasks,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The log moments for the signs 1 and -1, each row evaluated at both exponents at once."""
    counts: FloatArray | None
    if tasks.weights is None:
        distinct, repeats = tasks.distinct()
        values = distinct.astype(np.float64)
        counts = repeats.astype(np.float64)
        exponents = np.full(values.size, 1.0 / tasks.size)
    else:
        tasks.require_each_weight("the null model of the geometric mean rank")
        values = tasks.candidates.astype(np.float64)
        exponents = tasks.weights / tasks.total_weight
        counts = None if tasks.counts is None else tasks.counts.astype(np.float64)
    terms = log_moment_terms(values, exponents)
    # block sums are pairwise (np.sum), added exactly (math.fsum): no error growing with n.
    # Not np.dot: a BLAS call per block stalls on a busy machine (thread hand-offs)
    sums = []
    for term in terms:
        weighted = term if counts is None else counts * term
        sums.append(
            math.fsum(
                float(np.sum(weighted[start : start + _BLOCK]))
                for start in range(0, values.size, _BLOCK)
            )
        )
    return (sums[0], sums[1]), (sums[2], sums[3])

r"""Summation rules over integers for the median null model.

Discrete Gauss (Gram) panels, integer interpolatory rules, a Gauss-Meixner rule, and compensated
prefix / suffix sums.

Rules are cached per length in a dictionary guarded by a lock, so that threads share it safely.
"""

from __future__ import annotations

import math
import threading
from typing import NamedTuple

import numpy as np

from rankstats.arrays import FloatArray, IntArray

#: nodes of the discrete Gauss rule on one panel (exact for polynomials of degree < 32)
_NU = 16
#: panels of at most this many integers are summed point by point
_ENUM = 32
#: powers of two from this value on are panel boundaries, so that 1/x weights stay smooth
_LADDER_START = 32


def dot(a: FloatArray, b: FloatArray) -> float:
    """Return the inner product of two vectors, pairwise summed, in one thread.

    Not ``a @ b``: OpenBLAS hands long dot products to its worker threads, which stall for
    milliseconds when the other cores are busy, and sums them in blocks rather than pairwise.
    """
    return float(np.sum(a * b))


def _suffix_sum(values: FloatArray) -> FloatArray:
    """Return ``out`` with ``out[..., i] = values[..., i:].sum()`` and ``out[..., -1] = 0``.

    Along the last axis (each row of a 2-D array on its own), compensated: the running sums
    are corrected by their exact rounding errors (Knuth's TwoSum), so each suffix sum is
    accurate to a few units in the last place whatever the length.
    """
    rev = values[..., ::-1]
    run = np.cumsum(rev, axis=-1)
    prev = np.zeros_like(run)
    prev[..., 1:] = run[..., :-1]
    part = run - prev
    err = (prev - (run - part)) + (rev - part)
    run += np.cumsum(err, axis=-1)
    out = np.zeros((*values.shape[:-1], values.shape[-1] + 1))
    out[..., :-1] = run[..., ::-1]
    return out


def _prefix_sum(values: FloatArray) -> FloatArray:
    """Return ``out`` with ``out[i] = values[:i].sum()``, compensated like :func:`_suffix_sum`."""
    out = _suffix_sum(values[::-1].copy())[::-1]
    return np.ascontiguousarray(out)


#: OpenBLAS runs a matrix product in the calling thread up to 65,536 * 4 multiply-adds
#: (``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD`` of its default build): half that
_GEMM_ONE_THREAD = 65_536 * 2


def matmul(a: FloatArray, b: FloatArray) -> FloatArray:
    """Return ``a @ b`` for a tall ``a``, in row blocks that BLAS multiplies in one thread.

    A product of 512 x 35 by 35 x 39 takes 20 us in BLAS against 210 us in ``np.einsum``, but
    handed to OpenBLAS's worker threads it stalls for milliseconds when the other cores are
    busy; blocks of at most ``_GEMM_ONE_THREAD`` multiply-adds stay in the calling thread.
    """
    rows = max(1, _GEMM_ONE_THREAD // max(a.shape[1] * b.shape[1], 1))
    out = np.empty((a.shape[0], b.shape[1]))
    for start in range(0, a.shape[0], rows):
        np.matmul(a[start : start + rows], b, out=out[start : start + rows])
    return out


#: rules of lengths up to this multiple of the node count are computed one by one ...
_GRAM_SHORT = 4
#: ... longer ones from an interpolant of this degree in :math:`\epsilon = 1/L^2`, tabulated up
#: to this multiple ...
_GRAM_DEGREE = 24
_GRAM_TABLE = 64
#: ... and beyond it from an interpolant of this degree on the shorter range of epsilon
_GRAM_LONG_DEGREE = 6
#: beyond ten times that multiple (s = (top / L)^2 < 0.009) degree 2 suffices: (s / 4096)^3 < 1e-17
_GRAM_FAR = 0.009


def _jacobi_off(eps: FloatArray, nu: int) -> FloatArray:
    r"""Off-diagonals :math:`\sqrt{\beta_k}` of the Gram Jacobi matrices, one row per ``eps``."""
    k = np.arange(1, nu, dtype=np.float64)[None, :]
    return np.asarray(
        np.sqrt(k * k * (1.0 - k * k * eps[:, None]) / (4.0 * (4.0 * k * k - 1.0))),
        dtype=np.float64,
    )


def _polished(eps: FloatArray, nu: int) -> tuple[FloatArray, FloatArray]:
    r"""Gram rules at :math:`\epsilon = 1/L^2` (0: Gauss-Legendre), to full accuracy.

    Golub-Welsch (``eigh`` of the Jacobi matrices) for first nodes, two Newton steps on the monic
    recurrence, and Christoffel weights :math:`1 / \sum_{k < \nu} q_k(z_j)^2` from the
    orthonormal one (a sum of squares, accurate to its own size however small).
    """
    off = _jacobi_off(eps, nu)
    jacobi = np.zeros((eps.size, nu, nu))
    i = np.arange(nu - 1)
    jacobi[:, i, i + 1] = off
    jacobi[:, i + 1, i] = off
    z = np.linalg.eigh(jacobi)[0]
    beta = off * off
    for _ in range(2):
        p_prev, p = np.zeros_like(z), np.ones_like(z)
        d_prev, d = np.zeros_like(z), np.zeros_like(z)
        for k in range(nu):
            b = beta[:, k - 1, None] if k else 0.0
            p_prev, p, d_prev, d = p, z * p - b * p_prev, d, p + z * d - b * d_prev
        z = z - p / d
    q_prev, q = np.zeros_like(z), np.ones_like(z)
    total = np.ones_like(z)
    for k in range(nu - 1):
        o = off[:, k - 1, None] if k else 0.0
        q_prev, q = q, (z * q - o * q_prev) / off[:, k, None]
        total += q * q
    return z, 1.0 / total


def _departure_series(nu: int, top: float, degree: int) -> tuple[FloatArray, ...]:
    r"""Chebyshev series in :math:`\epsilon \in [0, 1/top^2]` of the departures from Legendre.

    Returns the Gauss-Legendre nodes and weights (:math:`\epsilon = 0`) and the coefficients of
    the nodes' and weights' departures from them, from polished rules at Chebyshev points.
    """
    theta = np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1)
    eps = np.concatenate(([0.0], (np.cos(theta) + 1.0) / (2.0 * top * top)))
    z, w = _polished(eps, nu)
    basis = np.cos(np.outer(np.arange(degree + 1), theta)) * (2.0 / (degree + 1))
    basis[0] /= 2.0
    return z[0], w[0], basis @ (z[1:] - z[0]), basis @ (w[1:] - w[0])


def _evaluate_series(series: tuple[FloatArray, ...], top: float, big: FloatArray) -> FloatArray:
    """Nodes and weights (stacked) at lengths ``big`` from :func:`_departure_series`."""
    z0, w0, cz, cw = series
    basis = np.polynomial.chebyshev.chebvander(2.0 * (top / big) ** 2 - 1.0, cz.shape[0] - 1)
    return np.stack(
        (z0 + np.einsum("md,dn->mn", basis, cz), w0 + np.einsum("md,dn->mn", basis, cw))
    )


def _monomial(series: tuple[FloatArray, ...]) -> FloatArray:
    r"""The departures of :func:`_departure_series` as polynomials in :math:`s = \epsilon\,top^2`.

    Shape ``(degree + 1, 2, nu)``, lowest power first (for Horner's rule; low degree only). The
    Chebyshev series in :math:`u = 2s - 1` is converted by one matrix, the images of the basis.
    """
    _, _, cz, cw = series
    size = cz.shape[0]
    convert = np.zeros((size, size))
    for k in range(size):
        poly = np.polynomial.Chebyshev.basis(k, domain=[0.0, 1.0]).convert(
            kind=np.polynomial.Polynomial
        )
        convert[: poly.coef.size, k] = poly.coef
    return np.stack((convert @ cz, convert @ cw), axis=1)


class _GramTable:
    r"""Gram rules of one node count :math:`\nu` for every length :math:`L > \nu`.

    Lengths up to :math:`4\nu` are computed one by one (:func:`_polished`). Beyond, the nodes
    and weights are analytic in :math:`\epsilon = 1/L^2` (the recurrence coefficients are linear
    in it), and their departures from the Gauss-Legendre limit (:math:`\epsilon = 0`) are
    interpolated by Chebyshev series from polished rules at Chebyshev points: of degree 24 on
    :math:`[0, 1/(4\nu + 1)^2]` for the lengths up to :math:`64\nu` (tabulated once), of degree 6
    on :math:`[0, 1/(64\nu)^2]` beyond (where :math:`k^2\epsilon < 1/4096`), summed as a
    polynomial in :math:`\epsilon` (its first three terms beyond :math:`640\nu`). Measured against
    polished rules for every length up to 3000 and 300 up to :math:`10^{13}`: nodes to
    :math:`1.1 \cdot 10^{-16}`, weights to a few :math:`10^{-14}` relative (the Golub-Welsch
    rules alone: :math:`5 \cdot 10^{-16}` and :math:`10^{-13}`), at a fraction of a microsecond
    per length instead of tens.
    """

    def __init__(self, nu: int) -> None:
        self.nu = nu
        short = np.arange(nu + 1, _GRAM_SHORT * nu + 1, dtype=np.float64)
        z_short, w_short = _polished(1.0 / (short * short), nu)
        mid_top = float(_GRAM_SHORT * nu + 1)
        mid = np.arange(mid_top, _GRAM_TABLE * nu + 1)
        mid_rules = _evaluate_series(_departure_series(nu, mid_top, _GRAM_DEGREE), mid_top, mid)
        # (length, nodes or weights, node)
        self.table = np.stack(
            (np.concatenate((z_short, mid_rules[0])), np.concatenate((w_short, mid_rules[1]))),
            axis=1,
        )
        self.top = float(_GRAM_TABLE * nu)
        series = _departure_series(nu, self.top, _GRAM_LONG_DEGREE)
        self.base = np.stack((series[0], series[1]))
        self.long = _monomial(series)

    def rules(self, lengths: IntArray) -> tuple[FloatArray, FloatArray]:
        """Nodes and weights for each length (all above ``nu``)."""
        table = lengths <= self.top
        if bool(table.all()):
            found = self.table[lengths - (self.nu + 1)]
            return found[:, 0], found[:, 1]
        if not bool(table.any()):
            s = (self.top / lengths.astype(np.float64)) ** 2
            if bool((s < _GRAM_FAR).all()):
                # every length beyond 10 top (the kernel sums' pieces, almost always): the
                # first three terms, as below, without the masks and copies of the mixed case
                found = self._horner(s, self.long[:3])
                return found[:, 0], found[:, 1]
        out = np.empty((lengths.size, 2, self.nu))
        if bool(table.any()):
            out[table] = self.table[lengths[table] - (self.nu + 1)]
        # Horner's rule in s = (top / L)^2 <= 1, length by length (lengths repeat rarely); the
        # term of order j is below (s / 4096)^j, so beyond 10 top only the first three are kept
        s = (self.top / lengths[~table].astype(np.float64)) ** 2
        rules = np.empty((s.size, 2, self.nu))
        far = s < _GRAM_FAR
        for part, terms in ((~far, self.long), (far, self.long[:3])):
            if bool(part.any()):
                rules[part] = self._horner(s[part], terms)
        out[~table] = rules
        return out[:, 0], out[:, 1]

    def _horner(self, s: FloatArray, terms: FloatArray) -> FloatArray:
        """The rules ``(lengths, 2, nu)`` at ``s = (top / L)^2`` from the series' first terms."""
        sp = s[:, None, None]
        found: FloatArray = terms[-1] * sp
        found += terms[-2]
        for coef in terms[-3::-1]:
            found *= sp
            found += coef
        found += self.base
        return found


#: Gram tables by node count; read and filled under the lock
_GRAM_CACHE: dict[int, _GramTable] = {}
_GRAM_LOCK = threading.Lock()
#: an integer-rule cache is emptied when it would grow beyond this many rules
_GRAM_CACHE_SIZE = 200_000


def _gram_rules(lengths: IntArray, nu: int = _NU) -> tuple[FloatArray, FloatArray]:
    r"""Discrete Gauss rules for sums over :math:`\{0, \dots, L - 1\}`, one per length.

    The orthogonal polynomials of the uniform measure on :math:`L` consecutive integers (discrete
    Chebyshev or Gram polynomials) obey :math:`p_{k+1} = (x - \tfrac{L-1}{2}) p_k - \beta_k p_{k-1}`
    with :math:`\beta_k = k^2 (L^2 - k^2) / (4 (4k^2 - 1))`; their Gauss rule has ``nu`` nodes
    and weights with :math:`\sum_{x=0}^{L-1} f(x) = \sum_j w_j f(x_j)` for every polynomial of
    degree :math:`< 2\nu` (``nu < L``). Nodes are returned as :math:`z_j` with
    :math:`x_j = (L-1)/2 + L z_j`, weights normalised to sum to one. The rules come from one
    :class:`_GramTable` per node count (vectorised: thousands of distinct lengths cost no Python
    loop and no eigen-decomposition), shared by all threads and built outside the lock.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    with _GRAM_LOCK:
        table = _GRAM_CACHE.get(nu)
    if table is None:
        table = _GramTable(nu)
        with _GRAM_LOCK:
            table = _GRAM_CACHE.setdefault(nu, table)
    return table.rules(lengths.ravel())


def _pieces(lo: int, hi: int, breaks: IntArray, max_piece: int) -> tuple[IntArray, IntArray]:
    """Starts and lengths of the pieces of ``lo..hi``, cut at ``breaks`` and to ``max_piece``."""
    if hi < lo:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    inner = breaks[(breaks > lo) & (breaks <= hi)]
    edges = np.unique(np.concatenate((np.array([lo, hi + 1], dtype=np.int64), inner)))
    starts = edges[:-1]
    lengths = np.diff(edges)
    pieces = -(-lengths // max(max_piece, 1))
    base = lengths // pieces
    extra = lengths % pieces
    owner = np.repeat(np.arange(lengths.size), pieces)
    j = np.arange(owner.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    p_len = base[owner] + (j < extra[owner])
    p_start = starts[owner] + j * base[owner] + np.minimum(j, extra[owner])
    return p_start.astype(np.int64), p_len.astype(np.int64)


def _nodes_per_piece(lengths: IntArray, scale: float | FloatArray | None) -> IntArray:
    r"""Gauss nodes for pieces of a function smooth on the length ``scale`` (one, or one per piece).

    ``_NU`` without a scale; else the fewest :math:`\nu \ge 3` with
    :math:`(L / 2 \text{scale})^{2\nu} \le 10^{-14}`, the size of the error of a rule exact to
    degree :math:`2\nu - 1` on such a function.
    """
    if scale is None:
        return np.full(lengths.size, _NU, dtype=np.int64)
    ratio = np.minimum(lengths / (2.0 * scale), 0.5)
    nu = np.ceil(-7.0 / np.log10(ratio))
    return np.clip(nu, 3, _NU).astype(np.int64)


def _exponential_ratios(tolerance: float = 1e-17) -> FloatArray:
    r"""Per node count 3.. :data:`_NU`, the largest ratio of :func:`exponential_nodes_per_piece`.

    That is the largest :math:`r` with :math:`K_\nu r^{2\nu} e^{2r} \le` ``tolerance``;
    :math:`K_\nu = 2^{2\nu+1} (\nu!)^4 / ((2\nu+1) ((2\nu)!)^3)` is the constant of the
    Gauss-Legendre error :math:`K_\nu h^{2\nu} f^{(2\nu)}(\xi)` on an interval of
    half-length :math:`h`.
    """
    out = []
    for nu in range(3, _NU + 1):
        log_k = (
            (2 * nu + 1) * math.log(2.0)
            + 4.0 * math.lgamma(nu + 1)
            - math.log(2 * nu + 1)
            - 3.0 * math.lgamma(2 * nu + 1)
        )
        lo, hi = 0.0, 64.0
        for _ in range(80):
            mid = (lo + hi) / 2.0
            if log_k + 2 * nu * math.log(mid) + 2.0 * mid <= math.log(tolerance):
                lo = mid
            else:
                hi = mid
        out.append(lo)
    return np.array(out)


#: the largest half-length over scale that nu = 3, 4, ... Gauss nodes sum to 1e-17 for a
#: function whose derivatives grow like scale^-k (:func:`_exponential_ratios`)
_EXPONENTIAL_RATIOS = _exponential_ratios()


def exponential_nodes_per_piece(lengths: IntArray, scale: FloatArray) -> IntArray:
    r"""Gauss nodes for pieces of a function like :math:`e^{-t / \text{scale}}` (one scale each).

    Its derivatives grow like :math:`\text{scale}^{-k}` (not factorially, as near a pole: that
    is :func:`_nodes_per_piece`'s model), so the Gauss-Legendre error on a piece of
    :math:`L` integers is about :math:`K_\nu r^{2\nu}` times the function's largest value
    there, :math:`r = L / (2\,\text{scale})`, and that is at most :math:`e^{2r}` times its
    smallest: the fewest :math:`\nu \ge 3` for :math:`10^{-17}` of the smallest value (11
    nodes for four scales, where the factorial-free bound of :func:`_nodes_per_piece` asks 16),
    at most :data:`_NU`.
    """
    ratio = lengths / (2.0 * scale)
    nu = 3 + np.searchsorted(_EXPONENTIAL_RATIOS, ratio, side="left")
    return np.minimum(nu, _NU).astype(np.int64)


def _piece_nodes(
    starts: IntArray,
    lengths: IntArray,
    scale: float | FloatArray | None = None,
    nu: int | IntArray | None = None,
    enumerate_below: float = 2.0,
) -> tuple[FloatArray, FloatArray, IntArray]:
    r"""Nodes, weights and owning piece for :math:`\sum_{x \in \text{piece}} f(x)`.

    Pieces of at most twice their node count (``_ENUM`` without a ``scale``) are summed point by
    point; longer ones use the discrete Gauss rule of :func:`_gram_rules` with
    :func:`_nodes_per_piece` nodes, exact when ``f`` is a polynomial of degree below twice that
    on the piece and spectrally convergent for smooth ``f``. A given ``nu`` (one, or one per
    piece) fixes the node counts instead.
    """
    if nu is None:
        nus = _nodes_per_piece(lengths, scale)
    else:
        nus = np.broadcast_to(np.asarray(nu, dtype=np.int64), lengths.shape)
    small = lengths <= enumerate_below * nus
    s_len = lengths[small]
    total = int(s_len.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(s_len) - s_len, s_len)
    x_parts = [(np.repeat(starts[small], s_len) + offsets).astype(np.float64)]
    w_parts = [np.ones(total)]
    o_parts = [np.repeat(np.flatnonzero(small), s_len)]
    for count in np.unique(nus[~small]).tolist():
        big = np.flatnonzero(~small & (nus == count))
        g_len = lengths[big]
        z, weight = _gram_rules(g_len, int(count))
        length = g_len.astype(np.float64)[:, None]
        start = starts[big].astype(np.float64)[:, None]
        x_parts.append((start + (length - 1.0) / 2.0 + length * z).ravel())
        w_parts.append((length * weight).ravel())
        o_parts.append(np.repeat(big, int(count)))
    return np.concatenate(x_parts), np.concatenate(w_parts), np.concatenate(o_parts)


def _panel_nodes(
    lo: int, hi: int, breaks: IntArray, max_piece: int, scale: float | None = None
) -> tuple[FloatArray, FloatArray]:
    r"""Nodes and weights with :math:`\sum_{x=lo}^{hi} f(x) \approx \sum_j w_j f(x_j)`.

    The integers ``lo..hi`` are cut at every ``breaks`` value (a panel starts there) and into
    pieces of at most ``max_piece`` integers, then summed by :func:`_piece_nodes`.
    """
    x, w, _ = _piece_nodes(*_pieces(lo, hi, breaks, max_piece), scale)
    return x, w


def _meixner_rule(rate: float, nu: int) -> tuple[FloatArray, FloatArray]:
    r"""Discrete Gauss rule for :math:`\sum_{u \ge 0} c^u f(u)`, :math:`c = e^{-\lambda}`.

    Built from the monic Meixner polynomials (:math:`\beta = 1`), whose recurrence has
    :math:`\alpha_k = (k + (k + 1)c) / (1 - c)` and :math:`\beta_k = k^2 c / (1 - c)^2`; exact
    for polynomials :math:`f` of degree below :math:`2\nu`. The weights returned already carry
    the factor :math:`c^{-u}`, so that :math:`\sum_{u \ge 0} g(u) \approx \sum_j w_j g(u_j)`
    for :math:`g(u) = c^u f(u)`.
    """
    c = math.exp(-rate)
    one_minus = -math.expm1(-rate)
    k = np.arange(nu, dtype=np.float64)
    off = np.sqrt(k[1:] ** 2 * c)
    jacobi = np.diag(k + (k + 1.0) * c) + np.diag(off, 1) + np.diag(off, -1)
    nodes, vectors = np.linalg.eigh(jacobi)
    nodes = nodes / one_minus
    with np.errstate(divide="ignore"):
        log_w = 2.0 * np.log(np.abs(vectors[0])) - math.log(one_minus) + rate * nodes
    return nodes, np.exp(log_w)


def _ladder(hi: int) -> IntArray:
    """Powers of four from ``_LADDER_START`` up to ``hi``: panels on which ``1/x`` is smooth."""
    out = []
    value = _LADDER_START
    while value <= hi:
        out.append(value)
        value *= 4
    return np.array(out, dtype=np.int64)


def _integer_rule(lo: int, hi: int, nu: int) -> tuple[FloatArray, FloatArray]:
    r"""Interpolatory rule on integer nodes for :math:`\sum_{x=lo}^{hi} f(x)`.

    The ``nu`` nodes are the integers nearest to Chebyshev points of ``[lo, hi]``, pushed apart
    where they collide; the weights make the rule exact for every polynomial of degree below
    ``nu`` (the discrete moments of the Chebyshev basis come from :func:`_gram_rules`, exact up
    to degree 31). Ranges of at most ``2 nu`` integers are enumerated. Unlike
    :func:`_panel_nodes`, the nodes are integers, for functions known only there.
    """
    one = np.ones(1, dtype=np.int64)
    return _integer_rules(lo * one, (hi - lo + 1) * one, nu * one)


#: integer rules on 0..length-1 by (length, nodes); guarded by _GRAM_LOCK
_INTEGER_CACHE: dict[tuple[int, int], tuple[FloatArray, FloatArray]] = {}


#: integer rules are formed together in batches of about this many bytes of Chebyshev-Vandermonde
#: arrays (8 nu (nu + 16) bytes per rule)
_INTEGER_BATCH_BYTES = 1_048_576


def _integer_rules_at_zero(lengths: IntArray, nus: IntArray) -> list[tuple[FloatArray, FloatArray]]:
    r"""The rules of :func:`_integer_rule` on ``0..length - 1`` for many lengths (each > 2 nu).

    Returns the nodes and the weights of each (length, node count). The rules of every node
    count are formed together: a rule of :math:`\nu` nodes reads the first :math:`\nu` columns
    of the Chebyshev-Vandermonde arrays of the largest count; only the solves are per count.
    """
    cheb = np.polynomial.chebyshev.chebvander
    top = int(nus.max())
    nu = nus[:, None]
    column = np.arange(top)
    real = column[None, :] < nu
    # the Chebyshev points of each row's node count (padding columns at 0)
    z = np.where(real, -np.cos(np.pi * (2.0 * column + 1.0) / (2.0 * np.maximum(nu, 1))), 0.0)
    out: list[tuple[FloatArray, FloatArray]] = []
    batch = max(1, _INTEGER_BATCH_BYTES // (8 * top * (top + _NU)))
    for b0 in range(0, lengths.size, batch):
        sl = slice(b0, b0 + batch)
        length = lengths[sl].astype(np.float64)[:, None]
        rows = np.arange(length.shape[0])
        last = nus[sl] - 1
        nodes = np.rint((length - 1.0) * (1.0 + z[sl]) / 2.0)
        # pushed apart where they collide: x_i = max(x_i, x_{i-1} + 1) from the left, then
        # x_i = min(x_i, x_{i+1} - 1) from the right below the last node, capped at length - 1
        nodes = np.maximum.accumulate(nodes - column, axis=1) + column
        nodes[rows, last] = np.minimum(nodes[rows, last], length[:, 0] - 1.0)
        nodes = np.where(real[sl], nodes, np.inf)
        nodes = np.minimum.accumulate((nodes - column)[:, ::-1], axis=1)[:, ::-1] + column
        nodes = np.where(real[sl], nodes, 0.0)
        g_z, g_w = _gram_rules(lengths[sl], _NU)
        g_x = (length - 1.0) / 2.0 + length * g_z
        basis = cheb(2.0 * g_x / (length - 1.0) - 1.0, top - 1)
        moments = length * np.einsum("mj,mjk->mk", g_w, basis)
        vander = np.swapaxes(cheb(2.0 * nodes / (length - 1.0) - 1.0, top - 1), 1, 2)
        weights = np.zeros_like(nodes)
        for count in np.unique(nus[sl]).tolist():
            pick = np.flatnonzero(nus[sl] == count)
            weights[pick, :count] = np.linalg.solve(
                vander[pick, :count, :count], moments[pick, :count, None]
            )[..., 0]
        out += [
            (nodes[row, :count], weights[row, :count]) for row, count in enumerate(nus[sl].tolist())
        ]
    return out


def _integer_rules(
    starts: IntArray, lengths: IntArray, nus: IntArray
) -> tuple[FloatArray, FloatArray]:
    """:func:`_integer_rule` on every piece (start, length, nodes), concatenated in order.

    The rules not yet cached are formed together (one batch, a solve per node count).
    """
    short = lengths <= 2 * nus  # enumerated: every integer, weight one
    sizes = np.where(short, lengths, nus)
    ends = np.cumsum(sizes)
    begins = ends - sizes
    x = np.empty(int(ends[-1]) if ends.size else 0)
    w = np.empty(x.size)
    # the enumerated pieces' nodes 0..length - 1 (vectorised: they are most pieces)
    offsets = np.arange(x.size) - np.repeat(begins, sizes)
    x[:] = offsets
    w[:] = 1.0
    long = np.flatnonzero(~short)
    if long.size:
        rules: list[tuple[FloatArray, FloatArray] | None] = [None] * long.size
        missing: list[int] = []
        with _GRAM_LOCK:
            for j, (length, nu) in enumerate(
                zip(lengths[long].tolist(), nus[long].tolist(), strict=True)
            ):
                found = _INTEGER_CACHE.get((length, nu))
                if found is None:
                    missing.append(j)
                else:
                    rules[j] = found
        if missing:
            picked = long[missing]
            formed = _integer_rules_at_zero(lengths[picked], nus[picked])
            with _GRAM_LOCK:
                if len(_INTEGER_CACHE) + len(missing) > _GRAM_CACHE_SIZE:
                    _INTEGER_CACHE.clear()
                for j, i, rule in zip(missing, picked.tolist(), formed, strict=True):
                    rules[j] = _INTEGER_CACHE[(int(lengths[i]), int(nus[i]))] = rule
        for i, held in zip(long.tolist(), rules, strict=True):
            assert held is not None
            x[begins[i] : ends[i]] = held[0]
            w[begins[i] : ends[i]] = held[1]
    x += np.repeat(starts, sizes)
    return x, w


#: integer nodes per panel where a sum needs integer nodes (kernel sums exact there): at most
#: this many, and at least NU_INTEGER_MIN where the function's scale is known
NU_INTEGER = 32
NU_INTEGER_MIN = 8
#: ... on panels of at least this many integers (rounding the Chebyshev points of shorter
#: panels makes the rule ill-conditioned); shorter panels are summed point by point
INTEGER_MIN_PIECE = 256


def _integer_nodes_per_piece(lengths: IntArray, scale: FloatArray) -> IntArray:
    r"""Integer nodes for pieces of a function smooth on the length ``scale`` (one per piece).

    An interpolatory rule of :math:`\nu` nodes is exact to degree :math:`\nu - 1` only (a Gauss
    rule to :math:`2\nu - 1`): the fewest :math:`\nu \ge` :data:`NU_INTEGER_MIN` with
    :math:`(L / 2 \text{scale})^{\nu} \le 10^{-16}`, at most :data:`NU_INTEGER`.
    """
    ratio = np.minimum(lengths / (2.0 * scale), 0.5)
    nu = np.ceil(-16.0 / np.log10(ratio))
    return np.clip(nu, NU_INTEGER_MIN, NU_INTEGER).astype(np.int64)


class IntegerWindow(NamedTuple):
    """The integer nodes of a window ``lo..hi`` (pieces cut at ``breaks``), formed on demand.

    :meth:`size` says how many there are without forming the rules (a comparison of costs
    needs no more); :meth:`nodes` forms them (:func:`integer_nodes`).
    """

    lo: int
    hi: int
    breaks: IntArray
    piece: int
    scale: float | None = None

    def pieces(self) -> tuple[IntArray, IntArray, IntArray]:
        """Starts, lengths and node counts of the window's pieces."""
        piece = self.piece if self.piece >= INTEGER_MIN_PIECE else 2 * NU_INTEGER
        starts, lengths = _pieces(self.lo, self.hi, self.breaks, piece)
        if self.scale is None:
            return starts, lengths, np.full(lengths.size, NU_INTEGER, dtype=np.int64)
        scale = np.minimum(self.scale, starts.astype(np.float64))
        return starts, lengths, _integer_nodes_per_piece(lengths, scale)

    def size(self) -> int:
        """How many nodes :meth:`nodes` gives (each short piece's every integer)."""
        _, lengths, nus = self.pieces()
        return int(np.where(lengths <= 2 * nus, lengths, nus).sum())

    def nodes(self) -> tuple[FloatArray, FloatArray]:
        """The nodes and weights."""
        return _integer_rules(*self.pieces())


def integer_nodes(
    lo: int, hi: int, breaks: IntArray, piece: int, scale: float | None = None
) -> tuple[FloatArray, FloatArray]:
    """Integer nodes and weights summing a smooth function over ``lo..hi`` (pieces cut at breaks).

    Panels of ``piece`` integers take a discrete rule of :data:`NU_INTEGER` integer nodes, or,
    given the length ``scale`` on which the function is smooth (capped by a panel's distance
    from 0), as many as :func:`_integer_nodes_per_piece` asks; pieces shorter than
    :data:`INTEGER_MIN_PIECE` are enumerated two panels' worth at a time.
    """
    return IntegerWindow(lo, hi, breaks, piece, scale).nodes()

"""A topological order found by a score search that no change of a column's unit alters: the
data start's order for fits that learn one noise variance per variable.

The top-down rule of ``prodag.initialization`` orders the variables by their variances, which
means something only where the noise variances are known (or equal). Once every variable has
its own learned variance, that order is arbitrary, and the fit stays near it. This module finds
an order by the data instead:

- **Score of an order** ``π``: ``Σ_k BIC_k(π)``, where ``BIC_k`` is the Gaussian BIC of the
  regression of variable ``k`` on a parent set chosen among its predecessors in ``π``,
  ``(n/2) log RSS_k + penalty · (log n / 2) · |parents|`` (one variance per variable, so it
  is computed on the correlation matrix, unchanged by any column's scale or shift).
- **Parent set**: grow-shrink, i.e. add the predecessor that lowers the BIC most while one
  does, then drop the parent whose removal lowers it most while one does. Each step scores
  every candidate at once from the partial covariances.
- **Search**: best insertion moves (as in BOSS, Andrews et al. 2023): take each variable in
  turn, score it at every place in the order of the others, move it to the best place; repeat
  while an order improves. Such a search ends in a local optimum, so it runs from several
  orders made from the data (see ``best_order``) and keeps the best end.

The parent selection is compiled with numba (plain Python without it); a score per
``(variable, predecessor set)`` is cached.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # the same functions run as plain Python, slowly
    numba = None

_FLOOR = 1e-12
"""Smallest residual variance (on the correlation scale) the score takes a log of."""
_TIE = 1e-9
"""Scores closer than this (relative) are ties: rounding, e.g. of a change of units, must not
decide between orders of equal score (members of one equivalence class)."""


class OrderScore:
    """The BIC score of orders of the variables of ``X (n, p)`` (see the module docstring)."""

    def __init__(self, X: np.ndarray, penalty: float = 1.0):
        self.correlation = np.corrcoef(np.asarray(X, dtype=float), rowvar=False)
        self.n = X.shape[0]
        self.cost = penalty * np.log(self.n) / 2
        self._cache: dict[tuple[int, frozenset], tuple[float, tuple[int, ...]]] = {}

    def node(self, k: int, predecessors: frozenset) -> tuple[float, tuple[int, ...]]:
        """``(BIC, parents)`` of variable ``k`` with its parents chosen among
        ``predecessors`` by grow-shrink."""
        key = (k, predecessors)
        if key not in self._cache:
            candidates = np.array(sorted(predecessors), dtype=np.int64)
            bic, chosen = _grow_shrink(self.correlation, k, candidates, float(self.n),
                                       float(self.cost))
            self._cache[key] = (float(bic), tuple(int(c) for c in candidates[chosen]))
        return self._cache[key]

    def total(self, order) -> float:
        """Score of ``order`` (a sequence of the ``p`` variables): lower is better."""
        order = list(order)
        return sum(self.node(k, frozenset(order[:place]))[0] for place, k in enumerate(order))

    def parents(self, order) -> np.ndarray:
        """Adjacency ``(p, p)`` (0/1, ``[parent, child]``) of the parent sets under ``order``."""
        order = list(order)
        adjacency = np.zeros(self.correlation.shape, dtype=np.int64)
        for place, k in enumerate(order):
            adjacency[list(self.node(k, frozenset(order[:place]))[1]), k] = 1
        return adjacency


def _njit(function):
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


@_njit
def _grow_shrink(correlation, k, candidates, n, cost):
    """``(BIC, chosen)`` of variable ``k`` (``chosen``: a bool mask over ``candidates``).

    Grow: add the candidate that lowers the BIC most while one does. The covariance of
    ``(x_k, candidates)`` given the parents so far is kept (a rank-one update per parent
    added), so the residual variance with ``c`` added is ``RSS − cov_kc² / cov_cc``. Shrink:
    drop the parent whose removal lowers the BIC most while one does; without ``c`` the
    residual variance is ``RSS + β_c² / (S_AA⁻¹)_cc``. Ties go to the first candidate.
    """
    m = candidates.shape[0]
    variables = np.empty(m + 1, np.int64)
    variables[0] = k
    variables[1:] = candidates
    covariance = np.empty((m + 1, m + 1))
    for a in range(m + 1):
        for b in range(m + 1):
            covariance[a, b] = correlation[variables[a], variables[b]]
    chosen = np.zeros(m, np.bool_)
    while True:
        rss = max(covariance[0, 0], _FLOOR)
        best, least = -1, 0.0
        for c in range(m):
            if not chosen[c]:
                reduced = rss - covariance[0, c + 1] ** 2 / max(covariance[c + 1, c + 1], _FLOOR)
                gain = n / 2 * (np.log(max(reduced, _FLOOR)) - np.log(rss)) + cost
                if gain < least:
                    best, least = c, gain
        if best < 0:
            break
        chosen[best] = True
        column = covariance[:, best + 1].copy()
        pivot = max(column[best + 1], _FLOOR)
        for a in range(m + 1):
            for b in range(m + 1):
                covariance[a, b] -= column[a] * column[b] / pivot
    while True:
        parents = candidates[chosen]
        rss = _residual_variance(correlation, k, parents)
        if parents.shape[0] == 0:
            return n / 2 * np.log(max(rss, _FLOOR)), chosen
        inverse = np.ascontiguousarray(np.linalg.inv(_block(correlation, parents, parents)))
        beta = inverse @ _cross(correlation, parents, k)
        worst, least = -1, 0.0
        for i in range(parents.shape[0]):
            grown = rss + beta[i] ** 2 / max(inverse[i, i], _FLOOR)
            gain = n / 2 * (np.log(grown) - np.log(max(rss, _FLOOR))) - cost
            if gain < least:
                worst, least = i, gain
        if worst < 0:
            return n / 2 * np.log(max(rss, _FLOOR)) + cost * parents.shape[0], chosen
        chosen[np.flatnonzero(chosen)[worst]] = False


@_njit
def _block(correlation, rows, columns):
    block = np.empty((rows.shape[0], columns.shape[0]))
    for a in range(rows.shape[0]):
        for b in range(columns.shape[0]):
            block[a, b] = correlation[rows[a], columns[b]]
    return block


@_njit
def _cross(correlation, parents, k):
    """``S_Ak``, shape ``(|A|,)``."""
    cross = np.empty(parents.shape[0])
    for a in range(parents.shape[0]):
        cross[a] = correlation[parents[a], k]
    return cross


@_njit
def _residual_variance(correlation, k, parents):
    """``S_kk − S_kA S_AA⁻¹ S_Ak`` on the correlation matrix."""
    if parents.shape[0] == 0:
        return correlation[k, k]
    cross = _cross(correlation, parents, k)
    return correlation[k, k] - cross @ np.linalg.solve(_block(correlation, parents, parents),
                                                       cross)


def insertion_scores(score: OrderScore, others: list[int], v: int) -> np.ndarray:
    """Score of the order ``others`` with ``v`` inserted before place ``q``, for every ``q`` in
    ``0 … len(others)``: shape ``(len(others) + 1,)``. Variables before the place keep their
    predecessors; those after gain ``v``."""
    without = np.array([score.node(u, frozenset(others[:i]))[0] for i, u in enumerate(others)])
    with_v = np.array([score.node(u, frozenset(others[:i]) | {v})[0]
                       for i, u in enumerate(others)])
    own = np.array([score.node(v, frozenset(others[:q]))[0] for q in range(len(others) + 1)])
    before = np.concatenate([[0.0], np.cumsum(without)])
    after = np.concatenate([np.cumsum(with_v[::-1])[::-1], [0.0]])
    return before + own + after


def best_order(X: np.ndarray, penalty: float = 1.0, n_starts: int = 8,
               max_sweeps: int = 50) -> np.ndarray:
    """Order ``(p,)`` (the variable at each place) of the columns of ``X (n, p)``: the best end
    of best-insertion searches (``insertion_search``) under ``OrderScore`` from ``n_starts``
    orders. Each search ends in a local optimum, so it starts from several: the variables by
    increasing share of their variance explained by all the others (the diagonal of the
    inverse correlation matrix), the reverse, and shuffles of it by a fixed generator. So the
    result depends on the data, not on the columns' order, their units or a seed."""
    score = OrderScore(X, penalty)
    explained = np.diag(np.linalg.pinv(score.correlation))
    first = np.argsort(explained, kind="stable")
    shuffles = np.random.default_rng(0)
    starts = [first, first[::-1]] + [shuffles.permutation(first) for _ in range(n_starts - 2)]
    found = [insertion_search(score, [int(k) for k in start], max_sweeps)
             for start in starts[:n_starts]]
    return np.array(found[_first_best([total for _, total in found])][0], dtype=np.int64)


def insertion_search(score: OrderScore, order: list[int],
                     max_sweeps: int = 50) -> tuple[list[int], float]:
    """Best insertion moves from ``order``: each variable in turn goes to its best place in the
    order of the others; stops when a sweep moves none (or after ``max_sweeps``). Returns the
    order and its score."""
    current = score.total(order)
    for _ in range(max_sweeps):
        moved = False
        for v in list(order):
            others = [u for u in order if u != v]
            totals = insertion_scores(score, others, v)
            place = _first_best(totals)
            if totals[place] < current - _TIE * max(1.0, abs(current)):
                order, current, moved = others[:place] + [v] + others[place:], totals[place], True
        if not moved:
            break
    return order, float(current)


def _first_best(values) -> int:
    """Index of the first of ``values`` within ``_TIE`` (relative) of their minimum."""
    values = np.asarray(values, dtype=float)
    best = values.min()
    return int(np.flatnonzero(values <= best + _TIE * max(1.0, abs(best)))[0])

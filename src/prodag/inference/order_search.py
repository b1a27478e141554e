"""Topological orders from the data, for the data starts of ``prodag.inference.initialization``.

``top_down_order`` is the top-down rule for equal-variance SEMs (Chen, Drton & Wang, 2019):
it places the variables one at a time by their variance left given the placed ones, divided
by their noise variance. It is greedy, so it can lock in an early mistake; and once every
variable has its own learned noise variance it means nothing at all. ``best_order`` searches
the orders instead, under a score that matches the model:

- **Score of an order** ``π``: ``Σ_k BIC_k(π)``, where ``BIC_k`` is the Gaussian BIC of the
  regression of variable ``k`` on a parent set chosen among its predecessors in ``π``. With
  known noise variances (the linear SEM's second data start) it is
  ``(n/2) RSS_k / σ²_k + penalty · (log n / 2) · |parents|``; with one unknown variance per
  variable (fits with ``noise_variance="estimate"``) ``(n/2) log RSS_k + …``, computed on the
  correlation matrix, so unchanged by any column's scale or shift (``OrderScore``).
- **Parent set**: grow-shrink, i.e. add the predecessor that lowers the BIC most while one
  does, then drop the parent whose removal lowers it most while one does. Each step scores
  every candidate at once from the partial covariances.
- **Search**: best insertion moves (as in BOSS, Andrews et al. 2023): take each variable in
  turn, score it at every place in the order of the others, move it to the best place; repeat
  while an order improves. Such a search ends in a local optimum, so it runs from several
  orders made from the data (see ``best_order``) and keeps the best end.

The parent selection is compiled with numba (``prodag.inference.parent_selection``); a score
per ``(variable, predecessor set)`` is cached, the set as a bit mask (``mask_of``).
"""

from __future__ import annotations

import numpy as np

from prodag.config.starts import MANY_STARTS_UP_TO
from prodag.inference.parent_selection import node_score

SEARCHED_UP_TO = 100
"""Largest number of variables whose orders ``searched_orders`` searches with every predecessor
a possible parent; beyond it, it returns its first order unsearched: a sweep's cost grows as
about p⁴, so on larger graphs the search would take longer than the fit it starts."""
SEARCHED_ON_CANDIDATES_UP_TO = 200
"""Largest number of variables whose orders ``searched_orders`` searches on candidate parents
(above ``SEARCHED_UP_TO``): each variable's parents are then chosen among its candidate
predecessors, so a score depends on few of them and a search of MUNIN1's 186 variables takes
seconds; at 500 and 1000 variables it has not been measured inside a fit."""
_TIE = 1e-9
"""Scores closer than this (relative) are ties: rounding, e.g. of a change of units, must not
decide between orders of equal score (members of one equivalence class)."""


def top_down_order(covariance: np.ndarray, noise_variance: np.ndarray,
                   candidates: np.ndarray | None = None) -> np.ndarray:
    """Order ``(p,)`` (variable at each place) by the top-down equal-variance rule.

    The variance each remaining variable has left given the placed ones is kept as the
    residual covariance, updated by one rank-one step (a Schur complement) per variable
    placed: O(p³) in all, instead of a regression per variable and place (O(p⁵), minutes at
    p = 200). A variable that the placed ones determine (no variance left) takes no step.

    With ``candidates (p, p)`` (bool, ``[j, k]``: ``j`` may parent ``k``) a variable's
    variance is the one left given the placed variables among its candidate parents
    (``top_down``).

    Args:
        covariance: ``(p, p)`` sample covariance of the centred data.
        noise_variance: ``(p,)`` noise variance of each variable under the model.
        candidates: ``(p, p)`` bool or None (every placed variable conditions).
    """
    return top_down(covariance, noise_variance, candidates)[0]


def top_down(covariance: np.ndarray, noise_variance: np.ndarray,
             candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``top_down_order`` and the variance each variable has left given those before it,
    ``Var(x_k | x_earlier)`` ``(p,)`` in the order's places: the pivots of its rank-one
    steps, what ``conditional_variance`` gives one regression at a time (O(p³) in all).

    With ``candidates`` it is ``Var(x_k | x_j : j earlier and a candidate parent of k)``: with
    fewer rows than variables the sample covariance is singular, every variable placed after
    the first ``n − 1`` has no variance left given all of them, and the rule orders the rest
    by rounding (``docs/findings.md``). Each variable's variance is
    then recomputed, by one small regression, when one of its candidate parents is placed."""
    if candidates is not None:
        return _top_down_on_candidates(covariance, noise_variance,
                                       np.asarray(candidates, dtype=bool))
    residual = np.array(covariance, dtype=float)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), residual.shape[:1])
    remaining = np.ones(len(residual), dtype=bool)
    placed, left = [], []
    scale = max(float(np.max(np.abs(np.diag(residual)))), np.finfo(float).tiny)
    explained = None
    for _ in range(len(residual)):
        scores = np.where(remaining, np.diag(residual) / noise, np.inf)
        node, explained = _least(scores, covariance, explained)
        placed.append(node)
        remaining[node] = False
        pivot = residual[node, node]
        left.append(float(pivot))
        if pivot > 1e-12 * scale:
            column = residual[:, node].copy()
            residual -= np.outer(column, column) / pivot
    return np.array(placed, dtype=np.int64), np.array(left)


def _top_down_on_candidates(covariance: np.ndarray, noise_variance: np.ndarray,
                            candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``top_down`` with each variable conditioned on its placed candidate parents only
    (``candidates[j, k]``: ``j`` may parent ``k``), ties broken as there."""
    covariance = np.asarray(covariance, dtype=float)
    p = len(covariance)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), (p,))
    variance = np.diag(covariance).copy()
    remaining = np.ones(p, dtype=bool)
    placed, left = [], []
    explained = None
    for _ in range(p):
        scores = np.where(remaining, variance / noise, np.inf)
        node, explained = _least(scores, covariance, explained)
        placed.append(node)
        remaining[node] = False
        left.append(float(variance[node]))
        for child in np.flatnonzero(candidates[node] & remaining):
            given = np.flatnonzero(candidates[:, child] & ~remaining)
            variance[child] = conditional_variance(covariance, int(child), list(given))
    return np.array(placed, dtype=np.int64), np.array(left)


def _least(scores: np.ndarray, covariance: np.ndarray,
           explained: np.ndarray | None) -> tuple[int, np.ndarray | None]:
    """The variable of least ``scores (p,)`` for the top-down rule, of several within
    ``_TIE`` (relative) the most explained (``_explained`` of ``covariance``, computed at the
    first tie and passed on as ``explained``): ``(node, explained)``."""
    best = float(np.min(scores))
    tied = np.flatnonzero(scores <= best + _TIE * abs(best))
    if len(tied) == 1:
        return int(tied[0]), explained
    if explained is None:
        explained = _explained(np.asarray(covariance, dtype=float))
    return int(tied[np.argmax(explained[tied])]), explained


def _explained(covariance: np.ndarray) -> np.ndarray:
    """``(p,)``: each variable's ``1 / (1 − R²)`` on all the others (the diagonal of the
    inverse correlation matrix; unchanged by the columns' units), which breaks ties of the
    top-down rule: on standardised data every variance is 1 and rounding, e.g. of a change
    of units, would pick the first variable; the most explained one is picked instead, as
    the real-table benchmark chose (docs/findings.md, 2026-11-26, "rounding chose the first
    variable of the top-down order on standardised data")."""
    spread = np.sqrt(np.maximum(np.diag(covariance), np.finfo(float).tiny))
    return np.diag(np.linalg.pinv(covariance / np.outer(spread, spread)))


def conditional_variance(covariance: np.ndarray, k: int, given: list[int]) -> float:
    """``Var(x_k | x_given)`` under the Gaussian with the given covariance."""
    if not given:
        return float(covariance[k, k])
    block = covariance[np.ix_(given, given)]
    cross = covariance[given, k]
    return float(covariance[k, k] - cross @ np.linalg.lstsq(block, cross, rcond=None)[0])


class OrderScore:
    """The BIC score of orders of the variables of ``X (n, p)`` (see the module docstring).

    ``noise_variance`` None: one unknown variance per variable, the regressions on the
    correlation matrix and ``(n/2) log RSS_k`` per variable. A ``(p,)`` array: known noise
    variances, the regressions on the covariance of the centred data scaled to unit noise
    (``S_jk / √(σ²_j σ²_k)``) and ``(n/2) RSS_k``, the Gaussian log-likelihood with that
    variance (the top-down rule's model: equal variances make the order identifiable).
    ``candidates (p, p)`` (bool, ``[j, k]``: ``j`` may parent ``k``): each variable's parents
    are chosen among its candidate predecessors only.
    """

    def __init__(self, X: np.ndarray, penalty: float = 1.0,
                 noise_variance: np.ndarray | None = None,
                 candidates: np.ndarray | None = None):
        X = np.asarray(X, dtype=float)
        self._allowed = (None if candidates is None else
                         [mask_of(np.flatnonzero(column)) for column in np.asarray(candidates).T])
        self.known_variance = noise_variance is not None
        if self.known_variance:
            centred = X - X.mean(axis=0)
            scale = 1.0 / np.sqrt(np.broadcast_to(noise_variance, X.shape[1:]))
            self.matrix = (centred.T @ centred / X.shape[0]) * np.outer(scale, scale)
        else:
            self.matrix = np.corrcoef(X, rowvar=False)
        self.n = X.shape[0]
        self.cost = penalty * np.log(self.n) / 2
        self._bytes = -(-len(self.matrix) // 8)
        self._cache: dict[tuple[int, int], tuple[float, tuple[int, ...]]] = {}

    def node(self, k: int, predecessors: int) -> tuple[float, tuple[int, ...]]:
        """``(BIC, parents)`` of variable ``k`` with its parents chosen by grow-shrink among
        ``predecessors``, a bit mask (``mask_of``), that are candidate parents of ``k``."""
        if self._allowed is not None:
            predecessors &= self._allowed[k]
        key = (k, predecessors)
        found = self._cache.get(key)
        if found is None:
            bic, parents = node_score(self.matrix, k, np.frombuffer(
                predecessors.to_bytes(self._bytes, "little"), np.uint8), float(self.n),
                float(self.cost), not self.known_variance)
            found = self._cache[key] = (float(bic), tuple(parents.tolist()))
        return found

    def total(self, order) -> float:
        """Score of ``order`` (a sequence of the ``p`` variables): lower is better."""
        return sum(self.node(k, before)[0] for k, before in _with_predecessors(order))

    def parents(self, order) -> np.ndarray:
        """Adjacency ``(p, p)`` (0/1, ``[parent, child]``) of the parent sets under ``order``."""
        adjacency = np.zeros(self.matrix.shape, dtype=np.int64)
        for k, before in _with_predecessors(order):
            adjacency[list(self.node(k, before)[1]), k] = 1
        return adjacency


def mask_of(variables) -> int:
    """The bit mask of a set of variables (bit ``j`` for variable ``j``)."""
    return sum(1 << int(j) for j in set(variables))


def _with_predecessors(order):
    """``(k, mask of the variables before k)`` for every ``k`` of ``order``, in order."""
    before = 0
    for k in order:
        yield int(k), before
        before |= 1 << int(k)


def insertion_scores(score: OrderScore, others: list[int], v: int) -> np.ndarray:
    """Score of the order ``others`` with ``v`` inserted before place ``q``, for every ``q`` in
    ``0 … len(others)``: shape ``(len(others) + 1,)``. Variables before the place keep their
    predecessors; those after gain ``v``."""
    node, bit = score.node, 1 << v
    without, with_v, own = [], [], []
    for u, before in _with_predecessors(others):
        without.append(node(u, before)[0])
        with_v.append(node(u, before | bit)[0])
        own.append(node(v, before)[0])
    own.append(node(v, mask_of(others))[0])
    without, with_v, own = np.array(without), np.array(with_v), np.array(own)
    before = np.concatenate([[0.0], np.cumsum(without)])
    after = np.concatenate([np.cumsum(with_v[::-1])[::-1], [0.0]])
    return before + own + after


def best_order(X: np.ndarray, noise_variance: np.ndarray | None = None, penalty: float = 1.0,
               n_starts: int | None = None, max_sweeps: int = 50) -> np.ndarray:
    """Order ``(p,)`` (the variable at each place) of the columns of ``X (n, p)``: the best end
    of ``searched_orders``."""
    return searched_orders(X, noise_variance, penalty, n_starts, max_sweeps)[0]


def searched_orders(X: np.ndarray, noise_variance: np.ndarray | None = None,
                    penalty: float = 1.0, n_starts: int | None = None, max_sweeps: int = 50,
                    n_graphs: int = 1, candidates: np.ndarray | None = None
                    ) -> list[np.ndarray]:
    """Up to ``n_graphs`` orders ``(p,)`` of the columns of ``X (n, p)``, best first: the ends
    of best-insertion searches (``insertion_search``) under ``OrderScore`` (with
    ``noise_variance``) from ``n_starts`` orders (None: 8 up to ``MANY_STARTS_UP_TO``
    variables, else 2, as a search's time grows as p³), one per distinct graph of parent sets.
    Each search ends in a local optimum, so it starts from several made from the data: a first
    order, its reverse, and shuffles of it by a fixed generator. The first order is the
    top-down order when the noise variances are known; without them, the variables by
    increasing share of their variance explained by all the others (the diagonal of the
    inverse correlation matrix), so the result depends on the data, not on the columns'
    order, their units or a seed. With ``candidates (p, p)`` (bool, ``[j, k]``: ``j`` may
    parent ``k``) the top-down order conditions each variable on its candidate parents only.
    Beyond ``SEARCHED_UP_TO`` variables the first order is returned unsearched, unless there
    are candidates and at most ``SEARCHED_ON_CANDIDATES_UP_TO`` variables: the search then
    chooses each variable's parents among its candidate predecessors (``OrderScore``)."""
    p = np.shape(X)[1]
    on_candidates = candidates is not None and SEARCHED_UP_TO < p <= SEARCHED_ON_CANDIDATES_UP_TO
    score = OrderScore(X, penalty, noise_variance, candidates if on_candidates else None)
    if n_starts is None:
        n_starts = 8 if len(score.matrix) <= MANY_STARTS_UP_TO else 2
    if score.known_variance:
        first = top_down_order(score.matrix, np.ones(len(score.matrix)), candidates)
    else:
        first = np.argsort(np.diag(np.linalg.pinv(score.matrix)), kind="stable")
    if p > SEARCHED_UP_TO and not on_candidates:
        return [np.asarray(first, dtype=np.int64)]
    shuffles = np.random.default_rng(0)
    starts = [first, first[::-1]] + [shuffles.permutation(first) for _ in range(n_starts - 2)]
    found = [insertion_search(score, [int(k) for k in start], max_sweeps)
             for start in starts[:n_starts]]
    orders, graphs = [], []
    while found and len(orders) < n_graphs:
        order, _ = found.pop(_first_best([total for _, total in found]))
        graph = score.parents(order)
        if not any(np.array_equal(graph, seen) for seen in graphs):
            orders.append(np.array(order, dtype=np.int64))
            graphs.append(graph)
    return orders


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

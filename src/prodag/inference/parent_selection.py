"""Parent selection for the order search's score (``prodag.inference.order_search``),
compiled with numba (plain Python without it): the Gaussian BIC of a variable regressed on the
parent set that grow-shrink picks among its candidate predecessors, from a second-moment
matrix (``OrderScore.matrix``).
"""

from __future__ import annotations

import numpy as np

from prodag.numba_jit import njit

_FLOOR = 1e-12
"""Smallest residual variance (on the correlation scale) the score takes a log of."""


@njit
def _fit_term(rss, n, log_scale):
    """The likelihood part of a variable's BIC: ``(n/2) log RSS`` or ``(n/2) RSS``."""
    return n / 2 * (np.log(max(rss, _FLOOR)) if log_scale else rss)


@njit
def node_score(matrix, k, mask, n, cost, log_scale):
    """``(BIC, parents)`` of variable ``k`` among the candidates of the bit mask ``mask``
    (little-endian bytes: bit ``j`` of the whole for variable ``j``), by ``grow_shrink``."""
    candidates = np.empty(mask.shape[0] * 8, np.int64)
    m = 0
    for j in range(mask.shape[0] * 8):
        if (mask[j // 8] >> (j % 8)) & 1:
            candidates[m] = j
            m += 1
    candidates = candidates[:m]
    bic, chosen = grow_shrink(matrix, k, candidates, n, cost, log_scale)
    return bic, candidates[chosen]


@njit
def grow_shrink(matrix, k, candidates, n, cost, log_scale):
    """``(BIC, chosen)`` of variable ``k`` (``chosen``: a bool mask over ``candidates``) on the
    second-moment ``matrix`` (``OrderScore.matrix``; ``log_scale``: the unknown-variance BIC).

    Grow: add the candidate that lowers the BIC most while one does. The covariance of
    ``(x_k, candidates)`` given the parents so far is what decides: the residual variance with
    ``c`` added is ``RSS − cov_kc² / cov_cc``. Each parent added updates it by a rank-one
    term; only its row for ``x_k`` and its diagonal are kept, and the column of a parent, when
    added, is its column in ``matrix`` less the earlier parents' terms in their order (the
    same numbers as updating the whole matrix, at a cost of ``m`` per entry kept rather than
    ``m²``). Shrink: drop the parent whose removal lowers the BIC most while one does;
    without ``c`` the residual variance is ``RSS + β_c² / (S_AA⁻¹)_cc``. Ties go to the
    first candidate.
    """
    m = candidates.shape[0]
    row = np.empty(m)  # cov(x_k, candidate c | parents)
    diagonal = np.empty(m)  # var(candidate c | parents)
    for c in range(m):
        row[c] = matrix[k, candidates[c]]
        diagonal[c] = matrix[candidates[c], candidates[c]]
    own = matrix[k, k]  # var(x_k | parents)
    columns = np.empty((m, m + 1))  # each added parent's column, x_k first, when added
    pivots = np.empty(m)
    added = 0
    chosen = np.zeros(m, np.bool_)
    while True:
        rss = max(own, _FLOOR)
        best, least = -1, 0.0
        for c in range(m):
            if not chosen[c]:
                reduced = rss - row[c] ** 2 / max(diagonal[c], _FLOOR)
                gain = _fit_term(reduced, n, log_scale) - _fit_term(rss, n, log_scale) + cost
                if gain < least:
                    best, least = c, gain
        if best < 0:
            break
        chosen[best] = True
        column = columns[added]
        column[0] = matrix[k, candidates[best]]
        for a in range(m):
            column[a + 1] = matrix[candidates[a], candidates[best]]
        for earlier in range(added):
            update = columns[earlier]
            for a in range(m + 1):
                column[a] -= update[a] * update[best + 1] / pivots[earlier]
        pivot = max(column[best + 1], _FLOOR)
        pivots[added] = pivot
        added += 1
        own -= column[0] * column[0] / pivot
        for c in range(m):
            row[c] -= column[0] * column[c + 1] / pivot
            diagonal[c] -= column[c + 1] * column[c + 1] / pivot
    while True:
        parents = candidates[chosen]
        rss = _residual_variance(matrix, k, parents)
        if parents.shape[0] == 0:
            return _fit_term(rss, n, log_scale), chosen
        inverse = np.ascontiguousarray(np.linalg.inv(_block(matrix, parents, parents)))
        beta = inverse @ _cross(matrix, parents, k)
        worst, least = -1, 0.0
        for i in range(parents.shape[0]):
            grown = rss + beta[i] ** 2 / max(inverse[i, i], _FLOOR)
            gain = _fit_term(grown, n, log_scale) - _fit_term(rss, n, log_scale) - cost
            if gain < least:
                worst, least = i, gain
        if worst < 0:
            return _fit_term(rss, n, log_scale) + cost * parents.shape[0], chosen
        chosen[np.flatnonzero(chosen)[worst]] = False


@njit
def _block(matrix, rows, columns):
    block = np.empty((rows.shape[0], columns.shape[0]))
    for a in range(rows.shape[0]):
        for b in range(columns.shape[0]):
            block[a, b] = matrix[rows[a], columns[b]]
    return block


@njit
def _cross(matrix, parents, k):
    """``S_Ak``, shape ``(|A|,)``."""
    cross = np.empty(parents.shape[0])
    for a in range(parents.shape[0]):
        cross[a] = matrix[parents[a], k]
    return cross


@njit
def _residual_variance(matrix, k, parents):
    """``S_kk − S_kA S_AA⁻¹ S_Ak``."""
    if parents.shape[0] == 0:
        return matrix[k, k]
    cross = _cross(matrix, parents, k)
    return matrix[k, k] - cross @ np.linalg.solve(_block(matrix, parents, parents), cross)

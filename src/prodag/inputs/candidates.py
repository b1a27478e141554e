"""Candidate parents: the screen that restricts each variable's possible parents before a fit.

Every variable may parent every other, so a dense fit's ℓ1 ball must zero about ``p²`` entries
by itself; at p = 100, n = 100 the ELBO then chooses a radius far below the true graph's ‖W‖₁,
and a third of the true edges are shrunk away. Like BiDAG's and Gadget's search spaces, each
variable ``k`` gets a few candidate parents chosen from the data first: the first ``K``
variables that enter the lasso path of ``x_k`` on all the others (neighbourhood selection,
Meinshausen & Bühlmann 2006; scikit-learn's ``lars_path``), made symmetric (a neighbour may be a
parent or a child). The fit's posterior is then the model's posterior restricted to DAGs
whose edges lie on that support: entries outside it are zero in every sample, like forbidden
edges (``prodag.inputs.knowledge.Knowledge.candidates``). Required edges are always
candidates; forbidden ones never become edges.

``"auto"`` screens with ``K = CANDIDATE_PARENTS`` from ``SCREEN_FROM_P`` variables on, where
``benchmarks/studies/scale.py`` measured it (``docs/findings.md``, 2026-11-27, "candidate
parents"); below, the dense model is fitted.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from prodag.inputs.knowledge import Knowledge

CANDIDATE_PARENTS = 16
"""``K``: the lasso-path neighbours each variable keeps (then the set is made symmetric, so a
variable has about ``K`` to ``2K`` candidate parents)."""
SCREEN_FROM_P = 100
"""``candidate_parents="auto"`` screens graphs of at least this many variables (the smallest
size the screen was measured at; nothing was measured between 20 and 100)."""


def resolved_count(setting, p: int) -> int | None:
    """The ``K`` a setting asks for at ``p`` variables: ``"auto"`` → ``CANDIDATE_PARENTS`` from
    ``SCREEN_FROM_P`` variables on, else None; an integer → itself, None when it leaves
    every variable free anyway (``K ≥ p − 1``); None → None (no screen)."""
    if setting == "auto":
        return CANDIDATE_PARENTS if p >= SCREEN_FROM_P else None
    if setting is None or setting >= p - 1:
        return None
    return int(setting)


def neighbour_mask(Z: np.ndarray, k: int) -> np.ndarray:
    """``(p, p)`` bool: ``[j, i]`` when ``j`` is among the first ``k`` variables to enter the
    lasso path of column ``i`` of ``Z (n, p)`` on the other columns, or ``i`` among ``j``'s
    (symmetric, no diagonal). The columns are standardised first, so the screen does not
    depend on their units."""
    from sklearn.linear_model import lars_path

    scale = Z.std(axis=0)
    X = (Z - Z.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    p = X.shape[1]
    mask = np.zeros((p, p), dtype=bool)
    for child in range(p):
        others = np.delete(np.arange(p), child)
        _, active, _ = lars_path(X[:, others], X[:, child], method="lasso", max_iter=k)
        mask[others[np.asarray(active[:k], dtype=int)], child] = True
    return mask | mask.T


def candidate_parents(Z: np.ndarray, observed: np.ndarray | None, k: int,
                      required: np.ndarray | None = None) -> tuple[tuple[int, ...], ...]:
    """Each variable's candidate parents, ``p`` sorted tuples of column indices, screened on
    the rows of ``Z (n, p)`` where ``observed (n, p)`` holds everywhere (all rows when there
    are too few of them), with every ``required (p, p)`` edge among them."""
    rows = Z if observed is None else Z[np.all(observed, axis=1)]
    mask = neighbour_mask(rows if len(rows) > k + 1 else Z, k)
    return from_mask(mask if required is None else mask | required)


def as_mask(candidates: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``(p, p)`` bool: ``[j, k]`` when ``j`` is a candidate parent of ``k``."""
    p = len(candidates)
    mask = np.zeros((p, p), dtype=bool)
    for child, parents in enumerate(candidates):
        mask[list(parents), child] = True
    return mask


def from_mask(mask: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """The candidate parents of a ``(p, p)`` bool mask (``as_mask``'s inverse)."""
    return tuple(tuple(int(j) for j in np.flatnonzero(mask[:, child]))
                 for child in range(mask.shape[1]))


def restrict(knowledge: Knowledge | None, Z: np.ndarray, observed: np.ndarray | None,
             setting, p: int) -> Knowledge | None:
    """``knowledge`` (None: none) with the candidate parents that ``setting`` (``"auto"``, a
    ``K`` or None; ``resolved_count``) screens from ``Z (n, p)``, or unchanged without a
    screen."""
    k = resolved_count(setting, p)
    if k is None:
        return knowledge
    base = knowledge if knowledge is not None else Knowledge(p)
    return replace(base, candidates=candidate_parents(Z, observed, k, base.required_mask()))


def with_mask(knowledge: Knowledge | None, mask: np.ndarray | None, p: int) -> Knowledge | None:
    """``knowledge`` restricted to the candidate parents of ``mask (p, p)`` (a saved
    ``ProDAG.candidate_parents_``; None: unchanged)."""
    if mask is None:
        return knowledge
    return replace(knowledge if knowledge is not None else Knowledge(p),
                   candidates=from_mask(mask))

"""The linear-Gaussian structural equation model ``x = Wᵀx + ε``, ``ε ~ N(0, diag(σ²))``.

The weights are one matrix ``{"W": (L, p, p)}``; ``W[j, k]`` is the weight of the edge j → k,
so column ``k`` of ``W`` holds the parents of variable ``k``. The graph the projection acts on
is the weight matrix itself (``W̃ = ω̃``) and the projected weights are the projected graph.

The log-likelihood uses sufficient statistics: with ``A = I − W`` the residuals of column ``k``
are ``X A[:, k]`` and their squared norm is ``A[:, k]ᵀ (XᵀX) A[:, k]``, so one fit step costs
``O(L p³)`` whatever ``n`` is, after one ``O(n p²)`` Gram matrix. On candidate parents
(``parents``: each variable's, at most ``K``) only those weights can be nonzero, and the same
residuals cost ``O(L p K²)``: ``G_kk − 2 wᵀ G[pa, k] + wᵀ G[pa, pa] w`` with ``w = W[pa, k]``.
There a training step draws only those weights (``draw_log_likelihood``): ``(L, p, K)`` slots
(``prodag.projection.parents``), projected on the slots, so no array of a draw is ``(p, p)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from prodag.distributions import ProjectedNormal
from prodag.models import variational
from prodag.models.base import Weights, gaussian_log_likelihood
from prodag.projection import Projector
from prodag.projection.parents import ParentTable


@dataclass(frozen=True)
class LinearSEM:
    """Linear SEM; stateless, so one instance serves every fit on the same support.

    ``parents``: each variable's candidate parents (``parents[k]``: the rows of column ``k``
    of ``W`` that may be nonzero), or None: any. It only makes the likelihood cheaper; the
    projection is what keeps the other weights at zero.
    """

    edge_weight: ClassVar[str] = "W"
    parents: tuple[tuple[int, ...], ...] | None = None

    def weight_shapes(self, p: int) -> dict[str, tuple[int, ...]]:
        """One ``(p, p)`` weight matrix."""
        return {"W": (p, p)}

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """``W̃ = ω̃["W"]`` of shape ``(L, p, p)``."""
        return weights_tilde["W"]

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The projected weights are the projected graph ``W (L, p, p)``."""
        return {"W": graph}

    def draw(self, q: variational.VariationalParams, key: jax.Array, n_samples: int,
             project: Projector, lam: jax.Array) -> tuple[Weights, jax.Array]:
        """``n_samples`` draws of ``ProjectedNormal(q)``: ``({"W": W}, W)`` with ``W (L, p, p)``.

        The normal draws use the key ``variational.sample`` gives the weight ``"W"``, so this
        equals the generic ``draw_through_graph``."""
        (weight_key,) = jax.random.split(key, 1)
        distribution = ProjectedNormal(q.loc["W"], variational.stddev(q)["W"], lam,
                                       projector=project)
        graph = distribution.sample(weight_key, (n_samples,))
        return {"W": graph}, graph

    def draw_log_likelihood(self, q: variational.VariationalParams, key: jax.Array,
                            n_samples: int, project: Projector, lam: jax.Array,
                            data: dict[str, Any], noise_variance: jax.Array) -> jax.Array:
        """``log p(X | W_l)`` ``(L,)`` of ``n_samples`` draws ``W_l ~ ProjectedNormal(q)``.

        On candidate parents, with a projection that takes slots (``CandidateProjector``), the
        draws are made on the slots alone: ``w̃ ~ N(q)`` restricted to the candidate entries
        ``(L, p, K)``, projected there. That is the same distribution as the dense draw, whose
        other entries the projection zeroes; only the random numbers differ.
        """
        w = self.draw_slots(q, key, n_samples, project, lam)
        if w is None:
            weights, _ = self.draw(q, key, n_samples, project, lam)
            return self.log_likelihood(weights, data, noise_variance)
        return gaussian_log_likelihood(rss_on_slots(w, data["gram"], project.table),
                                       data["n_rows"], noise_variance)

    def draw_slots(self, q: variational.VariationalParams, key: jax.Array, n_samples: int,
                   project: Projector, lam: jax.Array) -> jax.Array | None:
        """On candidate parents with a projection that takes slots: ``n_samples`` projected
        draws on the slots alone, ``(L, p, K)`` (``project.table``'s layout, zero in the
        padding); else None. The same distribution as ``draw``'s, other random numbers."""
        on_parents = getattr(project, "on_parents", None)
        if self.parents is None or on_parents is None:
            return None
        table = project.table
        (weight_key,) = jax.random.split(key, 1)
        loc, scale = table.gather(q.loc["W"]), table.gather(variational.stddev(q)["W"])
        noise = jax.random.normal(weight_key, (n_samples, *loc.shape), loc.dtype)
        return on_parents(loc + scale * noise, lam)

    def prepare_data(self, X: jax.Array, observed: jax.Array | None = None) -> dict[str, Any]:
        """Sufficient statistics of ``X (n, p)``: the Gram matrix ``XᵀX (p, p)`` and ``n``.

        With ``observed (n, p)`` (bool: variable k's equation holds in row i, i.e. k is not
        intervened there), one Gram matrix per variable over the rows where its equation
        holds, ``(p, p, p)``, and their row counts ``(p,)``: the cost stays independent of n.
        """
        X = jnp.asarray(X)
        if observed is None:
            return {"gram": X.T @ X, "n_rows": jnp.asarray(X.shape[0], X.dtype)}
        observed = jnp.asarray(observed, X.dtype)
        return {"gram": jnp.einsum("ni,nk,nj->kij", X, observed, X),
                "n_rows": observed.sum(axis=0)}

    def predict_mean(self, weights: Weights, X: jax.Array) -> jax.Array:
        """``X W`` of shape ``(L, n, p)``: each variable's mean given its parents."""
        return jnp.einsum("ni,lij->lnj", X, weights["W"])

    def residual_sum_of_squares(self, weights: Weights, data: dict[str, Any]) -> jax.Array:
        """``‖X[:, k] − X W[:, k]‖²`` for every sample and column, shape ``(L, p)``."""
        W = weights["W"]
        if self.parents is not None:
            table = ParentTable.from_lists(self.parents)
            return rss_on_slots(table.gather(W), data["gram"], table)
        A = jnp.eye(W.shape[-1], dtype=W.dtype) - W
        if data["gram"].ndim == 3:  # one Gram matrix per variable (interventions)
            return jnp.einsum("lik,kij,ljk->lk", A, data["gram"], A)
        return jnp.einsum("lik,ij,ljk->lk", A, data["gram"], A)

    def log_likelihood(self, weights: Weights, data: dict[str, Any],
                       noise_variance: jax.Array) -> jax.Array:
        """Gaussian ``log p(X | W)`` of shape ``(L,)`` summed over rows (over the rows where
        each equation holds, with interventions); ``noise_variance (p,)`` or ``(1,)``
        (shared)."""
        return gaussian_log_likelihood(self.residual_sum_of_squares(weights, data),
                                       data["n_rows"], noise_variance)


@dataclass(frozen=True, eq=False)
class LinearSEMOnSlots:
    """The linear SEM with its weights on each column's candidate parents' slots ``{"W": (L,
    p, K)}`` (``w[l, k, s]`` the weight of ``table.parents[k, s] → k``; ``table``:
    ``prodag.projection.parents.ParentTable``), for kernels that hold many draws, such as the
    refinement's: their state and every step stay ``O(p · K)`` a draw. The graph the
    projection acts on is the slots themselves (a ``CandidateProjector.on_parents``)."""

    table: ParentTable
    edge_weight: ClassVar[str] = "W"
    likelihood: ClassVar[str] = "gaussian"

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """The slots ``(L, p, K)``."""
        return weights_tilde["W"]

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The projected slots ``(L, p, K)``."""
        return {"W": graph}

    def residual_sum_of_squares(self, weights: Weights, data: dict[str, Any]) -> jax.Array:
        """``(L, p)``: ``rss_on_slots`` of the slots."""
        return rss_on_slots(weights["W"], data["gram"], self.table)

    def log_likelihood(self, weights: Weights, data: dict[str, Any],
                       noise_variance: jax.Array) -> jax.Array:
        """Gaussian ``log p(X | W)`` of shape ``(L,)`` (``LinearSEM.log_likelihood``)."""
        return gaussian_log_likelihood(self.residual_sum_of_squares(weights, data),
                                       data["n_rows"], noise_variance)


def rss_on_slots(w: jax.Array, gram: jax.Array, table: ParentTable) -> jax.Array:
    """The residual sums of squares ``(L, p)`` of the weights on each column's candidate
    parents, ``w (L, p, K)`` (``w[l, k, s]`` of the edge ``table.parents[k, s] → k``, zero in
    the padding), from ``gram (p, p)``, or ``(p, p, p)``: one per variable."""
    parents, child = table.parents, table.child
    if gram.ndim == 3:
        diagonal = gram[child[:, 0], child[:, 0], child[:, 0]]
        cross = gram[child, parents, child]
        block = gram[child[:, :, None], parents[:, :, None], parents[:, None, :]]
    else:
        diagonal = jnp.diagonal(gram)
        cross = gram[parents, child]
        block = gram[parents[:, :, None], parents[:, None, :]]
    return (diagonal - 2 * jnp.einsum("lks,ks->lk", w, cross)
            + jnp.einsum("lks,kst,lkt->lk", w, block, w))

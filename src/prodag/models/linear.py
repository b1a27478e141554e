"""The linear-Gaussian structural equation model ``x = Wᵀx + ε``, ``ε ~ N(0, diag(σ²))``.

The weights are one matrix ``{"W": (L, p, p)}``; ``W[j, k]`` is the weight of the edge j → k,
so column ``k`` of ``W`` holds the parents of variable ``k``. The graph the projection acts on
is the weight matrix itself (``W̃ = ω̃``) and the projected weights are the projected graph.

The log-likelihood uses sufficient statistics: with ``A = I − W`` the residuals of column ``k``
are ``X A[:, k]`` and their squared norm is ``A[:, k]ᵀ (XᵀX) A[:, k]``, so one fit step costs
``O(L p³)`` whatever ``n`` is, after one ``O(n p²)`` Gram matrix. On candidate parents
(``parents``: each variable's, at most ``K``) only those weights can be nonzero, and the same
residuals cost ``O(L p K²)``: ``G_kk − 2 wᵀ G[pa, k] + wᵀ G[pa, pa] w`` with ``w = W[pa, k]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from prodag.distributions import ProjectedNormal
from prodag.models import variational
from prodag.models.base import Weights, gaussian_log_likelihood
from prodag.projection import Projector


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
            return self._rss_on_parents(W, data["gram"])
        A = jnp.eye(W.shape[-1], dtype=W.dtype) - W
        if data["gram"].ndim == 3:  # one Gram matrix per variable (interventions)
            return jnp.einsum("lik,kij,ljk->lk", A, data["gram"], A)
        return jnp.einsum("lik,ij,ljk->lk", A, data["gram"], A)

    def _rss_on_parents(self, W: jax.Array, gram: jax.Array) -> jax.Array:
        """The residual sums of squares ``(L, p)`` from each column's candidate parents only
        (``W (L, p, p)`` zero elsewhere; ``gram (p, p)``, or ``(p, p, p)`` per variable)."""
        parents, slot = parent_slots(self.parents)  # (p, K): padded with the variable itself
        child = np.arange(len(self.parents))[:, None]
        w = W[..., parents, child] * slot  # (L, p, K): w[l, k, s] = W[parents[k, s], k]
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

    def log_likelihood(self, weights: Weights, data: dict[str, Any],
                       noise_variance: jax.Array) -> jax.Array:
        """Gaussian ``log p(X | W)`` of shape ``(L,)`` summed over rows (over the rows where
        each equation holds, with interventions); ``noise_variance (p,)`` or ``(1,)``
        (shared)."""
        return gaussian_log_likelihood(self.residual_sum_of_squares(weights, data),
                                       data["n_rows"], noise_variance)


def parent_slots(parents: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each variable's parents as a padded table ``(p, K)`` int (padding: the variable
    itself) and which slots are real ``(p, K)`` bool, ``K`` the most parents of any."""
    width = max(1, max(len(own) for own in parents))
    table = np.array([list(own) + [k] * (width - len(own)) for k, own in enumerate(parents)])
    slot = np.arange(width)[None, :] < np.array([len(own) for own in parents])[:, None]
    return table.reshape(len(parents), width), slot

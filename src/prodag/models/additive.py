"""Nonlinear additive SEM: each edge a linear strength times a learned piecewise-linear shape.

Node ``k`` is explained by

    x_k = Σ_j W_jk (u_jk1 x_j + u_jk2 |x_j|) + b_k + ε_k,    ‖u_jk‖ = 1,

a function of each parent that is linear on either side of the data's centre (slopes
``W_jk (u_jk1 ± u_jk2)``; ``u = (1, 0)`` is a straight line, ``(0, 1)`` a symmetric V). The
graph is the strength matrix ``W`` exactly as in the linear SEM (``W̃`` Gaussian,
``W = project(W̃, λ)``), and the size of edge j → k's effect is ``|W_jk|`` whatever its
shape, as in the nonlinear issue's candidate ``ω_jk = W_jk v_jk / ‖v_jk‖``. The shape weights
``V`` (``u = (e₁ + v) / ‖e₁ + v‖``, so the prior's mean is the straight line) and the
intercepts ``b`` are further Gaussian weights outside the projection. A non-edge's strength
shrinks with ``n`` as a linear weight does, and its shape then has no effect on the
likelihood, so it stays at the prior at no cost in KL. (An MLP's first-layer group of a
non-edge keeps the prior's spread and the projection cannot tell edges from noise.)

The likelihood depends on the weights only through the coefficients ``θ_k`` of the features
``F = (x_1, |x_1|, …, x_p, |x_p|, 1)`` of width ``D = 2p + 1``, so it keeps the linear SEM's
sufficient statistics: ``‖x_k − F θ_k‖² = x_kᵀx_k − 2 θ_kᵀ Fᵀx_k + θ_kᵀ (FᵀF) θ_k``, and a
step costs ``O(L p D²)`` whatever ``n`` is.

Both features are positively homogeneous (``φ(c x) = c φ(x)`` for ``c > 0``), so, like the
linear SEM, the model is equivariant to a common change of the data's units.

Weights of one sample::

    W: (p, p)      strength of the edge j → k (the projected graph)
    V: (p, p, 2)   shape of that edge, ``u_jk = (e₁ + V_jk) / ‖e₁ + V_jk‖``
    b: (p,)        each node's intercept (``|x|`` is not centred)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from prodag.models.base import Weights, draw_through_graph, gaussian_log_likelihood
from prodag.models.mlp import safe_group_norm
from prodag.models.variational import VariationalParams
from prodag.projection import Projector


def features(X: jax.Array, xp=jnp) -> jax.Array:
    """``F (n, 2p + 1)``: ``x_j`` at column ``2j``, ``|x_j|`` at ``2j + 1``, then a 1
    (``xp=numpy`` computes it in numpy, at the input's precision)."""
    n = X.shape[0]
    pairs = xp.stack([X, xp.abs(X)], axis=-1).reshape(n, -1)
    return xp.concatenate([pairs, xp.ones((n, 1), X.dtype)], axis=1)


def shape_directions(V: jax.Array) -> jax.Array:
    """Unit vectors ``u_jk = (e₁ + v_jk) / ‖e₁ + v_jk‖`` of shape ``(L, p, p, 2)`` from the
    shape weights ``V (L, p, p, 2)``: ``v = 0`` (the prior's mean and the linear data start)
    is the linear shape ``(1, 0)``."""
    u = V.at[..., 0].add(1.0)
    norm = safe_group_norm(u)[..., None]
    return u / jnp.where(norm > 0, norm, 1.0)


def coefficients(weights: Weights) -> jax.Array:
    """``Θ (L, 2p + 1, p)``: column ``k`` holds node ``k``'s coefficients of ``features``,
    ``W_jk u_jk`` for every parent j, then ``b_k``."""
    W, b = weights["W"], weights["b"]
    n_samples, p = W.shape[:2]
    pairs = W[..., None] * shape_directions(weights["V"])  # [l, j, k, a]
    pairs = jnp.moveaxis(pairs, 3, 2).reshape(n_samples, 2 * p, p)  # [l, 2j + a, k]
    return jnp.concatenate([pairs, b[:, None, :]], axis=1)


def weights_of(theta: np.ndarray) -> dict[str, np.ndarray]:
    """The weights ``W (p, p)``, ``V (p, p, 2)``, ``b (p,)`` of one sample whose
    ``coefficients`` are ``theta (2p + 1, p)``: the inverse of ``coefficients`` (numpy).

    Each edge's pair ``(a, c)`` of coefficients becomes the strength ``W = ±‖(a, c)‖`` and the
    unit shape ``u = ±(a, c)/‖(a, c)‖``, the sign chosen so that ``u₁ ≥ 0`` (a shape close to
    the prior's straight line), and ``V = u − e₁``; a zero pair gives ``W = 0``, ``V = 0``.
    """
    theta = np.asarray(theta, dtype=float)
    p = theta.shape[1]
    pairs = np.moveaxis(theta[:-1].reshape(p, 2, p), 1, 2)  # [j, k, a]
    norm = np.linalg.norm(pairs, axis=-1)
    sign = np.where(pairs[..., 0] < 0, -1.0, 1.0)
    u = sign[..., None] * pairs / np.where(norm > 0, norm, 1.0)[..., None]
    V = np.where(norm[..., None] > 0, u - np.array([1.0, 0.0]), 0.0)
    return {"W": sign * norm, "V": V, "b": theta[-1].copy()}


@dataclass(frozen=True)
class AdditiveSEM:
    """Additive piecewise-linear SEM; stateless, so one instance serves every fit."""

    edge_weight: ClassVar[str] = "W"

    def weight_shapes(self, p: int) -> dict[str, tuple[int, ...]]:
        """``W (p, p)``, ``V (p, p, 2)`` and ``b (p,)`` (see the module docstring)."""
        return {"W": (p, p), "V": (p, p, 2), "b": (p,)}

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """``W̃ = ω̃["W"]`` of shape ``(L, p, p)``."""
        return weights_tilde["W"]

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The projected strengths ``W (L, p, p)``; shapes and intercepts as they are."""
        return {**weights_tilde, "W": graph}

    def draw(self, q: VariationalParams, key: jax.Array, n_samples: int, project: Projector,
             lam: jax.Array) -> tuple[Weights, jax.Array]:
        """``n_samples`` projected weights and their graphs ``W (L, p, p)`` (``base.py``)."""
        return draw_through_graph(self, q, key, n_samples, project, lam)

    def prepare_data(self, X: jax.Array, observed: jax.Array | None = None) -> dict[str, Any]:
        """Sufficient statistics of ``X (n, p)``: ``FᵀF (D, D)``, ``FᵀX (D, p)``, the squared
        norms of the columns ``(p,)`` and the row count. With ``observed (n, p)`` (variable
        k's equation holds in row i) each is taken per variable over its rows:
        ``(p, D, D)``, ``(D, p)``, ``(p,)`` and ``(p,)``."""
        X = jnp.asarray(X)
        F = features(X)
        if observed is None:
            return {"gram": F.T @ F, "cross": F.T @ X, "squares": jnp.sum(X * X, axis=0),
                    "n_rows": jnp.asarray(X.shape[0], X.dtype)}
        weight = jnp.asarray(observed, X.dtype)
        return {"gram": jnp.einsum("na,nk,nb->kab", F, weight, F),
                "cross": jnp.einsum("na,nk->ak", F, weight * X),
                "squares": jnp.sum(weight * X * X, axis=0), "n_rows": weight.sum(axis=0)}

    def predict_mean(self, weights: Weights, X: jax.Array) -> jax.Array:
        """``F Θ`` of shape ``(L, n, p)``: each variable's mean given its parents."""
        return jnp.einsum("na,lak->lnk", features(jnp.asarray(X)), coefficients(weights))

    def residual_sum_of_squares(self, weights: Weights, data: dict[str, Any]) -> jax.Array:
        """``‖x_k − F θ_k‖²`` for every sample and column, shape ``(L, p)``."""
        theta = coefficients(weights)
        if data["gram"].ndim == 3:  # one Gram matrix per variable (interventions)
            quadratic = jnp.einsum("lak,kab,lbk->lk", theta, data["gram"], theta)
        else:
            quadratic = jnp.einsum("lak,ab,lbk->lk", theta, data["gram"], theta)
        return data["squares"] - 2 * jnp.einsum("lak,ak->lk", theta, data["cross"]) + quadratic

    def log_likelihood(self, weights: Weights, data: dict[str, Any],
                       noise_variance: jax.Array) -> jax.Array:
        """Gaussian ``log p(X | ω)`` of shape ``(L,)`` summed over rows (over the rows where
        each equation holds, with interventions); ``noise_variance (p,)`` or ``(1,)``."""
        return gaussian_log_likelihood(self.residual_sum_of_squares(weights, data),
                                       data["n_rows"], noise_variance)

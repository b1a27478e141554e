"""Student-t noise for any SEM: heavy tails, so a few gross outliers do not bend the fit.

``StudentTNoise(model)`` is ``model`` with ``ε_k ~ t_ν(0, σ_k²)`` in place of ``N(0, σ_k²)``:
the weights, the graph, the projection and the mean function are the wrapped model's, and only
the likelihood changes. ``noise_variance`` is the squared scale ``σ²`` (the noise's variance
is ``σ² ν / (ν − 2)``). A residual of ``z`` scales costs ``(ν + 1)/2 · log(1 + z²/ν)``: it
grows like ``log |z|`` instead of ``z²/2``, so one value a million scales off moves the fit
about as much as a few ordinary ones.

The Student-t density has no sufficient statistics, so the likelihood needs every row's
residuals: a step costs ``O(L n p²)`` for the linear SEM against ``O(L p³)`` with Gaussian
noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from prodag.models.base import StructuralEquationModel, Weights, rows_data
from prodag.models.variational import VariationalParams
from prodag.projection import Projector

STUDENT_DOF = 4.0
"""Degrees of freedom ``ν`` of the noise: the smallest integer with a finite variance left
after the outliers, a common robust choice (Lange, Little & Taylor, 1989)."""


def student_t_log_density(residual: jax.Array, scale_squared: jax.Array,
                          dof: float) -> jax.Array:
    """``log t_ν(r; 0, σ²)`` elementwise; ``scale_squared`` broadcasts against ``residual``."""
    half = 0.5 * (dof + 1.0)
    return (gammaln(half) - gammaln(0.5 * dof) - 0.5 * jnp.log(dof * jnp.pi * scale_squared)
            - half * jnp.log1p(residual * residual / (dof * scale_squared)))


@dataclass(frozen=True)
class StudentTNoise:
    """``model`` with Student-t noise of ``dof`` degrees of freedom (see the module docstring)."""

    model: StructuralEquationModel
    dof: float = STUDENT_DOF

    @property
    def edge_weight(self) -> str:
        """The wrapped model's edge weight."""
        return self.model.edge_weight

    def weight_shapes(self, p: int) -> dict[str, tuple[int, ...]]:
        """The wrapped model's weights."""
        return self.model.weight_shapes(p)

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """The wrapped model's ``W̃ (L, p, p)``."""
        return self.model.graph_of(weights_tilde)

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The wrapped model's projected weights."""
        return self.model.apply_projection(weights_tilde, graph_tilde, graph)

    def draw(self, q: VariationalParams, key: jax.Array, n_samples: int, project: Projector,
             lam: jax.Array) -> tuple[Weights, jax.Array]:
        """The wrapped model's draws ``(ω, W (L, p, p))``."""
        return self.model.draw(q, key, n_samples, project, lam)

    def prepare_data(self, X: jax.Array, observed: jax.Array | None = None) -> dict[str, Any]:
        """``rows_data``: the Student-t density needs every row's residuals."""
        return rows_data(X, observed)

    def predict_mean(self, weights: Weights, X: jax.Array) -> jax.Array:
        """The wrapped model's ``f_ω(X)``, ``(L, n, p)``."""
        return self.model.predict_mean(weights, X)

    def log_likelihood(self, weights: Weights, data: dict[str, Any],
                       noise_variance: jax.Array) -> jax.Array:
        """Student-t ``log p(X | ω)`` of shape ``(L,)`` summed over rows (over the rows where
        each equation holds, with interventions); ``noise_variance (p,)`` or ``(1,)`` is the
        squared scale."""
        X = data["X"]
        residual = X - self.model.predict_mean(weights, X)
        scale_squared = jnp.broadcast_to(jnp.asarray(noise_variance, residual.dtype),
                                         X.shape[1:])
        density = student_t_log_density(residual, scale_squared, self.dof)
        if "observed" in data:
            density = density * data["observed"]
        return jnp.sum(density, axis=(-2, -1))

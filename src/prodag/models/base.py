"""The contract every structural equation model (SEM) in prodag fulfils.

A model describes the weights ``ω`` of an SEM whose graph is a projected distribution:

1. ``ω̃ ~ q(ω̃)``: a mean-field Gaussian over every weight (the inference engine draws it);
2. ``W̃ = model.graph_of(ω̃)``: the continuous ``(L, p, p)`` matrix the projection acts on
   (linear: ``W̃ = ω̃``; MLP: ``W̃_jk = ‖ω̃_jk‖₂`` over the first-layer weight group of j → k);
3. ``W = prodag.project(W̃, λ)``: exact DAGs, differentiable in ``W̃`` and ``λ``;
4. ``ω = model.apply_projection(ω̃, W̃, W)``: the projected weights (linear: ``W``; MLP: each
   first-layer group rescaled by ``W_jk / W̃_jk``, Prop. 2 of the paper);
5. ``model.log_likelihood(ω, data, noise_variance)``: one value per sample.

``model.draw(q, key, L, project, λ)`` performs steps 1–4 (``draw_through_graph`` is the generic
version; the linear SEM draws from ``prodag.ProjectedNormal``). A training step needs only the
draws' log-likelihoods: ``draw_log_likelihood`` uses the model's own shortcut where it has one
(the linear SEM on candidate parents draws their slots alone), else steps 1–5.

Weights are a pytree (a dict of arrays). ``weight_shapes(p)`` gives the shapes of one sample;
every array the inference engine passes in has an extra leading sample axis of length L.
Everything here must be pure JAX, traceable under ``jax.jit`` and ``jax.grad``, with no Python
loop over samples or nodes.
"""

from __future__ import annotations

from typing import Any, Protocol

import jax
import jax.numpy as jnp

from prodag.models import variational
from prodag.projection import Projector

Weights = dict[str, jax.Array]
"""A pytree of weight arrays, each with a leading sample axis ``(L, ...)``."""


class StructuralEquationModel(Protocol):
    """An SEM family ``x = f_ω(x) + ε`` with ``ε ~ N(0, diag(noise_variance))``."""

    edge_weight: str
    """Name of the weight whose leading ``(p, p)`` axes are the edges j → k (the weights a
    forbidden edge fixes at the prior)."""

    def weight_shapes(self, p: int) -> dict[str, tuple[int, ...]]:
        """Shapes of one sample of the weights for ``p`` variables (no sample axis)."""

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """The continuous matrix ``W̃`` of shape ``(L, p, p)``; ``[j, k]`` is the edge j → k."""

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The projected weights ``ω`` given ``ω̃``, ``W̃ (L, p, p)`` and ``W = project(W̃)``."""

    def draw(self, q: variational.VariationalParams, key: jax.Array, n_samples: int,
             project: Projector, lam: jax.Array) -> tuple[Weights, jax.Array]:
        """``n_samples`` projected weights ``ω`` (leading axis L) and graphs ``W (L, p, p)``."""

    def prepare_data(self, X: jax.Array) -> Any:
        """Precompute what ``log_likelihood`` needs from the data ``X (n, p)`` (a pytree)."""

    def predict_mean(self, weights: Weights, X: jax.Array) -> jax.Array:
        """``f_ω(X)`` of shape ``(L, n, p)``: each variable's mean given the others."""

    def log_likelihood(self, weights: Weights, data: Any, noise_variance: jax.Array) -> jax.Array:
        """``log p(X | ω)`` of shape ``(L,)``, summed over rows; ``noise_variance`` is ``(p,)``."""


def rows_data(X: jax.Array, observed: jax.Array | None = None) -> dict[str, jax.Array]:
    """The data of a likelihood that needs every row: ``{"X": (n, p)}``, and with
    ``observed (n, p)`` (variable k's equation holds in row i) that mask as 0/1."""
    X = jnp.asarray(X)
    if observed is None:
        return {"X": X}
    return {"X": X, "observed": jnp.asarray(observed, X.dtype)}


def gaussian_log_likelihood(rss: jax.Array, n_rows: jax.Array,
                            noise_variance: jax.Array) -> jax.Array:
    """Gaussian ``log p(X | ω)`` of shape ``(L,)`` from each column's residual sum of squares
    ``rss (L, p)`` over its ``n_rows`` (scalar or ``(p,)``) rows; ``noise_variance (p,)`` or
    ``(1,)`` (shared)."""
    noise_variance = jnp.broadcast_to(noise_variance, rss.shape[-1:])
    log_norm = jnp.sum(n_rows * jnp.log(2 * jnp.pi * noise_variance))
    return -0.5 * (jnp.sum(rss / noise_variance, axis=-1) + log_norm)


def draw_through_graph(model: StructuralEquationModel, q: variational.VariationalParams,
                       key: jax.Array, n_samples: int, project: Projector,
                       lam: jax.Array) -> tuple[Weights, jax.Array]:
    """Steps 1–4 above: ``ω̃ ~ q``, ``W̃ = graph_of(ω̃)``, ``W = project(W̃, λ)`` and the
    projected weights ``ω``; returns ``(ω, W (L, p, p))``."""
    weights_tilde = variational.sample(q, key, n_samples)
    graph_tilde = model.graph_of(weights_tilde)
    graph = project(graph_tilde, lam)
    return model.apply_projection(weights_tilde, graph_tilde, graph), graph


def draw_log_likelihood(model: StructuralEquationModel, q: variational.VariationalParams,
                        key: jax.Array, n_samples: int, project: Projector, lam: jax.Array,
                        data: Any, noise_variance: jax.Array) -> jax.Array:
    """``log p(X | ω_l)`` ``(L,)`` of ``n_samples`` projected draws ``ω_l``: the model's
    ``draw_log_likelihood`` where it has one, else ``draw`` then ``log_likelihood``."""
    own = getattr(model, "draw_log_likelihood", None)
    if own is not None:
        return own(q, key, n_samples, project, lam, data, noise_variance)
    weights, _ = model.draw(q, key, n_samples, project, lam)
    return model.log_likelihood(weights, data, noise_variance)

"""Nonlinear SEM: one multilayer perceptron per node, all nodes evaluated together.

Node ``k`` is explained by ``x_k = f_k(x) + ε_k`` where ``f_k`` is an MLP on the full input
``x ∈ R^p``. The first-layer weight group ``ω_jk ∈ R^d`` (input ``j`` into node ``k``'s
network) decides whether ``x_j`` can affect ``x_k``: ``f_k`` ignores ``x_j`` exactly when
``ω_jk = 0``. So the SEM's graph is ``W̃_jk = ‖ω̃_jk‖₂`` and the projection of the paper's
Proposition 2 rescales each group by ``W_jk / W̃_jk``, leaving deeper layers untouched.

Weights of one sample (``d = hidden_units``, ``H = hidden_layers``)::

    W1: (p, p, d)   first layer, [j, k, :] = ω_jk, input j → hidden units of node k's network
    b1: (p, d)
    W2 … WH: (p, d, d)   further hidden layers, one (d, d) matrix per node
    b2 … bH: (p, d)
    W{H+1}: (p, d)  output layer of each node's network
    b{H+1}: (p,)

Biases are left out when ``bias=False``. Every array the inference engine passes in carries
a leading sample axis ``L``. All nodes and samples are evaluated in a handful of einsums.

``bias=False`` matches the paper's simulator, whose networks have no biases; with biases the
fitted networks tend to stay almost linear.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from prodag.models.base import Weights, draw_through_graph, rows_data
from prodag.models.variational import VariationalParams
from prodag.projection import Projector

ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "relu": jax.nn.relu,
    "sigmoid": jax.nn.sigmoid,
    "tanh": jnp.tanh,
    "elu": jax.nn.elu,
    "gelu": jax.nn.gelu,
    "softplus": jax.nn.softplus,
}
"""Hidden-layer activations ``MLPSEM`` accepts, by name."""


def safe_group_norm(groups: jax.Array) -> jax.Array:
    """Euclidean norm over the last axis whose gradient is 0 (not NaN) at the zero vector.

    ``groups (..., d)`` → ``(...)``.
    """
    squared = jnp.sum(groups * groups, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def group_scale(graph_tilde: jax.Array, graph: jax.Array) -> jax.Array:
    """The factor ``W_jk / W̃_jk`` (0 where ``W̃_jk = 0``), differentiable everywhere.

    ``graph_tilde``, ``graph``: ``(..., p, p)`` → ``(..., p, p)``.
    """
    nonzero = graph_tilde > 0
    return jnp.where(nonzero, graph / jnp.where(nonzero, graph_tilde, 1.0), 0.0)


@dataclass(frozen=True)
class MLPSEM:
    """Nonlinear SEM ``x = f_ω(x) + ε`` with one MLP per node (paper Section 5).

    Parameters
    ----------
    hidden_units:
        Neurons ``d`` in every hidden layer (the paper uses 10).
    activation:
        Name of the hidden activation, one of ``ACTIVATIONS`` (the paper uses ``"relu"``).
    bias:
        Whether every layer has a bias.
    hidden_layers:
        Number of hidden layers ``H ≥ 1``; only the first one is projected.

    The first layer carries the graph (the paper): ``W̃_jk = ‖ω̃_jk‖₂``, and Prop. 2 rescales
    each group ``ω̃_jk`` to the projected ``W_jk``.
    """

    hidden_units: int = 10
    activation: str = "relu"
    bias: bool = True
    hidden_layers: int = 1

    def __post_init__(self):
        for name in ("hidden_units", "hidden_layers"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
            object.__setattr__(self, name, int(value))
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"Unknown activation {self.activation!r}; choose one of "
                             f"{sorted(ACTIVATIONS)}.")
        object.__setattr__(self, "bias", bool(self.bias))

    @property
    def edge_weight(self) -> str:
        """The weight whose leading ``(p, p)`` axes are the edges."""
        return "W1"

    # ------------------------------------------------------------------ weights and graph
    def weight_shapes(self, p: int) -> dict[str, tuple[int, ...]]:
        """Shapes of one sample of the weights for ``p`` variables (see the module docstring)."""
        d, output = self.hidden_units, self.hidden_layers + 1
        shapes: dict[str, tuple[int, ...]] = {"W1": (p, p, d)}
        if self.bias:
            shapes["b1"] = (p, d)
        for layer in range(2, output):
            shapes[f"W{layer}"] = (p, d, d)
            if self.bias:
                shapes[f"b{layer}"] = (p, d)
        shapes[f"W{output}"] = (p, d)
        if self.bias:
            shapes[f"b{output}"] = (p,)
        return shapes

    def graph_of(self, weights_tilde: Weights) -> jax.Array:
        """``W̃ (L, p, p)``: the group norms ``‖ω̃_jk‖₂`` of ``W1 (L, p, p, d)``."""
        return safe_group_norm(weights_tilde["W1"])

    def apply_projection(self, weights_tilde: Weights, graph_tilde: jax.Array,
                         graph: jax.Array) -> Weights:
        """The first layer ``W1`` of the projected graph ``W (L, p, p)``: each group rescaled
        by ``W_jk / W̃_jk`` (Prop. 2); other layers as they are."""
        weights = dict(weights_tilde)
        weights["W1"] = weights_tilde["W1"] * group_scale(graph_tilde, graph)[..., None]
        return weights

    def draw(self, q: VariationalParams, key: jax.Array, n_samples: int, project: Projector,
             lam: jax.Array) -> tuple[Weights, jax.Array]:
        """``n_samples`` projected networks and their graphs ``(L, p, p)`` (see ``base.py``)."""
        return draw_through_graph(self, q, key, n_samples, project, lam)

    # ------------------------------------------------------------------ likelihood
    def prepare_data(self, X: jax.Array, observed: jax.Array | None = None) -> dict:
        """``rows_data``: the network needs every row."""
        return rows_data(X, observed)

    def predict_mean(self, weights: Weights, X: jax.Array) -> jax.Array:
        """``f_ω(X)`` of shape ``(L, n, p)`` for weights with sample axis ``L`` and ``X (n, p)``."""
        act = ACTIVATIONS[self.activation]
        output = self.hidden_layers + 1
        # first layer: hidden[l, i, k, :] = act(Σ_j X[i, j] W1[l, j, k, :] + b1[l, k, :]),
        # as one batched matmul over the flattened (k, d) axis (faster than the einsum on CPU)
        W1 = weights["W1"]
        n_samples, p, _, d = W1.shape
        hidden = jnp.matmul(X, W1.reshape(n_samples, p, p * d)).reshape(n_samples, -1, p, d)
        hidden = act(self._add_bias(hidden, weights, 1))
        for layer in range(2, output):
            hidden = jnp.einsum("likd,lkde->like", hidden, weights[f"W{layer}"])
            hidden = act(self._add_bias(hidden, weights, layer))
        mean = jnp.einsum("likd,lkd->lik", hidden, weights[f"W{output}"])
        return self._add_bias(mean, weights, output)

    def _add_bias(self, values: jax.Array, weights: Weights, layer: int) -> jax.Array:
        """Add layer ``layer``'s bias (``(L, p, ...)``) to ``values (L, n, p, ...)``."""
        if not self.bias:
            return values
        return values + weights[f"b{layer}"][:, None]

    def log_likelihood(self, weights: Weights, data: jax.Array,
                       noise_variance: jax.Array) -> jax.Array:
        """Gaussian ``log p(X | ω)`` summed over rows: ``(L,)``; ``noise_variance`` is ``(p,)``
        or ``(1,)`` (shared)."""
        X = data["X"]
        residual = X - self.predict_mean(weights, X)
        noise_variance = jnp.broadcast_to(jnp.asarray(noise_variance, dtype=residual.dtype),
                                          X.shape[1:])
        squared = residual * residual
        if "observed" in data:  # intervened variables' equations drop out of their rows
            squared = squared * data["observed"]
            n_rows = data["observed"].sum(axis=0)
        else:
            n_rows = jnp.full(X.shape[1], X.shape[0], X.dtype)
        quadratic = jnp.einsum("lik,k->l", squared, 1.0 / noise_variance)
        normaliser = jnp.sum(n_rows * jnp.log(2 * jnp.pi * noise_variance))
        return -0.5 * (quadratic + normaliser)

"""The paper's path-following projection (Alg. 2, Appendix B), followed by a cycle clean-up.

Per sample: scale ``W̃`` by ``c = max|W̃|``; start at ``W = 0``, ``μ = 1``; for each of
``n_stages`` stages run gradient descent on

    μ/2 ‖W̃/c − W‖²_F − log det(sI − W ∘ W)

(gradient ``μ(W − W̃/c) + 2 (sI − W∘W)^{-T} ∘ W``) with a fixed step until
``max|grad| ≤ tol`` or ``max_steps`` steps, then halve ``μ``. Finally keep the entries with
``|c · W| > threshold`` and copy ``W̃`` onto that support. The log-det barrier does not make
that support exactly acyclic, so the remaining cycles are broken by removing edges on cycles,
lightest first (``prodag.projection.cycles.remove_cycles``); the number of removed edges is reported.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from prodag.projection.cycles import remove_cycles


def path_descent(target: jax.Array, mu: jax.Array, start: jax.Array, step_size: float,
                 tol: float, max_steps: int, s: float = 1.0) -> jax.Array:
    """Gradient descent for one stage on one ``(p, p)`` sample; returns the final ``W``."""
    p = target.shape[-1]
    identity = jnp.eye(p, dtype=target.dtype)
    off_diagonal = 1 - identity

    def gradient(W):
        inverse = jnp.linalg.inv(s * identity - W * W)
        return (mu * (W - target) + 2 * inverse.T * W) * off_diagonal

    def keep_going(state):
        _, grad, n_steps = state
        return (jnp.max(jnp.abs(grad)) > tol) & (n_steps < max_steps)

    def step(state):
        W, grad, n_steps = state
        W = W - step_size * grad
        return W, gradient(W), n_steps + 1

    return jax.lax.while_loop(keep_going, step, (start, gradient(start), jnp.int32(0)))[0]


def path_support(W_tilde: jax.Array, tol: float = 1e-2, max_steps: int = 10_000,
                 step_size: float | None = None, threshold: float = 0.1,
                 n_stages: int = 10) -> tuple[jax.Array, jax.Array]:
    """Acyclic support for one ``(p, p)`` sample by the path algorithm plus clean-up.

    Args:
        W_tilde: ``(p, p)`` continuous matrix.
        tol: stop a stage when ``max|grad| ≤ tol`` (1e-2 for training, 1e-4 for sampling).
        max_steps: cap on gradient steps per stage.
        step_size: gradient step (default ``1/p``; the paper uses ``0.25/p`` for MLPs).
        threshold: keep entries whose rescaled magnitude exceeds this.
        n_stages: number of halvings of ``μ``.

    Returns:
        ``(support (p, p) bool, n_removed int32)``: an acyclic support inside that of ``W̃`` and
        the number of edges the clean-up removed.
    """
    p = W_tilde.shape[-1]
    step_size = 1.0 / p if step_size is None else step_size
    scale = jnp.max(jnp.abs(W_tilde))
    scale = jnp.where(scale > 0, scale, 1.0)
    target = W_tilde / scale

    def stage(index, W):
        mu = jnp.asarray(0.5, W_tilde.dtype) ** index
        return path_descent(target, mu, W, step_size, tol, max_steps)

    W = jax.lax.fori_loop(0, n_stages, stage, jnp.zeros_like(W_tilde))
    support = (jnp.abs(scale * W) > threshold) & (W_tilde != 0)
    return remove_cycles(support, W_tilde)

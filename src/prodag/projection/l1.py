"""Euclidean projection of a matrix onto the ℓ1 ball (Duchi et al., 2008), with its gradient.

For one sample ``v`` (all p² entries of a matrix) and radius ``λ``, the projection is the
soft-threshold ``w = sign(v) · max(|v| − θ, 0)`` where ``θ ≥ 0`` solves ``Σ max(|v| − θ, 0) = λ``,
or ``w = v`` when ``‖v‖₁ ≤ λ`` already. It is computed from the gaps to the largest magnitude,
which keeps it exact in float32 and float64 down to the smallest radii. ``λ = ∞`` leaves ``v`` unchanged; ``λ = 0`` gives zeros.

The backward pass is Prop. 3 of the paper (Appendix D), computed from the output alone: with the
active set ``A = {w ≠ 0}`` and ``s = sign(w)``, when the ball binds
``∂w/∂v = δ − s ⊗ s / |A|`` and ``∂w/∂λ = s / |A|`` on ``A``; otherwise the identity on ``A`` and
no λ-gradient. Everything off ``A`` gets zero gradient.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _level_below_max(gaps: jax.Array, lam: jax.Array) -> jax.Array:
    """``τ = max|v| − θ`` for one flat sample, from the ``gaps (n,) = max|v| − |v|``.

    The threshold ``θ`` solves ``Σ max(|v| − θ, 0) = λ``; in the gaps it is
    ``Σ max(τ − gap, 0) = λ``, so the kept entries are ``τ − gap``. Michelot's (1986) fixed
    point, which needs no sort: with ``A`` the entries whose gap is below ``τ``,
    ``τ ← (Σ_A gap + λ) / |A|`` from ``A`` = all entries, until ``A`` stops shrinking (``τ``
    only falls, so a few O(n) passes; stopping when ``A`` does not shrink, rather than when it
    is unchanged, ends the loop even where rounding would make ``τ`` oscillate). Working with
    the gaps, not with ``θ``, keeps the result exact for any ``λ > 0``: ``θ = (Σ_A|v| − λ)/|A|``
    loses a λ below the rounding of ``Σ|v|`` (in float32 every ``λ ≤ 1e-7``), whereas ``τ``
    and ``τ − gap`` are small numbers computed from small numbers. Assumes ``Σ|v| > λ > 0``
    (the caller keeps ``v`` otherwise, and zeroes it for ``λ = 0``).
    """
    finite_lam = jnp.where(jnp.isfinite(lam), lam, 0.0)

    def shrink(state):
        tau, count, _ = state
        active = gaps < tau
        new_count = active.sum(dtype=jnp.int32)
        total = jnp.where(active, gaps, 0.0).sum()
        tau = (total + finite_lam) / jnp.maximum(new_count, 1).astype(gaps.dtype)
        return tau, new_count, new_count >= count  # >=: rounding may not shrink ``A``

    n = gaps.shape[0]
    start = ((gaps.sum() + finite_lam) / n, jnp.int32(n), ~(finite_lam > 0))
    return jax.lax.while_loop(lambda state: ~state[2], shrink, start)[0]


def _project_one(matrix: jax.Array, lam: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Project one ``(p, p)`` matrix; returns ``(W, binding)`` with ``binding`` a bool scalar."""
    magnitudes = jnp.abs(matrix)
    binding = magnitudes.sum() > lam
    gaps = magnitudes.max() - magnitudes
    tau = _level_below_max(gaps.reshape(-1), lam)
    kept = jnp.where(lam > 0, jnp.maximum(tau - gaps, 0.0), 0.0)
    return jnp.where(binding, jnp.sign(matrix) * kept, matrix), binding


def _forward(matrices: jax.Array, lam: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``matrices (B, p, p)``, ``lam (B,)`` → ``(W (B, p, p), binding (B,))``."""
    return jax.vmap(_project_one)(matrices, lam)


@jax.custom_vjp
def _l1_flat(matrices: jax.Array, lam: jax.Array) -> jax.Array:
    return _forward(matrices, lam)[0]


def _l1_flat_fwd(matrices, lam):
    projected, binding = _forward(matrices, lam)
    return projected, (projected, binding, lam)


def _l1_flat_bwd(residuals, cotangent):
    projected, binding, lam = residuals
    grad_matrix, grad_lam = l1_projection_vjp(projected, binding, cotangent)
    return grad_matrix, grad_lam.astype(lam.dtype)


_l1_flat.defvjp(_l1_flat_fwd, _l1_flat_bwd)


def l1_projection_vjp(projected: jax.Array, binding: jax.Array,
                      cotangent: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Prop. 3 vector-Jacobian product from the output ``W``.

    Args:
        projected: the output ``W``, shape ``(B, p, p)``.
        binding: ``(B,)`` bools, whether the ℓ1 ball was active for each sample.
        cotangent: ``∂L/∂W``, shape ``(B, p, p)``.

    Returns:
        ``(∂L/∂W_input (B, p, p), ∂L/∂λ (B,))``.
    """
    active = projected != 0
    signs = jnp.sign(projected)
    n_active = jnp.maximum(active.sum(axis=(-2, -1)), 1).astype(cotangent.dtype)
    g = jnp.where(active, cotangent, 0.0)
    signed_mean = (g * signs).sum(axis=(-2, -1)) / n_active
    grad_matrix = jnp.where(binding[:, None, None], g - signs * signed_mean[:, None, None], g)
    grad_lam = jnp.where(binding, signed_mean, 0.0)
    return grad_matrix, grad_lam


def l1_ball_projection(W: jax.Array, lam) -> jax.Array:
    """Project each ``(p, p)`` matrix of ``W (..., p, p)`` onto ``{‖·‖₁ ≤ λ}``.

    Args:
        W: array of shape ``(..., p, p)``, float32 or float64.
        lam: radius, a scalar or an array broadcastable to the batch shape ``(...)``;
            ``inf`` means no constraint. Differentiable (may be a traced value).

    Returns:
        The projected matrices, shape and dtype of ``W``.
    """
    W = jnp.asarray(W)
    if not jnp.issubdtype(W.dtype, jnp.floating):
        W = W.astype(jnp.result_type(float))
    batch_shape = W.shape[:-2]
    lam = jnp.broadcast_to(jnp.asarray(lam, dtype=W.dtype), batch_shape)
    flat = W.reshape((-1,) + W.shape[-2:])
    projected = _l1_flat(flat, lam.reshape(-1))
    return projected.reshape(W.shape)

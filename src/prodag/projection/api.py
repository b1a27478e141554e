"""``project``: the ProDAG projection ``pro_λ(W̃)`` onto sparse DAGs, batched and differentiable.

``project(W̃, λ) = ℓ1-ball(acyclic(W̃), λ)``. The acyclic step keeps ``W̃`` on the forward
entries of a topological order found by the chosen method; the order is a discrete choice, so
no gradient flows through it (``stop_gradient``) and the step acts as the identity on its
support. The ℓ1 step carries the custom VJP of Prop. 3, so the composition has exactly the
paper's backward pass: computed from the output ``W`` alone, per sample.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np

from prodag.projection.exact import EXACT_MAX_NODES, exact_positions
from prodag.projection.l1 import l1_ball_projection
from prodag.projection.orders import forward_mask
from prodag.projection.path import path_support
from prodag.projection.search import MAX_SWEEPS, REL_TOL, search_positions
from prodag.projection.search_kernel import positions_on_host, uses_kernel

METHODS = ("auto", "exact", "search", "path")

AUTO_EXACT_MAX_NODES = 9
"""``method="auto"`` uses the exact DP up to this many nodes and local search above: the DP is
optimal and its cost doubles per node (L = 100 on the 2-core CPU: about 7 ms at p = 10, 19 ms at
p = 12, where the search is 0.3-0.4% above the optimum; ``docs/findings.md``)."""

_OPTIONS = {
    "exact": (),
    "search": ("n_kicks", "n_rounds", "max_sweeps", "rel_tol"),
    "path": ("tol", "max_steps", "step_size", "threshold", "n_stages"),
}


def _resolve_method(method: str, p: int) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {METHODS}.")
    if method == "auto":
        return "exact" if p <= AUTO_EXACT_MAX_NODES else "search"
    if method == "exact" and p > EXACT_MAX_NODES:
        raise ValueError(
            f'method="exact" supports at most p = {EXACT_MAX_NODES} nodes (got p = {p}); '
            'use method="search" (or "auto") for larger graphs.')
    return method


def _check_input(W_tilde) -> jax.Array:
    """Shape, dtype and finiteness checks; returns a floating JAX array ``(..., p, p)``."""
    if not isinstance(W_tilde, jax.core.Tracer):
        if not np.all(np.isfinite(np.asarray(W_tilde))):
            raise ValueError(
                "W_tilde contains NaN or infinite entries; the projection needs finite weights "
                "(check the variational parameters or the input data).")
    W_tilde = jnp.asarray(W_tilde)
    if W_tilde.ndim < 2 or W_tilde.shape[-1] != W_tilde.shape[-2]:
        raise ValueError(
            f"W_tilde must have shape (..., p, p) with square last two axes; got {W_tilde.shape}.")
    if not jnp.issubdtype(W_tilde.dtype, jnp.floating):
        W_tilde = W_tilde.astype(jnp.result_type(float))
    return W_tilde


def _check_options(method: str, options: dict) -> tuple:
    allowed = _OPTIONS[method]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"unknown option(s) {unknown} for method {method!r}; it accepts {list(allowed)}.")
    return tuple(sorted(options.items()))


def _acyclic_support(W_tilde: jax.Array, method: str, options: tuple) -> jax.Array:
    """Acyclic support ``(B, p, p)`` chosen by ``method`` for each sample of ``W̃ (B, p, p)``.

    For the order-based methods it is the set of forward edges of the order (a complete DAG).
    """
    squared = jnp.square(W_tilde)
    kwargs = dict(options)
    if method == "path":
        return jax.vmap(lambda w: path_support(w, **kwargs)[0])(W_tilde)
    if method == "exact":
        positions = jax.vmap(exact_positions)(squared)
    elif uses_kernel(kwargs.get("n_kicks", 0)):
        positions = positions_on_host(squared, kwargs.get("max_sweeps", MAX_SWEEPS),
                                      kwargs.get("rel_tol", REL_TOL))
    else:
        positions = jax.vmap(lambda a: search_positions(a, **kwargs))(squared)
    return forward_mask(positions)


def acyclic_projection(W_tilde, method: str = "auto", **options) -> jax.Array:
    """Nearest DAG (Frobenius norm) to each ``(p, p)`` slice of ``W_tilde (..., p, p)``.

    Keeps ``W̃`` on the forward entries of the order found by ``method`` (``"exact"``: optimal
    by dynamic programming, p ≤ 16; ``"search"``: local search; ``"auto"``: exact for
    p ≤ 9, search above) and zeroes the rest; ``"path"`` keeps the thresholded support of the
    paper's Alg. 2 after removing edges on cycles. Differentiable: the identity on the kept entries.
    Returns a JAX array of the same shape and dtype.
    """
    W_tilde = _check_input(W_tilde)
    method = _resolve_method(method, W_tilde.shape[-1])
    return _acyclic(W_tilde, method, _check_options(method, options))


@partial(jax.jit, static_argnames=("method", "options"))
def _acyclic(W_tilde: jax.Array, method: str, options: tuple) -> jax.Array:
    """``W̃ (..., p, p)`` restricted to the acyclic support chosen by ``method``."""
    p = W_tilde.shape[-1]
    flat = W_tilde.reshape((-1, p, p))
    mask = _acyclic_support(jax.lax.stop_gradient(flat), method, options)
    return jnp.where(mask, flat, 0.0).reshape(W_tilde.shape)


@partial(jax.jit, static_argnames=("method", "options"))
def _project(W_tilde: jax.Array, lam: jax.Array, method: str, options: tuple) -> jax.Array:
    return l1_ball_projection(_acyclic(W_tilde, method, options), lam)


def project(W_tilde, lam=jnp.inf, method: str = "auto", **options) -> jax.Array:
    """The ProDAG projection ``argmin_{W ∈ DAG, ‖W‖₁ ≤ λ} ½‖W̃ − W‖²_F`` per sample.

    Args:
        W_tilde: ``(..., p, p)`` array (numpy or JAX, float32/float64); ``[j, k]`` is j → k.
        lam: ℓ1 radius, scalar or broadcastable to the batch shape ``(...)``; ``inf`` (default)
            skips the ℓ1 step. May be traced; receives gradients.
        method: ``"auto"`` | ``"exact"`` | ``"search"`` | ``"path"`` (static).
        **options: method options (``search``: ``n_kicks``, ``n_rounds``, ``max_sweeps``,
            ``rel_tol``; ``path``: ``tol``, ``max_steps``, ``step_size``, ``threshold``,
            ``n_stages``).

    Returns:
        ``W`` with the shape and dtype of ``W_tilde``: every slice an exact DAG (zero diagonal,
        no directed cycle) whose support lies inside that of ``W̃``. Works inside ``jax.jit``,
        ``jax.grad`` and ``jax.vmap``; gradients follow Prop. 3 of the paper.
    """
    W_tilde = _check_input(W_tilde)
    method = _resolve_method(method, W_tilde.shape[-1])
    if not isinstance(lam, jax.core.Tracer) and not np.all(np.asarray(lam) >= 0):
        raise ValueError(f"lam must be nonnegative (inf for no ℓ1 constraint); got {lam!r}.")
    return _project(W_tilde, jnp.asarray(lam), method, _check_options(method, options))


Projector = Callable[[jax.Array, jax.Array], jax.Array]
"""``projector(W̃ (..., p, p), lam) -> W (..., p, p)``, differentiable in both arguments."""


@lru_cache(maxsize=32)
def make_projector(method: str = "auto", prune: float = 0.0, **options) -> Projector:
    """The projection ``(W̃, λ) -> W`` with ``method`` and its ``options`` fixed, followed by
    pruning: entries with ``|W| ≤ prune`` are set to zero (``prune = 0`` keeps ``W`` as it is).

    One function per setting (cached), so compiled code that closes over it is reused.
    """
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {METHODS}.")
    prune = float(prune)

    def projector(W_tilde, lam):
        W = project(W_tilde, lam, method=method, **options)
        return jnp.where(jnp.abs(W) > prune, W, 0.0) if prune > 0 else W

    return projector

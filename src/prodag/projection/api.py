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

from prodag.inputs.knowledge import Knowledge
from prodag.projection.exact import EXACT_MAX_NODES, exact_positions
from prodag.projection.l1 import l1_ball_projection
from prodag.projection.orders import constrained_positions, forward_mask
from prodag.projection.path import path_support
from prodag.projection.search import MAX_SWEEPS, REL_TOL, search_positions
from prodag.projection.host_search import positions_on_host, uses_kernel
from prodag.projection.parents import ParentTable, positions_on_parents, slot_search

METHODS = ("auto", "exact", "search", "path")

AUTO_EXACT_MAX_NODES = 9
"""``method="auto"`` uses the exact DP up to this many nodes and local search above: the DP is
optimal but its cost doubles with every node, while the search stays near the optimum at a
cost polynomial in p."""

_OPTIONS = {
    "exact": (),
    "search": ("n_kicks", "n_rounds", "max_sweeps", "rel_tol", "back_to_front"),
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


def _acyclic_support(W_tilde: jax.Array, method: str, options: tuple,
                     required: jax.Array | None = None,
                     allowed: jax.Array | None = None) -> jax.Array:
    """Acyclic support ``(B, p, p)`` chosen by ``method`` for each sample of ``W̃ (B, p, p)``,
    which is zero outside ``allowed (p, p)`` where that is given (the search then visits the
    allowed entries only, with the same result).

    For the order-based methods it is the set of forward edges of the order (a complete DAG).
    With ``required (p, p)`` (acyclic), every order keeps those edges forward: their squared
    weight is raised above the total mass, so the search and the exact DP prefer any order that
    keeps them (the DP's optimum is then the best such order), and ``constrained_positions``
    repairs an order the search left violating them; the path method's support gains the
    required edges and loses the edges that then close a cycle.
    """
    squared = jnp.square(W_tilde)
    kwargs = dict(options)
    if method == "path":
        support = jax.vmap(lambda w: path_support(w, **kwargs)[0])(W_tilde)
        if required is None:
            return support
        identity = jnp.arange(W_tilde.shape[-1])
        positions = jax.vmap(constrained_positions, (None, None, 0))(identity, required,
                                                                     support)
        return forward_mask(positions) & (support | required)
    if required is not None:
        total = squared.sum(axis=(-2, -1), keepdims=True)
        squared = squared + jnp.where(required, 1.0 + total, 0.0)
    if method == "exact":
        positions = jax.vmap(exact_positions)(squared)
    elif uses_kernel(kwargs.get("n_kicks", 0)):
        support = allowed if allowed is None or required is None else allowed | required
        positions = positions_on_host(squared, kwargs.get("max_sweeps", MAX_SWEEPS),
                                      kwargs.get("rel_tol", REL_TOL), support,
                                      kwargs.get("back_to_front", True))
    else:
        positions = jax.vmap(lambda a: search_positions(a, **kwargs))(squared)
    if required is not None:
        positions = jax.vmap(constrained_positions, (0, None))(positions, required)
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
def _acyclic(W_tilde: jax.Array, method: str, options: tuple, allowed: jax.Array | None = None,
             required: jax.Array | None = None) -> jax.Array:
    """``W̃ (..., p, p)`` restricted to the acyclic support chosen by ``method`` (inside the
    ``allowed (p, p)`` entries, keeping the ``required (p, p)`` ones)."""
    p = W_tilde.shape[-1]
    flat = W_tilde.reshape((-1, p, p))
    if allowed is not None:
        flat = jnp.where(allowed, flat, 0.0)
    mask = _acyclic_support(jax.lax.stop_gradient(flat), method, options, required, allowed)
    return jnp.where(mask, flat, 0.0).reshape(W_tilde.shape)


@partial(jax.jit, static_argnames=("method", "options"))
def _project(W_tilde: jax.Array, lam: jax.Array, method: str, options: tuple,
             allowed: jax.Array | None = None, required: jax.Array | None = None) -> jax.Array:
    W = _acyclic(W_tilde, method, options, allowed, required)
    if required is None:
        return l1_ball_projection(W, lam)
    return jnp.where(required, W, l1_ball_projection(jnp.where(required, 0.0, W), lam))


def project(W_tilde, lam=jnp.inf, method: str = "auto", *, allowed=None, required=None,
            **options) -> jax.Array:
    """The ProDAG projection ``argmin_{W ∈ DAG, ‖W‖₁ ≤ λ} ½‖W̃ − W‖²_F`` per sample.

    With prior knowledge (``prodag.inputs.knowledge``) the DAGs are those inside ``allowed`` that
    contain every ``required`` edge, and the ℓ1 ball bounds the other entries only.

    Args:
        W_tilde: ``(..., p, p)`` array (numpy or JAX, float32/float64); ``[j, k]`` is j → k.
        lam: ℓ1 radius, scalar or broadcastable to the batch shape ``(...)``; ``inf`` (default)
            skips the ℓ1 step. May be traced; receives gradients.
        method: ``"auto"`` | ``"exact"`` | ``"search"`` | ``"path"`` (static).
        allowed: optional ``(p, p)`` bool mask of the entries that may be nonzero (forbidden
            edges: ``False``).
        required: optional ``(p, p)`` bool mask of edges every slice keeps (acyclic, inside
            ``allowed``): they stay forward in every order and are not shrunk by the ℓ1 step
            (an entry of ``W̃`` that is exactly 0 stays 0).
        **options: method options (``search``: ``n_kicks``, ``n_rounds``, ``max_sweeps``,
            ``rel_tol``, ``back_to_front``; ``path``: ``tol``, ``max_steps``, ``step_size``,
            ``threshold``, ``n_stages``).

    Returns:
        ``W`` with the shape and dtype of ``W_tilde``: every slice an exact DAG (zero diagonal,
        no directed cycle) whose support lies inside that of ``W̃``. Works inside ``jax.jit``,
        ``jax.grad`` and ``jax.vmap``; gradients follow Prop. 3 of the paper.
    """
    W_tilde = _check_input(W_tilde)
    method = _resolve_method(method, W_tilde.shape[-1])
    if not isinstance(lam, jax.core.Tracer) and not np.all(np.asarray(lam) >= 0):
        raise ValueError(f"lam must be nonnegative (inf for no ℓ1 constraint); got {lam!r}.")
    allowed, required = _check_masks(allowed, required, W_tilde.shape[-1])
    return _project(W_tilde, jnp.asarray(lam), method, _check_options(method, options),
                    allowed, required)


def project_on_entries(W_tilde, lam, entries: tuple[np.ndarray, np.ndarray],
                       method: str = "auto", *, allowed, required=None, **options) -> jax.Array:
    """``project`` where ``allowed`` is sparse: the same projection, with the ℓ1 step over
    the ``E`` free entries ``entries = (rows (E,), cols (E,))`` (the allowed ones that are not
    required) instead of all ``p²``. Equal to ``project`` up to rounding."""
    W_tilde = _check_input(W_tilde)
    method = _resolve_method(method, W_tilde.shape[-1])
    if not isinstance(lam, jax.core.Tracer) and not np.all(np.asarray(lam) >= 0):
        raise ValueError(f"lam must be nonnegative (inf for no ℓ1 constraint); got {lam!r}.")
    allowed, required = _check_masks(allowed, required, W_tilde.shape[-1])
    rows, cols = (jnp.asarray(index) for index in entries)
    W = _acyclic(W_tilde, method, _check_options(method, options), allowed, required)
    free = W[..., rows, cols][..., None]  # (..., E, 1): the ℓ1 step's matrices
    shrunk = l1_ball_projection(free, jnp.asarray(lam, W.dtype))[..., 0]
    kept = jnp.zeros_like(W) if required is None else jnp.where(required, W, 0.0)
    return kept.at[..., rows, cols].set(shrunk)


def project_on_parents(w_tilde: jax.Array, lam, table: ParentTable, method: str = "auto", *,
                       required=None, **options) -> jax.Array:
    """``project`` of the samples whose weights sit in the candidate parents' slots ``w_tilde
    (..., p, K)`` (``prodag.projection.parents``): the projected slots ``(..., p, K)``, equal
    to ``table.gather(project(table.scatter(w_tilde), lam, allowed=table.mask(), ...))`` up to
    rounding, with no ``(p, p)`` array per sample where the order search runs on the CPU's
    kernel. ``required (p, p)``: edges every sample keeps (candidates, acyclic). ``lam``
    broadcasts to ``w_tilde.shape[:-2]``."""
    p, width = table.parents.shape
    method = _resolve_method(method, p)
    options = _check_options(method, options)
    w_tilde = jnp.where(table.valid, w_tilde, 0.0)
    flat = w_tilde.reshape((-1, p, width))
    lam = jnp.broadcast_to(jnp.asarray(lam, flat.dtype), w_tilde.shape[:-2]).reshape(-1)
    required_slots = None if required is None else table.on_slots(required)
    kwargs = dict(options)
    if method == "search" and uses_kernel(kwargs.get("n_kicks", 0)):
        squared = jnp.square(jax.lax.stop_gradient(flat))
        if required_slots is not None:
            total = squared.sum(axis=(-2, -1), keepdims=True)
            squared = squared + jnp.where(required_slots, 1.0 + total, 0.0)
        positions = positions_on_parents(squared, slot_search(table), kwargs.get(
            "max_sweeps", MAX_SWEEPS), kwargs.get("rel_tol", REL_TOL),
            kwargs.get("back_to_front", True))
        if required is not None:
            positions = jax.vmap(constrained_positions, (0, None))(positions,
                                                                   jnp.asarray(required))
        forward = positions[:, table.parents] < positions[:, :, None]
        W = jnp.where(forward & table.valid, flat, 0.0)
    else:  # the other methods choose supports on the dense matrix
        dense = _acyclic(table.scatter(flat), method, options, jnp.asarray(table.mask()),
                         None if required is None else jnp.asarray(required))
        W = table.gather(dense)
    free = np.flatnonzero(table.valid if required_slots is None
                          else table.valid & ~required_slots)
    W = W.reshape((W.shape[0], p * width))
    shrunk = l1_ball_projection(W[:, free, None], lam)[..., 0]
    kept = (jnp.zeros_like(W) if required_slots is None
            else jnp.where(required_slots.reshape(-1), W, 0.0))
    return kept.at[:, free].set(shrunk).reshape(w_tilde.shape)


def _check_masks(allowed, required, p: int):
    """The knowledge masks as ``(p, p)`` bool arrays (or ``None``), checked for shape."""
    masks = []
    for name, mask in (("allowed", allowed), ("required", required)):
        if mask is not None:
            mask = jnp.asarray(mask, dtype=bool)
            if mask.shape != (p, p):
                raise ValueError(f"{name} must be a ({p}, {p}) boolean mask; got shape "
                                 f"{mask.shape}.")
        masks.append(mask)
    return tuple(masks)


Projector = Callable[[jax.Array, jax.Array], jax.Array]
"""``projector(W̃ (..., p, p), lam) -> W (..., p, p)``, differentiable in both arguments."""


@lru_cache(maxsize=32)
def make_projector(method: str = "auto", prune: float = 0.0, knowledge: Knowledge | None = None,
                   **options) -> Projector:
    """The projection ``(W̃, λ) -> W`` with ``method`` and its ``options`` fixed, followed by
    pruning: entries with ``|W| ≤ prune`` are set to zero (``prune = 0`` keeps ``W`` as it is).
    With ``knowledge`` (``prodag.inputs.knowledge.Knowledge``) every output respects it; required
    edges are not pruned. With candidate parents it is a ``CandidateProjector``, which also
    projects samples given on the parents' slots.

    One function per setting (cached), so compiled code that closes over it is reused.
    """
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {METHODS}.")
    prune = float(prune)
    if knowledge is not None and knowledge.candidates is not None:
        return CandidateProjector(method, prune, knowledge, options)
    allowed = required = None
    if knowledge is not None:
        allowed, required = knowledge.allowed_mask(), _required_or_none(knowledge)

    def projector(W_tilde, lam):
        W = project(W_tilde, lam, method=method, allowed=allowed, required=required, **options)
        return _pruned(W, prune, required)

    return projector


class CandidateProjector:
    """``make_projector``'s projection on a candidate support (``knowledge.candidates``).

    Called on dense ``W̃ (..., p, p)`` it is a ``Projector`` (the ℓ1 step over the candidate
    entries alone: ``project_on_entries``); ``on_parents(w̃ (..., p, K), λ)`` projects samples
    given on the slots of ``table`` (``project_on_parents``), with the same pruning.
    """

    def __init__(self, method: str, prune: float, knowledge: Knowledge, options: dict):
        self.method, self.prune, self.options = method, prune, options
        self.allowed = knowledge.allowed_mask()
        self.required = _required_or_none(knowledge)
        self.table = ParentTable.from_lists(knowledge.candidate_support())
        self.entries = np.nonzero(self.allowed if self.required is None
                                  else self.allowed & ~self.required)
        self.required_slots = (None if self.required is None
                               else self.table.on_slots(self.required))

    def __call__(self, W_tilde, lam) -> jax.Array:
        W = project_on_entries(W_tilde, lam, self.entries, method=self.method,
                               allowed=self.allowed, required=self.required, **self.options)
        return _pruned(W, self.prune, self.required)

    def on_parents(self, w_tilde: jax.Array, lam) -> jax.Array:
        """The projected slots ``(..., p, K)`` of the samples ``w_tilde (..., p, K)``."""
        w = project_on_parents(w_tilde, lam, self.table, self.method, required=self.required,
                               **self.options)
        return _pruned(w, self.prune, self.required_slots)


def _required_or_none(knowledge: Knowledge) -> np.ndarray | None:
    """The required edges' mask, or None without any (the projection then skips their
    bookkeeping, with the same result)."""
    required = knowledge.required_mask()
    return required if required.any() else None


def _pruned(W: jax.Array, prune: float, required: np.ndarray | None) -> jax.Array:
    """``W`` with the entries ``|W| ≤ prune`` zeroed (not the ``required`` ones)."""
    if prune <= 0:
        return W
    keep = jnp.abs(W) > prune
    return jnp.where(keep if required is None else keep | required, W, 0.0)

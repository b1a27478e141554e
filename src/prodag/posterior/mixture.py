"""The posterior as a mixture of the variational fits the λ path ends with.

The starts at the chosen radius end in different optima of the ELBO, often within a fraction
of a nat of each other. Keeping one of them makes the posterior's certainty depend on the
seed; the mixture keeps them all (with λ chosen by the ELBO also the fits at the other radii
of the path, each with its own radius), each weighted by its evidence: ``w_k ∝ exp(ELBO_k)`` with
``ELBO_k = −n · objective_k`` (the low-noise objective per row of ``prodag.inference``), so
near-ties share the mass and a clearly better optimum takes it. Components whose weight is
below ``NEGLIGIBLE`` are dropped and the rest renormalised.

Sampling draws each sample's component from the weights, then that component's projected
normal (``sample_mixture``); one component samples exactly as a single fit does.
"""

from __future__ import annotations

import jax
import numpy as np

from prodag.streams import ASSIGNMENT_STREAM

NEGLIGIBLE = 1e-6
"""Components with a smaller weight are dropped (their samples would be rarer than 1 in 10⁶)."""


def evidence_weights(objectives, n_rows: int) -> np.ndarray:
    """``softmax(−n_rows · objectives)``: the weights ``(K,)`` of fits whose negative ELBO per
    row is ``objectives (K,)``."""
    log_evidence = -float(n_rows) * np.asarray(objectives, dtype=float)
    scaled = np.exp(log_evidence - log_evidence.max())
    return scaled / scaled.sum()


def kept_components(objectives, n_rows: int) -> tuple[list[int], np.ndarray]:
    """The indices of the fits with negative ELBO per row ``objectives (K,)`` whose evidence
    weight is at least ``NEGLIGIBLE``, best first, and their renormalised weights."""
    order = np.argsort(np.asarray(objectives, dtype=float), kind="stable")
    weights = evidence_weights(np.asarray(objectives, dtype=float)[order], n_rows)
    keep = weights >= NEGLIGIBLE
    return [int(i) for i in order[keep]], weights[keep] / weights[keep].sum()


def bagged_components(objectives, chain_of, n_rows: int) -> tuple[list[int], np.ndarray]:
    """``kept_components`` of a bagged posterior: each chain (fitted on its own bootstrap
    resample, so evidences of different chains are not comparable) takes an equal share,
    split among its fits ``∝ exp(ELBO)``; the indices come largest weight first."""
    objectives, chain_of = np.asarray(objectives, dtype=float), np.asarray(chain_of)
    chain_ids = np.unique(chain_of)
    weights = np.zeros(len(objectives))
    for chain in chain_ids:
        members = np.flatnonzero(chain_of == chain)
        weights[members] = evidence_weights(objectives[members], n_rows) / len(chain_ids)
    order = np.argsort(-weights, kind="stable")
    keep = order[weights[order] >= NEGLIGIBLE]
    return [int(i) for i in keep], weights[keep] / weights[keep].sum()


def assign(weights: np.ndarray, key: jax.Array, n: int) -> np.ndarray:
    """The component of each of ``n`` draws, ``z_i ~ Categorical(weights)``: ``(n,)`` ints."""
    return np.asarray(jax.random.choice(key, len(weights), (n,), p=np.asarray(weights)))


def component_draws(components: list, weights: np.ndarray, key: jax.Array,
                    n: int) -> list[tuple]:
    """How ``n`` draws of the mixture split among its components: ``(component, key, count,
    rows (n,) bool)`` for each component that draws, ``z_i ~ Categorical(weights)``;
    component ``k`` draws with ``fold_in(key, k)``, a single component with ``key`` itself."""
    if len(components) == 1:
        return [(components[0], key, n, np.ones(n, bool))]
    assignment = assign(weights, jax.random.fold_in(key, ASSIGNMENT_STREAM), n)
    return [(components[k], jax.random.fold_in(key, k), int(np.sum(assignment == k)),
             assignment == k) for k in np.unique(assignment)]


def sample_mixture(sample, components: list, weights: np.ndarray, key: jax.Array,
                   n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``n`` draws ``(weights pytree, graphs (n, p, p))`` of the mixture, split among its
    components as ``component_draws`` says; ``sample(component, key, m)`` draws ``m`` samples
    of one component."""
    parts = [(rows, sample(component, part_key, m))
             for component, part_key, m, rows in component_draws(components, weights, key, n)]
    if len(parts) == 1 and len(components) == 1:
        return parts[0][1]
    first = parts[0][1]
    out_weights = {name: np.empty((n, *value.shape[1:]), value.dtype)
                   for name, value in first[0].items()}
    graphs = np.empty((n, *first[1].shape[1:]), first[1].dtype)
    for rows, (component_weights, component_graphs) in parts:
        graphs[rows] = component_graphs
        for name, value in component_weights.items():
            out_weights[name][rows] = value
    return out_weights, graphs


def mixture_edge_probabilities(count, components: list, weights: np.ndarray, key: jax.Array,
                               n: int) -> np.ndarray:
    """``P(edge)`` ``(p, p)`` over the ``n`` draws ``sample_mixture`` makes with the same
    ``key``, from their counts alone: ``count(component, key, m)`` counts the edges ``(p, p)``
    of ``m`` draws of the component (those ``sample(component, key, m)`` makes, or draws of the
    same distribution made on the candidate slots: ``prodag.fit.pool.edge_counter``), so no
    ``(n, p, p)`` array is held."""
    return sum(count(component, part_key, m) for component, part_key, m, _ in
               component_draws(components, weights, key, n)) / n

"""The fit's fourth step: the chains' fits pooled into one mixture, every contender
re-scored with common random numbers and weighted by its evidence
(``prodag.posterior.mixture``), and the chains compared (``prodag.posterior.chains``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.fit.plan import FitPlan
from prodag.fit.prepare import Prepared
from prodag.inference import compiled, draws, noise_variance_of, stack
from prodag.posterior import chains, mixture, negligible
from prodag.streams import DIAGNOSTIC_STREAM


class PooledMixture(NamedTuple):
    """The pooled mixture of ``K`` fits: components (best first) with their weights, radii
    and chains, the λ path of the best component's chain, its history and objective, the
    chains' diagnostics and the pooled edge probabilities ``(p, p)``."""

    components: list
    weights: np.ndarray
    """``(K,)``"""
    lams: np.ndarray
    """``(K,)``"""
    chains: np.ndarray
    """``(K,)``: each component's chain."""
    lambda_path: dict | None
    history: np.ndarray
    objective: float
    diagnostics: dict
    edge_probabilities: np.ndarray


def scored_data(fit_plan: FitPlan, chain: int):
    """The prepared data (``model.prepare_data``) of the rows chain ``chain``'s fits are
    scored on: all rows after a validation split, else the rows its λ path fitted."""
    return (fit_plan.rows[chain].refit or fit_plan.rows[chain].path).data


def edge_counter(config, fits: list, noise: np.ndarray):
    """``count(k, key, m)``: the edges ``(p, p)`` of ``m`` draws of ``fits[k]`` (a ``(lam,
    fit)`` pair), negligible entries dropped as the fitted estimator drops them. On candidate
    parents the draws are made and counted on the slots (``compiled.slot_sampler``,
    ``negligible.negligible_on_slots``): no ``(m, p, p)`` draw is made."""
    draw_slots = compiled.slot_sampler(config)
    draw = compiled.sampler(config) if draw_slots is None else None
    table = None if draw_slots is None else config.projector().table

    def count(k, sample_key, m):
        lam, fit = fits[k]
        variances = np.asarray(noise_variance_of(fit.params, jnp.asarray(noise)))
        if draw_slots is None:
            return draws.edge_counts(draw, fit.params, sample_key, m, lam, lambda w, g: (
                negligible.without_negligible(config.sem, w, g, variances,
                                              config.knowledge)[1]))
        on_slots = draws.slot_edge_counts(draw_slots, fit.params, sample_key, m, lam, lambda w: (
            negligible.without_negligible_on_slots(config.sem, w, table, variances,
                                                   config.knowledge)))
        return table.dense(np.asarray(on_slots)[None])[0]
    return count


def pool(fit_plan: FitPlan, runs: list, prepared: Prepared, key) -> PooledMixture:
    """Pool the chains' fits: every contender re-scored with common random numbers and
    weighted by its evidence (``prodag.posterior.mixture``); the chains compared
    (``prodag.posterior.chains``)."""
    n = prepared.Z.shape[0]
    fits, chain_of = chains.contenders(runs, n, per_chain=fit_plan.bagged)
    score_key = jax.random.fold_in(key, DIAGNOSTIC_STREAM)
    # bagged chains are scored on the rows each fitted; the others share one set of rows
    if fit_plan.bagged:
        objectives = chains.rescore(fit_plan.engine, fits, stack(
            [scored_data(fit_plan, chain) for chain in range(len(runs))]), n,
            prepared.noise, score_key, data_index=chain_of)
    else:
        objectives = chains.rescore(fit_plan.engine, fits,
                                    scored_data(fit_plan, int(chain_of[0])), n,
                                    prepared.noise, score_key)
    if not np.isfinite(objectives).any():
        raise ValueError("Every fit's objective is infinite or NaN: the data overflow the "
                         "fit's arithmetic. Rescale the data (divide the largest columns by a "
                         "power of ten), or fit them on a common scale (a named noise_variance, "
                         "or standardize=True).")
    kept, weights = (mixture.bagged_components(objectives, chain_of, n) if fit_plan.bagged
                     else mixture.kept_components(objectives, n))
    count = edge_counter(fit_plan.config, fits, prepared.noise)

    probabilities = chains.chain_probabilities(count, objectives, chain_of, len(runs), n,
                                               score_key)
    chain_elbos = [-n * float(objectives[chain_of == c].min()) for c in range(len(runs))]
    best = fits[kept[0]][1]
    # each chain's mixture holds its share of the pooled weight
    chain_weights = chains.chain_weights(weights, np.asarray(chain_of)[kept], len(runs))
    return PooledMixture([jax.tree.map(np.asarray, fits[i][1].params) for i in kept], weights,
                     np.array([fits[i][0] for i in kept]), np.asarray(chain_of)[kept],
                     runs[int(chain_of[kept[0]])].path,
                     best.history, float(objectives[kept[0]]),
                     chains.diagnose(probabilities, chain_elbos, prepared.columns,
                                     chain_weights=chain_weights),
                     np.tensordot(chain_weights, probabilities, 1))

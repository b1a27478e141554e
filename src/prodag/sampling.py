"""After pooling: the posterior's own draws and what orients their edges.

``finish`` is the fit's last step (``prodag.procedure`` runs the others): the pooled mixture
of fits (``procedure.Posterior``) becomes the posterior as it is, or through its draws moved
by Metropolis refinement (``prodag.inference.refinement``) or sampled by tempered SMC from every
contender fit (``prodag.inference.smc``, ``prodag.posterior.populations``); then the sortability
report says what orients the final posterior's edges (``prodag.posterior.sortability``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.config.spec import FitSpec
from prodag.inference import fitting, refinement, smc
from prodag.inference import noise_variance_of
from prodag.models import variational
from prodag.posterior import chains, mixture, sortability
from prodag.posterior import populations as populations_module
from prodag.procedure import Plan, Posterior, Prepared, observational_rows, scored_data
from prodag.streams import REFINEMENT_STREAM, SMC_STREAM


REFINED_DRAWS = 1000
"""Draws a refined posterior keeps (``TrainingOptions.refine_steps``)."""


def mixture_draws(posterior: Posterior, noise: np.ndarray, key,
                  n: int) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` unprojected draws ``ω̃`` of the pooled mixture (pytree, leading axis n, grouped
    by component) and each draw's radius ``(n,)``, noise variance ``(n, p | 1)`` and
    chain ``(n,)``."""
    assignment = mixture.assign(posterior.weights, jax.random.fold_in(key, 0), n)
    counts = np.bincount(assignment, minlength=len(posterior.weights))
    draws, lams, noises = [], [], []
    for k in np.flatnonzero(counts):
        params = jax.tree.map(jnp.asarray, posterior.components[k])
        draws.append(variational.sample(params.q, jax.random.fold_in(key, int(k) + 1),
                                        int(counts[k])))
        lams.append(np.full(counts[k], posterior.lams[k]))
        variance = np.asarray(noise_variance_of(params, jnp.asarray(noise)))
        noises.append(np.broadcast_to(variance, (counts[k], variance.size)))
    weights_tilde = {name: jnp.concatenate([d[name] for d in draws]) for name in draws[0]}
    chain = np.repeat(posterior.chains, counts)
    return weights_tilde, np.concatenate(lams), np.concatenate(noises), chain


def finish(spec: FitSpec, the_plan: Plan, posterior: Posterior, runs: list,
           prepared: Prepared, key, progress) -> tuple:
    """The last steps after pooling, ``(posterior, draws)``: ``sample_posterior`` (the SMC's or
    the refinement's draws, or None), then what orients the final posterior's edges
    (``prodag.posterior.sortability.orientation_report`` of those draws, or of the pooled mixture),
    added to ``posterior.diagnostics`` as ``"sortability"`` and warned about when the data's
    scale alone may orient them."""
    posterior, refined = sample_posterior(spec, the_plan, posterior, runs, prepared, key,
                                          progress)
    probabilities = (posterior.edge_probabilities if refined is None else np.mean(np.asarray(
        fitting.refiner(the_plan.config).project_draws(refined.weights_tilde,
                                                       refined.lams)[1]) != 0, axis=0))
    report = sortability.orientation_report(
        probabilities, observational_rows(prepared.Z, prepared.observed), prepared.scale)
    posterior.diagnostics["sortability"] = report
    sortability.warn_scale_orientation(report, spec.standardize, spec.noise_model)
    return posterior, refined


def refine(spec: FitSpec, the_plan: Plan, posterior: Posterior, prepared: Prepared, key,
           progress) -> refinement.Refined | None:
    """``REFINED_DRAWS`` draws of the mixture moved by ``refine_steps`` Metropolis steps
    towards the posterior given the rows the fits were scored on (``prodag.inference.refinement``):
    bagged, each draw towards the posterior given its chain's resample. None without
    refinement."""
    training, dtype = spec.training, spec.dtype
    steps = training.refine_steps
    if not steps:
        return None
    key = jax.random.fold_in(key, REFINEMENT_STREAM)
    weights_tilde, lams, noise, chain = mixture_draws(posterior, prepared.noise, key,
                                                      REFINED_DRAWS)
    if the_plan.bagged:
        resamples = [scored_data(the_plan, c) for c in range(len(the_plan.rows))]
        data = jax.tree.map(lambda *parts: jnp.stack(parts), *resamples)
        resample = jnp.asarray(chain)
    else:
        data, resample = scored_data(the_plan, 0), None
    target = refinement.Target(data, jnp.asarray(lams, dtype), jnp.asarray(noise, dtype),
                               float(training.prior_mean), spec.prior_std,
                               resample)

    def on_block(done: int) -> None:
        progress.stage(f"refining {REFINED_DRAWS} draws: step {done}/{steps}",
                       "refinement")

    return fitting.refiner(the_plan.config).refine(weights_tilde, target,
                                                   jax.random.fold_in(key, 1), steps, on_block)


def sample_posterior(spec: FitSpec, the_plan: Plan, posterior: Posterior, runs: list,
                     prepared: Prepared, key, progress) -> tuple:
    """``(posterior, draws)``: with ``TrainingOptions(sampler="smc")``, ``REFINED_DRAWS`` draws
    of the model's posterior by tempered SMC from every contender fit (``prodag.inference.smc``),
    its populations' agreement in ``diagnostics["populations"]`` (warned about); else ``refine``."""
    training, dtype = spec.training, spec.dtype
    if training.sampler != "smc":
        return posterior, refine(spec, the_plan, posterior, prepared, key, progress)
    fits, _ = chains.contenders(runs, prepared.Z.shape[0])
    target = refinement.Target(scored_data(the_plan, 0), None,
                               jnp.asarray(prepared.noise[None], dtype),
                               float(training.prior_mean), spec.prior_std)
    draws, populations = populations_module.sample(
        the_plan.config, smc.proposal_of([(lam, fit.params) for lam, fit in fits], dtype,
                                          (target.prior_mean, target.prior_std)),
        target, jax.random.fold_in(key, SMC_STREAM), REFINED_DRAWS, prepared.columns,
        on_step=lambda t, beta: progress.stage(f"tempered SMC: step {t}, β = {beta:.3f}",
                                               "tempered SMC"))
    populations_module.warn_disagreement(populations)
    return posterior._replace(diagnostics={**posterior.diagnostics,
                                           "populations": populations}), draws

"""The fit's last step, after pooling: the posterior's own draws and what orients their edges.

``finish``: the pooled mixture of fits (``prodag.fit.pool.PooledMixture``) becomes the
posterior as it is, or through its draws moved by Metropolis refinement
(``prodag.inference.refinement``) or sampled by tempered SMC from every contender fit
(``prodag.fit.tempering``); then the sortability report says what orients the final
posterior's edges (``prodag.posterior.sortability``).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from prodag.config.spec import FitSpec
from prodag.fit import tempering
from prodag.fit.plan import FitPlan
from prodag.fit.pool import PooledMixture, scored_data
from prodag.fit.prepare import Prepared, observational_rows
from prodag.inference import compiled, moves, noise_variance_of, refinement, smc
from prodag.models import variational
from prodag.posterior import chains, mixture, populations, samples, sortability
from prodag.streams import REFINEMENT_STREAM, SMC_STREAM


REFINED_DRAWS = 1000
"""Draws a refined posterior keeps (``TrainingOptions.refine_steps``)."""


def mixture_draws(pooled: PooledMixture, noise: np.ndarray, key, n: int,
                  table=None) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` unprojected draws ``ω̃`` of the pooled mixture (pytree, leading axis n, grouped
    by component) and each draw's radius ``(n,)``, noise variance ``(n, p | 1)``, chain
    ``(n,)`` and component ``(n,)``. With ``table`` (a ``ParentTable``) the draws are made on
    the candidate parents' slots ``{"W": (n, p, K)}`` (``on_slots``).

    Draw ``i`` of component ``z_i`` is ``loc[z_i] + σ[z_i] · ε_i``, the standard normals ``ε``
    drawn for all ``n`` at once: the shapes do not depend on how the draws split among the
    components, so nothing compiles anew from one fit to the next."""
    assignment = np.sort(mixture.assign(pooled.weights, jax.random.fold_in(key, 0), n))
    components = pooled.components
    weights_tilde = {}
    for i, name in enumerate(sorted(components[0].q.loc)):
        loc = np.stack([on_slots(c.q.loc, table)[name] for c in components])[assignment]
        scale = np.stack([on_slots(variational.stddev(c.q), table)[name]  # padding: fixed 0
                          for c in components])[assignment]
        standard = jax.random.normal(jax.random.fold_in(key, i + 1), loc.shape, loc.dtype)
        weights_tilde[name] = jnp.asarray(loc + scale.astype(loc.dtype) * np.asarray(standard))
    variances = np.stack([np.asarray(noise_variance_of(c, noise)) for c in components])
    return (weights_tilde, np.asarray(pooled.lams)[assignment], variances[assignment],
            np.asarray(pooled.chains)[assignment], assignment)


def on_slots(tree: dict, table, padding: float = 0.0) -> dict:
    """A fit's weights ``{"W": (p, p)}`` (numpy) on the slots of ``table`` (``(p, K)``, with
    ``padding`` in the slots past each variable's parents), or as they are without one."""
    if table is None:
        return {name: np.asarray(value) for name, value in tree.items()}
    return {"W": np.asarray(table.gather(jnp.asarray(tree["W"]), padding))}


def jump_frames(pooled: PooledMixture, runs: list, noise: np.ndarray, bagged: bool,
                collapsed: bool, dtype, table=None) -> moves.Frames | None:
    """Every fit of the run as ``moves.Frames`` (in ``dtype``): first the pooled
    components (so a draw's component is its frame), then the chains' other fits, whatever
    their radius or evidence: a frame is only a place to propose a jump to, and a draw keeps
    its own radius. Jumps are allowed between frames fitted on the same rows (a bagged chain's
    resample) with, unless refinement integrates the variances out (``collapsed``), the same
    fixed noise variances. None when no two frames share both. With ``table`` the frames
    are on the candidate parents' slots (``on_slots``), their padding at mean 0 and standard
    deviation 1 in every frame, so that a jump leaves a draw's padding (0) as it is."""
    def flat(tree, padding: float = 0.0) -> np.ndarray:
        return np.asarray(ravel_pytree(on_slots(tree, table, padding))[0])

    frames = [(c, int(chain)) for c, chain in zip(pooled.components, pooled.chains)]
    loc = [flat(params.q.loc) for params, _ in frames]
    n_pooled = len(loc)
    for chain, run in enumerate(runs):
        for _, fit in run.fits:
            fitted = flat(fit.params.q.loc)
            if not any(np.array_equal(fitted, other) for other in loc[:n_pooled]):
                frames.append((fit.params, chain))
                loc.append(fitted)
    log_scale = np.log(np.stack([flat(variational.stddev(params.q), 1.0)
                                 for params, _ in frames]))
    keys = [(chain if bagged else 0,
             () if collapsed else tuple(np.asarray(noise_variance_of(params, noise)).ravel()))
            for params, chain in frames]
    groups = np.array([keys.index(k) for k in keys])
    built = moves.frames_of(np.stack(loc), log_scale, groups)
    return None if built is None else built._replace(
        loc=built.loc.astype(dtype), log_scale=built.log_scale.astype(dtype))


def finish(spec: FitSpec, fit_plan: FitPlan, pooled: PooledMixture, runs: list,
           prepared: Prepared, key, progress) -> tuple:
    """The last steps after pooling, ``(pooled, draws)``: ``sample_posterior`` (the SMC's or
    the refinement's draws, or None), then what orients the final posterior's edges
    (``prodag.posterior.sortability.orientation_report`` of those draws, or of the pooled mixture),
    added to ``pooled.diagnostics`` as ``"sortability"`` and warned about when the data's
    scale alone may orient them."""
    pooled, refined = sample_posterior(spec, fit_plan, pooled, runs, prepared, key,
                                       progress)
    probabilities = pooled.edge_probabilities
    if refined is not None:  # as the fitted estimator draws them: negligible entries dropped
        probabilities = samples.stored_edge_probabilities(spec.config, refined)
        for edge in pooled.diagnostics.get("disagreeing_edges", []):
            edge["posterior"] = float(probabilities[prepared.columns.index(edge["source"]),
                                                    prepared.columns.index(edge["target"])])
    report = sortability.orientation_report(
        probabilities, observational_rows(prepared.Z, prepared.observed), prepared.scale)
    pooled.diagnostics["sortability"] = report
    sortability.warn_scale_orientation(report, spec.standardize, spec.noise_model)
    return pooled, refined


def refine(spec: FitSpec, fit_plan: FitPlan, pooled: PooledMixture, runs: list,
           prepared: Prepared, key, progress) -> refinement.Refined | None:
    """``REFINED_DRAWS`` draws of the mixture moved by ``refine_steps`` Metropolis steps
    towards the posterior given the rows the fits were scored on (``prodag.inference.refinement``):
    bagged, each draw towards the posterior given its chain's resample; on candidate parents
    the draws stay on their slots (``ParentTable.holds``). None without refinement."""
    dtype = spec.dtype
    steps = spec.refine_steps
    if not steps:
        return None
    noise_model = spec.noise_model if spec.learns_noise else None
    kernel = (compiled.slot_refinement_kernel(fit_plan.config, noise_model)
              or compiled.refinement_kernel(fit_plan.config, noise_model))
    key = jax.random.fold_in(key, REFINEMENT_STREAM)
    weights_tilde, lams, noise, chain, component = mixture_draws(
        pooled, prepared.noise, key, REFINED_DRAWS, kernel.table)
    if fit_plan.bagged:
        resamples = [scored_data(fit_plan, c) for c in range(len(fit_plan.rows))]
        data = jax.tree.map(lambda *parts: jnp.stack(parts), *resamples)
        resample = jnp.asarray(chain)
    else:
        data, resample = scored_data(fit_plan, 0), None
    frames = jump_frames(pooled, runs, prepared.noise, fit_plan.bagged,
                         kernel.collapse is not None, dtype, kernel.table)
    target = refinement.Target(data, jnp.asarray(lams, dtype), jnp.asarray(noise, dtype),
                               spec.prior_mean, spec.prior_std, resample, frames)

    def on_block(done: int) -> None:
        progress.stage(f"refining {REFINED_DRAWS} draws: step {done}/{steps}",
                       "refinement")

    on_block(0)  # the refinement's seconds start here, its compilation included
    return refinement.refine(kernel, weights_tilde, target, jax.random.fold_in(key, 1),
                             steps, on_block, component)


def refinement_report(spec: FitSpec, refined: refinement.Refined, seconds: float) -> dict:
    """What the refinement did, JSON-ready: its steps and whether the default chose them
    (``"auto"``, ``prodag.config.spec.resolved_refine_steps``) or the caller (``"set"``), the draws
    moved, its seconds (a process's first refinement includes compiling) and their share per
    step, and the accepted share of each move kind."""
    steps = spec.refine_steps
    return {"steps": steps, "chosen": "set" if spec.refine_steps_set else "auto",
            "draws": REFINED_DRAWS, "seconds": round(seconds, 2),
            "seconds_per_step": round(seconds / steps, 4),
            "acceptance": {move: round(float(share), 4) for move, share in
                           zip(refinement.KINDS, np.asarray(refined.acceptance))}}


def sample_posterior(spec: FitSpec, fit_plan: FitPlan, pooled: PooledMixture, runs: list,
                     prepared: Prepared, key, progress) -> tuple:
    """``(pooled, draws)``: with ``TrainingOptions(sampler="smc")``, ``REFINED_DRAWS`` draws
    of the model's posterior by tempered SMC from every contender fit (``prodag.inference.smc``),
    its populations' agreement in ``diagnostics["populations"]`` (warned about); else ``refine``."""
    dtype = spec.dtype
    if spec.sampler != "smc":
        began = time.perf_counter()
        refined = refine(spec, fit_plan, pooled, runs, prepared, key, progress)
        if refined is None:
            return pooled, None
        report = refinement_report(spec, refined, time.perf_counter() - began)
        return pooled._replace(diagnostics={**pooled.diagnostics,
                                            "refinement": report}), refined
    fits, _ = chains.contenders(runs, prepared.Z.shape[0])
    target = refinement.Target(scored_data(fit_plan, 0), None,
                               jnp.asarray(prepared.noise[None], dtype),
                               spec.prior_mean, spec.prior_std)
    draws, agreement = tempering.sample(
        fit_plan.config, smc.proposal_of([(lam, fit.params) for lam, fit in fits], dtype,
                                          (target.prior_mean, target.prior_std)),
        target, jax.random.fold_in(key, SMC_STREAM), REFINED_DRAWS, prepared.columns,
        on_step=lambda t, beta: progress.stage(f"tempered SMC: step {t}, β = {beta:.3f}",
                                               "tempered SMC"))
    populations.warn_disagreement(agreement)
    return pooled._replace(diagnostics={**pooled.diagnostics,
                                        "populations": agreement}), draws

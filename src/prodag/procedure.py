"""The fit, step by step: preprocess → plan → run the chains → pool into the posterior.

``ProDAG.fit`` calls these in that order and stores what they return. Each step reads the
estimator's parameters (``settings``) and the previous step's result; none reads or writes a
fitted attribute, so the state flows forward only.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag import (assumptions, chains, diagnostics, fitting, mixture, negligible, parameters,
                    preprocessing, selection, sortability, validation)
from prodag.checks import check_positive_vector, check_seed
from prodag.parameters import (optimiser_options, resolved_init, resolved_restarts,
                               training_options)
from prodag import interventions as interventions_module
from prodag import populations as populations_module
from prodag import refinement, smc, variational
from prodag.inference import noise_variance_of
from prodag.initialization import noise_variance_start
from prodag.knowledge import Knowledge
from prodag.streams import DIAGNOSTIC_STREAM, REFINEMENT_STREAM, SMC_STREAM


class Prepared(NamedTuple):
    """The data as the model sees them and what it takes to map back to the data's units."""

    Z: np.ndarray
    """``(n, p)``: ``(data − mean) / scale``."""
    Z_val: np.ndarray | None
    """Held-out rows ``(m, p)`` given as ``X_val``, transformed alike (or None)."""
    observed: np.ndarray | None
    """``(n, p)``: where each variable's equation holds (None: everywhere)."""
    noise: np.ndarray
    """Fixed noise variances ``(p,)``, or the start of the learned ones (``(1,)`` or ``(p,)``)."""
    columns: list
    mean: np.ndarray
    scale: np.ndarray
    conditions: list | None
    condition_means: np.ndarray | None
    knowledge: Knowledge | None
    seed: int


class ChainRows(NamedTuple):
    """The rows one chain fits: its λ path's (``fitting.Rows``), those of the refit at the
    chosen radius after a validation split (or None) and the held-out rows that score the
    radii, ``(Z_val, observed_val)`` (``(None, None)`` when there are none)."""

    path: fitting.Rows
    refit: fitting.Rows | None
    validation: tuple


class Plan(NamedTuple):
    """What the chains run: the compiled engine, each chain's rows with their starts (the
    same ``ChainRows`` for every chain unless ``bagged``), the starts per chain and the number
    of fits (for the progress bar)."""

    engine: object
    config: fitting.ModelConfig
    rows: list[ChainRows]
    restarts: int
    n_fits: int
    bagged: bool


class Posterior(NamedTuple):
    """The pooled posterior: components (best first) with their weights, radii and chains,
    the λ path of the best component's chain, its history and objective, the chains'
    diagnostics and the pooled edge probabilities ``(p, p)``."""

    components: list
    weights: np.ndarray
    lams: np.ndarray
    chains: np.ndarray
    lambda_path: dict | None
    history: np.ndarray
    objective: float
    diagnostics: dict
    edge_probabilities: np.ndarray


def preprocess(settings, X, X_val, interventions, conditions,
               intervention_kind: str = "do") -> Prepared:
    """Check the data, centre them (within conditions), hide intervened activity, divide by
    ``prodag.preprocessing.fit_scale``; warn about outliers and columns on other scales."""
    data, columns = validation.check_data(X, min_rows=validation.MIN_FIT_ROWS)
    validation.warn_outliers(data, columns, heavy_tailed=settings.likelihood == "student")
    n, p = data.shape
    diagnostics.warn_few_rows(n, p)
    diagnostics.warn_collinear(data, columns)
    val = None if X_val is None else validation.check_rows("X_val", X_val, p, columns)
    if X_val is not None and (settings.lam != "auto"
                              or training_options(settings).select_by != "validation"):
        warnings.warn("X_val is used only to choose lam='auto' with "
                      "training=TrainingOptions(select_by='validation'); it is ignored here.",
                      UserWarning, stacklevel=4)
    mask = (None if interventions is None else
            interventions_module.intervention_mask(interventions, columns, n))
    groups = interventions_module.condition_groups(conditions, mask,
                                                   intervention_kind, n)
    if (mask is not None or conditions is not None) and X_val is not None:
        raise ValueError("X_val cannot be combined with interventions or conditions: choose "
                         "lam by the ELBO (TrainingOptions(select_by='elbo')) or let ProDAG "
                         "split its own validation rows.")
    knowledge = Knowledge.create(columns, settings.forbidden, settings.required, settings.tiers)
    assumptions.warn_assumptions(data, columns, groups, mask, knowledge)
    labels, condition_means = None, None
    if groups is not None:
        data, condition_means = interventions_module.centre_within(data, groups)
        labels = interventions_module.condition_labels(conditions, mask, groups, columns)
    seed = (check_seed(settings.seed) if settings.seed is not None
            else int(np.random.SeedSequence().entropy % (2 ** 31)))
    if intervention_kind == "activity" and mask is not None:
        data = interventions_module.hide_intervened(data, mask)
    noise_model = parameters.noise_model(settings)
    common = preprocessing.on_common_scale(noise_model)
    if not settings.standardize:
        preprocessing.warn_column_scales(data, columns)
    mean = np.median(data, axis=0) if settings.likelihood == "student" else data.mean(axis=0)
    scale = preprocessing.fit_scale(data - mean, settings.standardize, common,
                                    robust=settings.likelihood == "student")
    Z = (data - mean) / scale
    observed = None if mask is None else ~mask
    noise = noise_start(noise_model, Z, observed,
                        robust=settings.likelihood == "student")
    if not common:
        diagnostics.warn_noise_scale(Z, noise, columns)
    return Prepared(Z, None if val is None else (val - mean) / scale, observed, noise,
                    columns, mean, scale, labels, condition_means, knowledge, seed)


def noise_start(noise_variance, Z: np.ndarray, observed: np.ndarray | None,
                robust: bool = False) -> np.ndarray:
    """The fixed noise variances ``(p,)`` (given, or ``"quietest"``: the quietest column's
    variance of the observational rows), or the start of the learned ones: ``(p,)`` for
    ``"estimate"``, ``(1,)`` for ``"equal"``, at ``initialization.noise_variance_start`` of
    the observational rows (so the fit is equivariant to the data's scale); with ``robust``,
    of those without gross outliers (``fitting.without_outlying_rows``)."""
    p = Z.shape[1]
    if not isinstance(noise_variance, str):
        return check_positive_vector("noise_variance", noise_variance, p)
    rows = observational_rows(Z, observed)
    if noise_variance == "quietest":
        return np.full(p, preprocessing.quietest_variance(rows, robust))
    rows = fitting.without_outlying_rows(rows) if robust else rows
    start = noise_variance_start(rows - rows.mean(axis=0))
    return np.full(p if noise_variance == "estimate" else 1, start)


def plan(settings, prepared: Prepared, config: fitting.ModelConfig, dtype) -> Plan:
    """Compile the engine and compute the starts once for every chain (the order search runs
    here): on all rows, or on the training rows of a validation split and again on all."""
    training = training_options(settings)
    engine = fitting.engine(config, optimiser_options(settings), float(training.prior_mean),
                            float(settings.prior_std),
                            preprocessing.learns_noise(parameters.noise_model(settings)))
    restarts = resolved_restarts(settings, prepared.Z.shape[1])
    from_data = resolved_init(settings) == "data"
    split = settings.lam == "auto" and training.select_by == "validation" and \
        prepared.Z_val is None

    def rows_of(Z, observed) -> fitting.Rows:
        return fitting.rows(engine, Z, observed, prepared.noise, dtype, config, from_data,
                            restarts)

    if settings.bootstrap:
        rows = [ChainRows(rows_of(*resample(prepared, prepared.seed, chain)), None,
                          (None, None)) for chain in range(settings.n_chains)]
    elif not split:
        rows = [ChainRows(rows_of(prepared.Z, prepared.observed), None,
                          (prepared.Z_val, None))] * settings.n_chains
    else:
        fraction, seed = training.validation_fraction, prepared.seed
        train, held_out = selection.split_rows(prepared.Z, fraction, seed)
        observed_train, observed_val = (
            (None, None) if prepared.observed is None else
            selection.split_rows(prepared.observed, fraction, seed))
        rows = [ChainRows(rows_of(train, observed_train),
                          rows_of(prepared.Z, prepared.observed),
                          (held_out, observed_val))] * settings.n_chains
    return Plan(engine, config, rows, restarts, n_fits(settings, restarts, split),
                bool(settings.bootstrap))


def n_fits(settings, restarts: int, split: bool) -> int:
    """The fits of a whole fit (every chain's): the starts at a fixed radius, or the λ path
    (λ = ∞ and ``n_lambdas`` radii) and then its restarts: at the chosen radius after a
    validation ``split``, else at the ``selection.POLISHED_RADII`` best radii (all of them
    when the path has fewer)."""
    n_lambdas = training_options(settings).n_lambdas
    polished = min(selection.POLISHED_RADII, n_lambdas)
    per_chain = (restarts if settings.lam != "auto" else
                 1 + n_lambdas + (restarts if split else (restarts - 1) * polished))
    return settings.n_chains * per_chain


def resample(prepared: Prepared, seed: int, chain: int) -> tuple:
    """Chain ``chain``'s bootstrap resample of the rows, ``(Z (n, p), observed or None)``,
    drawn by a generator of ``(seed, chain)`` (BayesBag: Huggins & Miller, 2023)."""
    rows = np.random.default_rng([seed, chain]).integers(0, len(prepared.Z), len(prepared.Z))
    return (prepared.Z[rows],
            None if prepared.observed is None else prepared.observed[rows])


def run_chains(settings, the_plan: Plan, noise, keys: list, progress) -> list[chains.Chain]:
    """Every chain (``prodag.chains``; chain ``c`` trains with ``keys[c]``): the λ path, or
    the fixed radius, from every start of its rows; each stage of all chains is one batch
    of members (``prodag.selection.select_lambda``)."""
    rows = the_plan.rows
    fit_path = fitting.member_fitter(the_plan.engine, [r.path for r in rows], noise, progress)
    if settings.lam != "auto":
        lam, starts = float(settings.lam), the_plan.restarts
        fits = fit_path([selection.MemberSpec(c, lam, r, jax.random.fold_in(keys[c], r))
                         for c in range(len(rows)) for r in range(starts)], f"λ={lam:.3g}")
        return [chains.Chain([(lam, fit) for fit in sorted(
            fits[c * starts:(c + 1) * starts], key=lambda fit: fit.objective)], None)
            for c in range(len(rows))]
    training = training_options(settings)
    refit = (fitting.member_fitter(the_plan.engine, [r.refit for r in rows], noise, progress)
             if rows[0].refit is not None else None)
    selections = fitting.fit_lambda_path(
        the_plan.engine, the_plan.config, fit_path, [r.validation for r in rows], noise, keys,
        training.select_by, training.n_lambdas, the_plan.restarts, refit)
    # by the ELBO, every fit of the path is pooled by its evidence (radii that tie share it)
    return [chains.Chain(chosen.path_fits if training.select_by == "elbo" and chosen.path_fits
                         else [(chosen.lam, fit) for fit in chosen.results], chosen.path)
            for chosen in selections]


def scored_data(the_plan: Plan, chain: int):
    """The prepared data (``model.prepare_data``) of the rows chain ``chain``'s fits are
    scored on: all rows after a validation split, else the rows its λ path fitted."""
    return (the_plan.rows[chain].refit or the_plan.rows[chain].path).data


def pool(the_plan: Plan, runs: list, prepared: Prepared, key, dtype) -> Posterior:
    """Pool the chains' fits: every contender re-scored with common random numbers and
    weighted by its evidence (``prodag.mixture``); the chains compared (``prodag.chains``)."""
    n = prepared.Z.shape[0]
    fits, chain_of = chains.contenders(runs, n, per_chain=the_plan.bagged)
    score_key = jax.random.fold_in(key, DIAGNOSTIC_STREAM)
    objectives = np.empty(len(fits))
    # bagged chains are scored on the rows each fitted; the others share one set of rows
    groups = np.unique(chain_of) if the_plan.bagged else [int(chain_of[0])]
    for chain in groups:
        data = scored_data(the_plan, chain)
        members = (np.flatnonzero(chain_of == chain) if the_plan.bagged
                   else np.arange(len(fits)))
        objectives[members] = chains.rescore(the_plan.engine, [fits[i] for i in members],
                                             data, n, prepared.noise, score_key)
    kept, weights = (mixture.bagged_components(objectives, chain_of, n) if the_plan.bagged
                     else mixture.kept_components(objectives, n))
    sampler = fitting.sampler(the_plan.config)

    def sample(k, sample_key, m):  # as the fitted estimator draws: negligible entries dropped
        lam, fit = fits[k]
        noise = np.asarray(noise_variance_of(fit.params, jnp.asarray(prepared.noise)))
        return negligible.without_negligible(the_plan.config.sem, *sampler.sample(
            fit.params, sample_key, m, lam), noise, the_plan.config.knowledge)

    probabilities = chains.chain_probabilities(sample, objectives, chain_of, len(runs), n,
                                               score_key)
    chain_elbos = [-n * float(objectives[chain_of == c].min()) for c in range(len(runs))]
    best = fits[kept[0]][1]
    # each chain's mixture holds its share of the pooled weight
    chain_weights = chains.chain_weights(weights, np.asarray(chain_of)[kept], len(runs))
    return Posterior([jax.tree.map(np.asarray, fits[i][1].params) for i in kept], weights,
                     np.array([fits[i][0] for i in kept]), np.asarray(chain_of)[kept],
                     runs[int(chain_of[kept[0]])].path,
                     best.history, float(objectives[kept[0]]),
                     chains.diagnose(probabilities, chain_elbos, prepared.columns,
                                     chain_weights=chain_weights),
                     np.tensordot(chain_weights, probabilities, 1))


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


def finish(settings, the_plan: Plan, posterior: Posterior, runs: list, prepared: Prepared,
           key, dtype, progress) -> tuple:
    """The last steps after pooling, ``(posterior, draws)``: ``sample_posterior`` (the SMC's or
    the refinement's draws, or None), then what orients the final posterior's edges
    (``prodag.sortability.orientation_report`` of those draws, or of the pooled mixture),
    added to ``posterior.diagnostics`` as ``"sortability"`` and warned about when the data's
    scale alone may orient them."""
    posterior, refined = sample_posterior(settings, the_plan, posterior, runs, prepared, key,
                                          dtype, progress)
    probabilities = (posterior.edge_probabilities if refined is None else np.mean(np.asarray(
        fitting.refiner(the_plan.config).project_draws(refined.weights_tilde,
                                                       refined.lams)[1]) != 0, axis=0))
    report = sortability.orientation_report(
        probabilities, observational_rows(prepared.Z, prepared.observed), prepared.scale)
    posterior.diagnostics["sortability"] = report
    sortability.warn_scale_orientation(report, settings.standardize,
                                       parameters.noise_model(settings))
    return posterior, refined


def observational_rows(Z: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
    """The rows of ``Z (n, p)`` where ``observed (n, p)`` holds everywhere, when there are
    more of them than variables; else every row."""
    rows = Z if observed is None else Z[np.all(observed, axis=1)]
    return rows if len(rows) > Z.shape[1] else Z


def refine(settings, the_plan: Plan, posterior: Posterior, prepared: Prepared, key, dtype,
           progress) -> refinement.Refined | None:
    """``REFINED_DRAWS`` draws of the mixture moved by ``refine_steps`` Metropolis steps
    towards the posterior given the rows the fits were scored on (``prodag.refinement``):
    bagged, each draw towards the posterior given its chain's resample. None without
    refinement."""
    training = training_options(settings)
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
                               float(training.prior_mean), float(settings.prior_std),
                               resample)

    def on_block(done: int) -> None:
        progress.stage(f"refining {REFINED_DRAWS} draws: step {done}/{steps}")

    return fitting.refiner(the_plan.config).refine(weights_tilde, target,
                                                   jax.random.fold_in(key, 1), steps, on_block)


def sample_posterior(settings, the_plan: Plan, posterior: Posterior, runs: list,
                     prepared: Prepared, key, dtype, progress) -> tuple:
    """``(posterior, draws)``: with ``TrainingOptions(sampler="smc")``, ``REFINED_DRAWS`` draws
    of the model's posterior by tempered SMC from every contender fit (``prodag.smc``), its
    populations' agreement in ``diagnostics["populations"]`` (warned about); else ``refine``."""
    training = training_options(settings)
    if training.sampler != "smc":
        return posterior, refine(settings, the_plan, posterior, prepared, key, dtype, progress)
    fits, _ = chains.contenders(runs, prepared.Z.shape[0])
    target = refinement.Target(scored_data(the_plan, 0), None,
                               jnp.asarray(prepared.noise[None], dtype),
                               float(training.prior_mean), float(settings.prior_std))
    draws, populations = populations_module.sample(
        the_plan.config, smc.proposal_of([(lam, fit.params) for lam, fit in fits], dtype,
                                          (target.prior_mean, target.prior_std)),
        target, jax.random.fold_in(key, SMC_STREAM), REFINED_DRAWS, prepared.columns,
        on_step=lambda t, beta: progress.stage(f"tempered SMC: step {t}, β = {beta:.3f}"))
    populations_module.warn_disagreement(populations)
    return posterior._replace(diagnostics={**posterior.diagnostics,
                                           "populations": populations}), draws

"""The fit, step by step: preprocess → plan → run the chains → pool into the posterior (then
``prodag.sampling.finish``: the posterior's own draws).

``ProDAG.fit`` calls these in that order and stores what they return. ``preprocess`` reads
the estimator's parameters (``settings``) to check and prepare the data; every later step
reads the settings resolved once from them (``prodag.config.spec.FitSpec``) and the previous step's
result; none reads or writes a fitted attribute, so the state flows forward only.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.config.parameters import training_options
from prodag.config.spec import FitSpec, ModelConfig, resolved_noise_model
from prodag.inference import fitting, selection
from prodag.inference import noise_variance_of, stack
from prodag.inference.initialization import noise_variance_start
from prodag.inputs import assumptions, diagnostics, preprocessing, validation
from prodag.inputs import interventions as interventions_module
from prodag.inputs.checks import check_positive_vector, check_seed
from prodag.inputs.knowledge import Knowledge, warn_fixed_radius
from prodag.posterior import chains, mixture, negligible
from prodag.streams import DIAGNOSTIC_STREAM


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
    config: ModelConfig
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
    ``prodag.inputs.preprocessing.fit_scale`` (in their own units, refuse columns too large
    for the fit's arithmetic); warn about outliers and columns on other scales."""
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
    warn_fixed_radius(knowledge, settings.lam, columns)
    assumptions.warn_assumptions(data, columns, groups, mask, knowledge)
    labels, condition_means = None, None
    if groups is not None:
        data, condition_means = interventions_module.centre_within(data, groups)
        labels = interventions_module.condition_labels(conditions, mask, groups, columns)
    seed = (check_seed(settings.seed) if settings.seed is not None
            else int(np.random.SeedSequence().entropy % (2 ** 31)))
    if intervention_kind == "activity" and mask is not None:
        data = interventions_module.hide_intervened(data, mask)
    noise_model = resolved_noise_model(settings)
    common = preprocessing.on_common_scale(noise_model)
    if not settings.standardize:
        preprocessing.warn_column_scales(data, columns)
    mean = np.median(data, axis=0) if settings.likelihood == "student" else data.mean(axis=0)
    scale = preprocessing.fit_scale(data - mean, settings.standardize, common,
                                    robust=settings.likelihood == "student")
    Z = (data - mean) / scale
    if not common:
        preprocessing.check_own_units(
            Z, columns, float(jnp.finfo(jax.dtypes.canonicalize_dtype(np.float64)).max))
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


def plan(spec: FitSpec, prepared: Prepared) -> Plan:
    """Compile the engine and compute the starts once for every chain (the order search runs
    here): on all rows, or on the training rows of a validation split and again on all."""
    training, config, dtype, restarts = spec.training, spec.config, spec.dtype, spec.restarts
    engine = fitting.engine(config, spec.optimiser, float(training.prior_mean),
                            spec.prior_std, spec.learns_noise)
    from_data = spec.from_data
    split = spec.split and \
        prepared.Z_val is None

    def rows_of(Z, observed) -> fitting.Rows:
        return fitting.rows(engine, Z, observed, prepared.noise, dtype, config, from_data,
                            restarts)

    if spec.bootstrap:
        rows = [ChainRows(rows_of(*resample(prepared, prepared.seed, chain)), None,
                          (None, None)) for chain in range(spec.n_chains)]
    elif not split:
        rows = [ChainRows(rows_of(prepared.Z, prepared.observed), None,
                          (prepared.Z_val, None))] * spec.n_chains
    else:
        fraction, seed = training.validation_fraction, prepared.seed
        train, held_out = selection.split_rows(prepared.Z, fraction, seed)
        observed_train, observed_val = (
            (None, None) if prepared.observed is None else
            selection.split_rows(prepared.observed, fraction, seed))
        rows = [ChainRows(rows_of(train, observed_train),
                          rows_of(prepared.Z, prepared.observed),
                          (held_out, observed_val))] * spec.n_chains
    return Plan(engine, config, rows, restarts, n_fits(spec, split), spec.bootstrap)


def n_fits(spec: FitSpec, split: bool) -> int:
    """The fits of a whole fit (every chain's): the starts at a fixed radius, or the λ path
    (λ = ∞ and ``n_lambdas`` radii) and then its restarts: at the chosen radius after a
    validation ``split``, else at the ``selection.POLISHED_RADII`` best radii (all of them
    when the path has fewer)."""
    n_lambdas, restarts = spec.training.n_lambdas, spec.restarts
    polished = min(selection.POLISHED_RADII, n_lambdas)
    per_chain = (restarts if spec.lam != "auto" else
                 1 + n_lambdas + (restarts if split else (restarts - 1) * polished))
    return spec.n_chains * per_chain


def resample(prepared: Prepared, seed: int, chain: int) -> tuple:
    """Chain ``chain``'s bootstrap resample of the rows, ``(Z (n, p), observed or None)``,
    drawn by a generator of ``(seed, chain)`` (BayesBag: Huggins & Miller, 2023)."""
    rows = np.random.default_rng([seed, chain]).integers(0, len(prepared.Z), len(prepared.Z))
    return (prepared.Z[rows],
            None if prepared.observed is None else prepared.observed[rows])


def run_chains(spec: FitSpec, the_plan: Plan, noise, keys: list,
               progress) -> list[chains.Chain]:
    """Every chain (``prodag.posterior.chains``; chain ``c`` trains with ``keys[c]``): the λ path,
    or the fixed radius, from every start of its rows; each stage of all chains is one batch
    of members (``prodag.inference.selection.select_lambda``)."""
    rows = the_plan.rows
    fit_path = fitting.member_fitter(the_plan.engine, [r.path for r in rows], noise, progress)
    if spec.lam != "auto":
        lam, starts = spec.lam, the_plan.restarts
        fits = fit_path([selection.MemberSpec(c, lam, r, jax.random.fold_in(keys[c], r))
                         for c in range(len(rows)) for r in range(starts)], f"λ={lam:.3g}")
        return [chains.Chain([(lam, fit) for fit in sorted(
            fits[c * starts:(c + 1) * starts], key=lambda fit: fit.objective)], None)
            for c in range(len(rows))]
    training = spec.training
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


def pool(the_plan: Plan, runs: list, prepared: Prepared, key) -> Posterior:
    """Pool the chains' fits: every contender re-scored with common random numbers and
    weighted by its evidence (``prodag.posterior.mixture``); the chains compared
    (``prodag.posterior.chains``)."""
    n = prepared.Z.shape[0]
    fits, chain_of = chains.contenders(runs, n, per_chain=the_plan.bagged)
    score_key = jax.random.fold_in(key, DIAGNOSTIC_STREAM)
    # bagged chains are scored on the rows each fitted; the others share one set of rows
    if the_plan.bagged:
        objectives = chains.rescore(the_plan.engine, fits, stack(
            [scored_data(the_plan, chain) for chain in range(len(runs))]), n,
            prepared.noise, score_key, data_index=chain_of)
    else:
        objectives = chains.rescore(the_plan.engine, fits,
                                    scored_data(the_plan, int(chain_of[0])), n,
                                    prepared.noise, score_key)
    if not np.isfinite(objectives).any():
        raise ValueError("Every fit's objective is infinite or NaN: the data overflow the "
                         "fit's arithmetic. Rescale the data (divide the largest columns by a "
                         "power of ten), or fit them on a common scale (a named noise_variance, "
                         "or standardize=True).")
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


def observational_rows(Z: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
    """The rows of ``Z (n, p)`` where ``observed (n, p)`` holds everywhere, when there are
    more of them than variables; else every row."""
    rows = Z if observed is None else Z[np.all(observed, axis=1)]
    return rows if len(rows) > Z.shape[1] else Z

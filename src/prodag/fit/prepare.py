"""The fit's first step: the data checked and prepared as the model sees them, and the
settings resolved once for them.

``preprocess`` reads the estimator's parameters (``settings``) to check and prepare the data;
``resolve_spec`` screens the candidate parents on the prepared data and resolves the settings
into a ``prodag.config.spec.FitSpec``. Every later step of ``prodag.fit`` reads that spec and
the ``Prepared`` data, never the estimator.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.config.parameters import training_options
from prodag.config.spec import FitSpec, resolve, resolved_noise_model
from prodag.inference.initialization import noise_variance_start
from prodag.inputs import assumptions, candidates, diagnostics, preprocessing, validation
from prodag.inputs import interventions as interventions_module
from prodag.inputs.checks import check_positive_vector, check_seed
from prodag.inputs.knowledge import Knowledge, warn_fixed_radius


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
    intervention_kind: str
    """What an intervened variable passes on (``prodag.inputs.interventions``)."""



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
                    columns, mean, scale, labels, condition_means, knowledge, seed,
                    intervention_kind)



def resolve_spec(settings, prepared: Prepared) -> FitSpec:
    """The ``FitSpec`` of the estimator's parameters ``settings`` for the ``prepared`` data:
    the candidate parents screened on them (``TrainingOptions.candidate_parents``;
    ``prodag.inputs.candidates``) join the prior knowledge the fit enforces."""
    p = len(prepared.columns)
    screened = candidates.restrict(prepared.knowledge, prepared.Z, prepared.observed,
                                   training_options(settings).candidate_parents, p)
    return resolve(settings, screened, p)


def noise_start(noise_variance, Z: np.ndarray, observed: np.ndarray | None,
                robust: bool = False) -> np.ndarray:
    """The fixed noise variances ``(p,)`` (given, or ``"quietest"``: the quietest column's
    variance of the observational rows), or the start of the learned ones: ``(p,)`` for
    ``"estimate"``, ``(1,)`` for ``"equal"``, at ``initialization.noise_variance_start`` of
    the observational rows (so the fit is equivariant to the data's scale); with ``robust``,
    of those without gross outliers (``diagnostics.without_outlying_rows``)."""
    p = Z.shape[1]
    if not isinstance(noise_variance, str):
        return check_positive_vector("noise_variance", noise_variance, p)
    rows = observational_rows(Z, observed)
    if noise_variance == "quietest":
        return np.full(p, preprocessing.quietest_variance(rows, robust))
    rows = diagnostics.without_outlying_rows(rows) if robust else rows
    start = noise_variance_start(rows - rows.mean(axis=0))
    return np.full(p if noise_variance == "estimate" else 1, start)



def observational_rows(Z: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
    """The rows of ``Z (n, p)`` where ``observed (n, p)`` holds everywhere, when there are
    more of them than variables; else every row."""
    rows = Z if observed is None else Z[np.all(observed, axis=1)]
    return rows if len(rows) > Z.shape[1] else Z

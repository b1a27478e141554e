"""Saving and loading fitted ``ProDAG`` models: one ``.npz`` of arrays plus JSON metadata.

A file holds the estimator's parameters and its fitted posterior
(``prodag.posterior.fitted.FittedPosterior``): ``save`` writes both, ``load`` returns both.

No pickle. ``load`` checks everything it reads against everything else (format version, every
metadata field's type and range, every array's name, shape, dtype and finiteness, the SEM
against the weight arrays present) and raises ``prodag.io.model_file.ModelFileError`` for
anything that is not a model written by ``save``, so a damaged or hand-edited file fails at
load, not later in ``sample()``.
"""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import numpy as np

from prodag.config import parameters
from prodag.config.parameters import GROUPS, as_dict
from prodag.config.spec import FitSpec, resolve, with_knowledge
from prodag.inference import Params
from prodag.inference import refinement
from prodag.inference.refinement import KINDS, MOVES, Refined
from prodag.inputs import candidates
from prodag.inputs.knowledge import Tiers
from prodag.inputs.preprocessing import on_common_scale
from prodag.io import metadata_checks, upgrades
from prodag.io.model_file import Checker, read
from prodag.models.variational import VariationalParams
from prodag.posterior.fitted import FittedPosterior

FORMAT_VERSION = 10
"""The parameters as the constructor takes them (``training``/``network`` as objects of their
fields, ``lam`` as ``"auto"``, a number or ``"inf"``, ``tiers`` as groups or ``{"groups",
"forbid_within"}``) and ``intervention_kind_``; on candidate parents, the refined draws on
their slots; older versions: ``prodag.io.upgrades``."""
READABLE_VERSIONS = (2, 3, 4, 5, 6, 7, 8, 9, 10)
FITTED_ARRAYS = {"mean_": "mean", "scale_": "scale", "history_": "history",
                 "noise_variance_": "noise_variance", "mixture_weights_": "weights",
                 "component_lams_": "lams"}
"""The fitted posterior's arrays: ``{name in the file: field of FittedPosterior}``."""


# ---- writing -------------------------------------------------------------------------------

def json_float(value):
    """Floats for JSON with infinity spelled out (JSON has no inf); None kept."""
    if value is None:
        return None
    return "inf" if math.isinf(float(value)) else float(value)


def params_to_arrays(params: Params, prefix: str = "params/") -> dict[str, np.ndarray]:
    """``Params`` as flat ``{prefix + "q/loc/W": array, ...}`` entries."""
    arrays = {f"{prefix}q/{part}/{name}": np.asarray(value)
              for part, tree in (("loc", params.q.loc), ("rho", params.q.rho))
              for name, value in tree.items()}
    if params.log_noise_variance is not None:
        arrays[f"{prefix}log_noise_variance"] = np.asarray(params.log_noise_variance)
    return arrays


def refined_to_arrays(refined: Refined) -> dict[str, np.ndarray]:
    """A refined posterior (``prodag.inference.refinement.Refined``) as ``arrays/refined/...``
    entries."""
    arrays = {f"arrays/refined/weights_tilde/{name}": np.asarray(value)
              for name, value in refined.weights_tilde.items()}
    arrays.update({f"arrays/refined/{name}": np.asarray(getattr(refined, name))
                   for name in ("lams", "noise", "acceptance")})
    return arrays


def save(fitted: FittedPosterior, params: dict, path) -> None:
    """Write a ``fitted`` posterior and the estimator's parameters ``params`` (its
    ``get_params()``) to ``path``."""
    params = dict(params)
    if not isinstance(params["noise_variance"], str):
        params["noise_variance"] = np.asarray(params["noise_variance"], float).tolist()
    params["lam"] = params["lam"] if params["lam"] == "auto" else json_float(params["lam"])
    for group in GROUPS:
        params[group] = None if params[group] is None else as_dict(params[group])
    knowledge = fitted.knowledge
    if knowledge is not None:  # DataFrames and file paths saved as the edges read
        params.update(knowledge.as_names(fitted.columns))
        if knowledge.forbid_within_tiers:
            params["tiers"] = {"groups": params["tiers"], "forbid_within": True}
    metadata = {"format_version": FORMAT_VERSION, "params": params,
                "intervention_kind_": fitted.intervention_kind,
                "columns": list(fitted.columns), "lam_": json_float(fitted.lam),
                "seed_": fitted.seed, "lambda_path_": fitted.lambda_path,
                "objective_": fitted.objective, "conditions_": fitted.conditions,
                "diagnostics_": fitted.diagnostics}
    payload = {f"arrays/{name}": a for k, component in enumerate(fitted.components)
               for name, a in params_to_arrays(component, f"params/{k}/").items()}
    payload.update({f"arrays/{name}": np.asarray(getattr(fitted, field))
                    for name, field in FITTED_ARRAYS.items()})
    if fitted.conditions is not None:
        payload["arrays/condition_means_"] = np.asarray(fitted.condition_means)
    if fitted.draws is not None:
        payload.update(refined_to_arrays(fitted.draws))
    if fitted.candidate_parents is not None:
        payload["arrays/candidate_parents_"] = np.asarray(fitted.candidate_parents)
    payload["metadata"] = np.asarray(json.dumps(metadata))
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **payload)


# ---- reading -------------------------------------------------------------------------------

def load(cls, path) -> tuple:
    """``(cls(**params), its FittedPosterior)`` from a file written by ``save``: an unfitted
    estimator (``ProDAG``) with the saved parameters and the fitted posterior, every part
    checked."""
    arrays, metadata = read(Path(path))
    check = Checker(path)
    check.that(isinstance(metadata, dict), "its metadata is not a JSON object")
    check.that(metadata.get("format_version") in READABLE_VERSIONS,
               f"it has format version {metadata.get('format_version')!r}; this prodag reads "
               f"versions {', '.join(map(str, READABLE_VERSIONS))}")
    metadata = upgrades.upgraded(metadata, check)
    known = {"format_version", "params", "columns", "lam_", "seed_", "lambda_path_",
             "objective_", "conditions_", "diagnostics_", "intervention_kind_"}
    check.that(set(metadata) == known, f"its metadata fields are {sorted(metadata)}, expected "
               f"{sorted(known)}")
    settings = _settings(cls, metadata["params"], check)
    columns = metadata["columns"]
    check.that(isinstance(columns, list) and len(columns) >= 1
               and all(isinstance(c, str) for c in columns) and len(set(columns)) == len(columns),
               "'columns' must be a list of distinct variable names")
    p = len(columns)
    lam = check.radius("lam_", metadata["lam_"], allow_auto=False)
    if settings.lam != "auto":
        check.that(lam == settings.lam, f"'lam_' = {lam} differs from the parameter lam = "
                   f"{settings.lam}")
    seed = metadata["seed_"]
    check.that(isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0,
               f"'seed_' must be a nonnegative integer, got {seed!r}")
    objective = metadata["objective_"]
    check.that(isinstance(objective, (int, float)) and not isinstance(objective, bool)
               and math.isfinite(objective), f"'objective_' must be a finite number, "
               f"got {objective!r}")
    spec = resolve(settings, None, p)  # the knowledge joins it once checked
    lambda_path = metadata_checks.lambda_path(metadata["lambda_path_"], spec, lam, check)
    fitted = _fitted_arrays(arrays, spec, p, check)
    components = _components(arrays, spec, p, len(fitted["weights"]), check)
    diagnostics = metadata_checks.diagnostics(metadata["diagnostics_"], columns, check)
    check.that(fitted["lams"][0] == lam, "'component_lams_' must start with 'lam_'")
    knowledge = _knowledge(settings, columns, check)
    candidate_parents = _candidate_parents(arrays, knowledge, p, check)
    spec = with_knowledge(spec, candidates.with_mask(knowledge, candidate_parents, p))
    conditions, condition_means = _conditions(metadata["conditions_"], arrays, p, check)
    kind = metadata["intervention_kind_"]
    check.that(kind in ("do", "activity"), f"'intervention_kind_' must be 'do' or "
               f"'activity', got {kind!r}")
    draws = _refined(arrays, spec, p, check)
    return settings, FittedPosterior(
        spec=spec, columns=list(columns), components=components, lambda_path=lambda_path,
        objective=float(objective), diagnostics=diagnostics, draws=draws, seed=seed,
        knowledge=knowledge, candidate_parents=candidate_parents, conditions=conditions,
        condition_means=condition_means, intervention_kind=kind, **fitted)


def _settings(cls, params, check: Checker):
    """``cls(**params)`` with every parameter checked as ``fit`` checks it."""
    check.that(isinstance(params, dict), "'params' is not a JSON object")
    names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    check.that(set(params) == names, f"'params' has the fields {sorted(params)}, expected "
               f"{sorted(names)}")
    params = dict(params)
    params["lam"] = check.radius("params.lam", params["lam"], allow_auto=True)
    tiers = params["tiers"]
    if isinstance(tiers, dict):
        check.that(set(tiers) == {"groups", "forbid_within"}, "'params.tiers' must be a list "
                   "of groups or an object with the fields groups and forbid_within")
        params["tiers"] = Tiers(tiers["groups"], tiers["forbid_within"])
    for group, options in GROUPS.items():
        if params[group] is not None:
            check.that(isinstance(params[group], dict), f"'params.{group}' must be an object")
            try:
                params[group] = options(**params[group])
            except (TypeError, ValueError) as error:
                check.fail(f"its {group} options are invalid ({error})")
    settings = cls(**params)
    try:
        parameters.check(settings.get_params())
    except (TypeError, ValueError) as error:
        check.fail(f"its parameters are invalid ({error})")
    return settings


def _conditions(labels, arrays: dict, p: int, check: Checker):
    """``(conditions_, condition_means_)``: both None, or distinct labels and ``(G, p)``."""
    if labels is None:
        check.that("condition_means_" not in arrays,
                   "it has 'condition_means_' but no 'conditions_'")
        return None, None
    check.that(isinstance(labels, list) and len(labels) >= 1
               and all(isinstance(c, str) for c in labels) and len(set(labels)) == len(labels),
               "'conditions_' must be null or a list of distinct condition labels")
    return list(labels), check.array(arrays, "condition_means_", (len(labels), p))


def _knowledge(settings, columns: list[str], check: Checker):
    from prodag.inputs.knowledge import Knowledge, KnowledgeError

    try:
        return Knowledge.create(columns, settings.forbidden, settings.required,
                                settings.tiers)
    except KnowledgeError as error:
        check.fail(f"its prior knowledge is invalid ({error})")


def _candidate_parents(arrays: dict, knowledge, p: int, check: Checker) -> np.ndarray | None:
    """The saved candidate parents ``(p, p)`` bool (None when the fit screened none): no
    self-loop, every required edge among them."""
    mask = arrays.get("candidate_parents_")
    if mask is None:
        return None
    check.that(mask.shape == (p, p) and mask.dtype == bool and not mask.diagonal().any(),
               f"'candidate_parents_' must be a ({p}, {p}) boolean mask with no self-loop, "
               f"got {mask.dtype} {mask.shape}")
    check.that(knowledge is None or bool(np.all(mask[knowledge.required_mask()])),
               "'candidate_parents_' must hold every required edge")
    return mask


def _components(arrays: dict, spec: FitSpec, p: int, k: int, check: Checker) -> list[Params]:
    """The ``k`` mixture components ``params/<i>/...``, each checked against the SEM's weight
    shapes for ``p``; nothing else may start with ``params/``."""
    shapes = spec.config.model().weight_shapes(p)
    learn_noise = spec.learns_noise
    noise_shape = (p,) if spec.noise_model == "estimate" else (1,)
    expected = set()
    for i in range(k):
        expected |= {f"params/{i}/q/{part}/{name}" for part in ("loc", "rho") for name in shapes}
        if learn_noise:
            expected.add(f"params/{i}/log_noise_variance")
    present = {name for name in arrays if name.startswith("params/")}
    check.that(present == expected, f"sem={spec.config.sem!r} with these options and {k} "
               f"mixture component(s) expects the weight arrays {sorted(expected)}, but the "
               f"file has {sorted(present)}")
    components = []
    for i in range(k):
        loc, rho = ({name: check.array(arrays, f"params/{i}/q/{part}/{name}", shape)
                     for name, shape in shapes.items()} for part in ("loc", "rho"))
        log_noise = (check.array(arrays, f"params/{i}/log_noise_variance", noise_shape)
                     if learn_noise else None)
        components.append(Params(VariationalParams(loc, rho), log_noise))
    return components


def _refined(arrays: dict, spec: FitSpec, p: int, check: Checker) -> Refined | None:
    """The refined draws ``refined/...`` (``FitSpec.refine_steps > 0``), checked
    against the SEM's weight shapes (or, on candidate parents, the slots' ``(p, K)``:
    ``ParentTable.holds``); None without refinement."""
    present = {name for name in arrays if name.startswith("refined/")}
    if not (spec.refine_steps or spec.sampler == "smc"):
        check.that(not present, "it has refined draws but refine_steps is 0")
        return None
    shapes = spec.config.model().weight_shapes(p)
    expected = ({f"refined/weights_tilde/{name}" for name in shapes}
                | {"refined/lams", "refined/noise", "refined/acceptance"})
    check.that(present == expected, f"a refined posterior expects the arrays "
               f"{sorted(expected)}, but the file has {sorted(present)}")
    lams = arrays["refined/lams"]
    check.that(lams.ndim == 1 and lams.shape[0] >= 1 and lams.dtype.kind == "f"
               and bool(np.all(lams > 0)), "'refined/lams' must hold one positive radius per "
               "draw")
    n = lams.shape[0]
    noise = arrays["refined/noise"]
    check.that(noise.ndim == 2 and noise.shape[0] == n and noise.shape[1] in (1, p),
               f"'refined/noise' must have shape ({n}, 1) or ({n}, {p})")
    table = refinement.slot_table(spec.config.model(), spec.config.projector())
    if table is not None and np.shape(arrays.get("refined/weights_tilde/W")) == (
            n, *table.parents.shape):  # format 10: the draws on the candidate parents' slots
        shapes = {**shapes, "W": table.parents.shape}
    weights_tilde = {name: check.array(arrays, f"refined/weights_tilde/{name}", (n, *shape))
                     for name, shape in shapes.items()}
    acceptance = arrays["refined/acceptance"]
    if acceptance.shape == (len(MOVES),):  # format 8 and before: no jumps between fits
        acceptance = np.concatenate([acceptance, np.zeros(len(KINDS) - len(MOVES))])
    return Refined(weights_tilde, lams, check.array(arrays, "refined/noise", noise.shape,
                                                    positive=True),
                   check.array({"refined/acceptance": acceptance}, "refined/acceptance",
                               (len(KINDS),)))


def _fitted_arrays(arrays: dict, spec: FitSpec, p: int, check: Checker) -> dict[str, np.ndarray]:
    """The fitted posterior's arrays (``FITTED_ARRAYS``) by their ``FittedPosterior`` field,
    checked; the file holds no other arrays but the components, conditions, candidate parents
    and draws."""
    extra = (set(arrays) - set(FITTED_ARRAYS) - {"condition_means_", "candidate_parents_"}
             - {n for n in arrays if n.startswith(("params/", "refined/"))})
    check.that(not extra, f"it has unexpected arrays {sorted(extra)}")
    history = arrays.get("history_", np.zeros((0, 0)))
    max_epochs = spec.optimiser.max_epochs
    check.that(history.ndim == 1 and 1 <= history.shape[0] <= max_epochs,
               f"'history_' must have one entry per epoch (1 to max_epochs = "
               f"{max_epochs}), got shape {history.shape}")
    weights = arrays.get("mixture_weights_", np.zeros((0, 0)))
    check.that(weights.ndim == 1 and weights.shape[0] >= 1, "'mixture_weights_' must hold "
               f"one weight per component, got shape {weights.shape}")
    weights = check.array(arrays, "mixture_weights_", weights.shape, positive=True)
    check.that(abs(float(weights.sum()) - 1.0) < 1e-9, "'mixture_weights_' must sum to 1")
    lams = arrays.get("component_lams_", np.zeros((0,)))
    check.that(lams.shape == weights.shape and lams.dtype.kind == "f"
               and bool(np.all(lams > 0)), "'component_lams_' must hold one positive radius "
               "per component")
    fitted = {"weights": weights, "lams": lams,
              "mean": check.array(arrays, "mean_", (p,)),
              "scale": check.array(arrays, "scale_", (p,), positive=True),
              "history": check.array(arrays, "history_", history.shape),
              "noise_variance": check.array(arrays, "noise_variance_", (p,), positive=True)}
    if not spec.standardize:
        common = on_common_scale(spec.noise_model)
        check.that(bool(np.all(fitted["scale"] == fitted["scale"][0]))
                   and (common or fitted["scale"][0] == 1),
                   "'scale_' must be one common scale with a learned noise variance, else 1, "
                   "without standardize")
    return fitted

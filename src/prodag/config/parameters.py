"""The parameters of ``ProDAG``: the option groups, and one declarative table of their rules
(built from the value checks of ``prodag.inputs.checks``).

``ProDAG(...)``, the command line (which only parses text into these values) and
``ProDAG.load`` all check settings through ``check`` and ``rules()`` here, so a value is accepted
or refused the same way wherever it comes from, with an error that names the parameter and
says what to write instead. ``nest`` turns flat settings (the command line's options, the
benchmarks' option lists, model files of format ≤ 5) into the constructor's arguments.
Importing this module does not start JAX (the choice lists of JAX modules load on first use).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache

import numpy as np

from prodag.inputs import preprocessing
from prodag.inputs.checks import check_choice, check_integer, check_positive, check_seed
from prodag.streams import FIRST_STREAM

INITS = ("auto", "prior", "data")
CRITERIA = ("elbo", "validation", "elbo-sparse")
"""How λ is chosen (``TrainingOptions.select_by``; ``prodag.inference.radius_selection``)."""
SELECTIONS = ("auto", *CRITERIA)
"""The values of ``TrainingOptions.select_by``: a criterion, or ``"auto"``
(``prodag.config.spec.resolved_select_by``)."""
VALIDATION_FRACTION = 0.1
"""Share of rows held out to choose λ by validation (the paper's protocol)."""
NOISE_MODELS = ("auto", *preprocessing.NOISE_MODELS)
"""The named noise models and ``"auto"`` (``preprocessing.resolved_noise``)."""
REMOVED = {"mix_radii": "every fit of the λ path is pooled by its evidence",
           "mlp_edges": "the MLP's graph is the group norm of its first layer (the paper's)"}
"""Options of earlier versions that lost their experiments, with what happens instead."""


@dataclass(frozen=True)
class TrainingOptions:
    """How each posterior is trained and λ chosen: ``ProDAG(training=TrainingOptions(...))``.

    Parameters
    ----------
    patience, steps_per_epoch, warmup_steps, min_delta :
        Early stopping: an epoch is ``steps_per_epoch`` full-batch Adam steps (their mean
        objective tames a single step's Monte Carlo noise); a fit stops after ``patience``
        epochs whose objective (per row) does not beat the best by more than ``min_delta``,
        not counting epochs that end within its first ``warmup_steps`` steps. ``None``: for
        the linear SEM on candidate parents 3, 5 and 30, otherwise 5, 10 and 0
        (``prodag.config.epochs``, ``prodag.inference.kernels``).
    prior_mean : float
        Mean of the Gaussian prior ``N(prior_mean, prior_std²)`` on every weight of ``ω̃``
        (0: no edge is favoured a priori).
    n_lambdas : int
        Size of the λ grid when ``lam="auto"``.
    select_by : {"auto", "elbo", "validation", "elbo-sparse"}
        How ``lam="auto"`` picks a radius: the highest ELBO on all rows, or the best expected
        log-likelihood of held-out rows (the paper's protocol: ``X_val`` if given to ``fit``,
        else ``validation_fraction`` of the rows, then a refit on all rows). ``"elbo-sparse"``:
        the ELBO, but of the polished radii whose best fits are within 30 nats of the best
        (``prodag.posterior.chains.CONTENDER_NATS``) the smallest, and no fit at a larger
        radius is pooled: a one-standard-error rule, since two seeds' best fits at one radius
        can differ by more than that (``docs/findings.md``). ``"auto"``: ``"elbo-sparse"``
        from 100 variables on (where it lowered E-SHD over ten p = 100 datasets), else
        ``"elbo"`` (at p = 20 the near-tied radii are each other's contenders, and pooling
        both is the better posterior).
    validation_fraction : float in (0, 1)
        Share of rows held out for ``select_by="validation"`` when no ``X_val`` is given.
    init : {"auto", "prior", "data"}
        Where the first fit of every radius starts: ``"prior"`` (the paper's), or ``"data"``:
        means from ridge regressions along orders of the data (``prodag.inference.initialization``).
        ``"auto"``: ``"data"`` for the linear and additive SEMs, ``"prior"`` for the MLP.
    n_restarts : int or None
        Starts of the kept radius, mixed by their ELBO (``prodag.posterior.mixture``). ``None``: one
        per data start for the linear SEM started from the data (the top-down order and the
        searched orders; on candidate parents each four times, at least 8), 3 for the other linear
        and additive fits (their ELBOs have local
        optima, roughly one per order), 1 for the MLP. With ``select_by="elbo-sparse"`` the
        first 4 starts run at both polished radii and decide between them, and the others at
        the decided radius only (``prodag.inference.radius_selection.DECIDING_STARTS``).
    refine_steps : int or None
        Metropolis steps that move ``REFINED_DRAWS`` draws of the fitted mixture towards the
        model's own posterior after the fit (``prodag.inference.refinement``); the posterior is then
        those draws. 0: none (the mixture itself). With ``bootstrap``, each draw moves
        towards the posterior given its own chain's resample (a refined bagged posterior).
        ``None``: a cost in proportion to the fit's (``prodag.config.spec``): for the linear
        SEM ``375 · (20 / p) · (20 / K)`` steps, with ``K = p`` for the dense model and the
        most candidate parents of any variable on candidate parents (a step's arithmetic is
        about ``draws · p · K``), at most 6000 (p ≤ 5; 375 at p = 20, 1500 at p = 10) and at
        least 10 (dense p = 100: 15; screened p = 100, K ≈ 29: about 50); none for the
        additive SEM, the MLP and ``sampler="smc"``. ``diagnostics_["refinement"]`` of the
        fitted estimator says how many steps ran and what one cost.
    sampler : {"mixture", "smc"}
        The posterior: the fits' mixture (see refine_steps) or tempered SMC
        (``prodag.inference.smc``).
    candidate_parents : "auto", int or None
        Restrict each variable's parents to ``K`` candidates screened from the data (its
        first ``K`` neighbours on the lasso path, made symmetric; ``prodag.inputs.candidates``):
        the posterior is then the model's restricted to that support. ``"auto"``: ``K = 16``
        from 100 variables on, no screen below; None: no screen.
    """

    patience: int | None = None
    steps_per_epoch: int | None = None
    warmup_steps: int | None = None
    min_delta: float = 1e-3
    prior_mean: float = 0.0
    n_lambdas: int = 10
    select_by: str = "auto"
    validation_fraction: float = VALIDATION_FRACTION
    init: str = "auto"
    n_restarts: int | None = None
    refine_steps: int | None = None
    sampler: str = "mixture"
    candidate_parents: int | str | None = "auto"

    def __post_init__(self):
        check_fields(self)


@dataclass(frozen=True)
class NetworkOptions:
    """The MLP's networks (``sem="mlp"`` only): ``ProDAG(network=NetworkOptions(...))``.

    Parameters
    ----------
    hidden_units, hidden_layers : int
        Width ``d`` and depth of each variable's network (the paper's: 10 units, one layer;
        only the first layer is projected).
    activation : str
        Hidden-layer activation, a key of ``prodag.models.mlp.ACTIVATIONS``.
    bias : bool
        Give the hidden and output layers biases (the simulator's networks have none, so
        ``bias=False`` matches them).
    """

    hidden_units: int = 10
    hidden_layers: int = 1
    activation: str = "relu"
    bias: bool = True

    def __post_init__(self):
        check_fields(self)


GROUPS = {"training": TrainingOptions, "network": NetworkOptions}
"""The constructor's option groups and their classes."""


# ---- the rules ------------------------------------------------------------------------------

def check_lam(value) -> str | float:
    """λ, spelled one way: ``"auto"``, a positive number, or ``math.inf``."""
    if value is None:
        raise ValueError("lam=None is not a setting: write lam='auto' to choose the radius "
                         "(the default) or lam=math.inf for no l1 constraint.")
    if isinstance(value, str):
        if value == "auto":
            return value
        if value.strip().lower() in ("inf", "infinity"):
            raise ValueError(f"lam={value!r} is text: write lam=math.inf (or float('inf')) "
                             "for no l1 constraint.")
        raise ValueError(f"lam must be 'auto', a positive number or math.inf; got {value!r}.")
    lam, largest = check_positive("lam", value, allow_inf=True), float(np.finfo(np.float32).max)
    if largest < lam < math.inf:  # a radius this large constrains nothing anyway
        raise ValueError(f"lam={lam:g} overflows the fit's float32 arithmetic (largest "
                         f"{largest:.3g}); use lam=math.inf (--lam inf) for no l1 constraint.")
    return lam


def _noise_variance(value):
    if isinstance(value, str):
        return check_choice("noise_variance", value, NOISE_MODELS)
    try:
        vector = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        vector = np.array([np.nan])
    if vector.size == 0 or not np.all(np.isfinite(vector) & (vector > 0)):
        raise ValueError(f"noise_variance must be a positive number, an array of one positive "
                         f"number per variable, 'auto', 'equal', 'estimate' or "
                         f"'quietest'; got {value!r}.")
    return value


def _fraction(value):
    if check_positive("validation_fraction", value) >= 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {value!r}.")
    return value


def _finite(name: str) -> Callable:
    def rule(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}.")
        return value
    return rule


def _boolean(name: str) -> Callable:
    def rule(value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}.")
        return value
    return rule


def _optional(rule: Callable) -> Callable:
    return lambda value: None if value is None else rule(value)


def _group(name: str) -> Callable:
    def rule(value):
        if value is not None and not isinstance(value, GROUPS[name]):
            raise ValueError(f"{name} must be None (the defaults) or a prodag."
                             f"{GROUPS[name].__name__}(...), got {value!r}; e.g. "
                             f"{name}={GROUPS[name].__name__}().")
        return value
    return rule


def training_options(settings) -> TrainingOptions:
    """``settings.training``, or the defaults when it is ``None``."""
    return settings.training if settings.training is not None else TrainingOptions()


def network_options(settings) -> NetworkOptions:
    """``settings.network``, or the defaults when it is ``None``."""
    return settings.network if settings.network is not None else NetworkOptions()


@cache
def rules() -> dict[str, Callable]:
    """``{name: rule}`` for every setting (the constructor's, its groups' fields, and
    ``fit``'s ``intervention_kind``): a rule returns the value or raises ``ValueError``."""
    from prodag.inputs.interventions import INTERVENTION_KINDS
    from prodag.models import LIKELIHOODS, SEM_NAMES
    from prodag.models.mlp import ACTIVATIONS
    from prodag.projection import METHODS

    def choice(name, values):
        return lambda value: check_choice(name, value, values)

    def integer(name, minimum=1):
        return lambda value: check_integer(name, value, minimum=minimum)

    def positive(name, zero=False):
        return lambda value: check_positive(name, value, allow_zero=zero)

    def anything(value):  # prior knowledge: checked against the columns at fit time
        return value

    return {
        "sem": choice("sem", SEM_NAMES), "lam": check_lam,
        "n_samples": _optional(integer("n_samples")), "max_epochs": integer("max_epochs"),
        "lr": _optional(positive("lr")), "prior_std": positive("prior_std"),
        "noise_variance": _noise_variance, "likelihood": choice("likelihood", LIKELIHOODS),
        "projection": choice("projection", METHODS), "prune": positive("prune", zero=True),
        "n_chains": lambda value: check_integer("n_chains", value, minimum=1,
                                                maximum=FIRST_STREAM - 1), "bootstrap": _boolean("bootstrap"),
        "standardize": _boolean("standardize"), "forbidden": anything,
        "required": anything, "tiers": anything,
        "seed": _optional(check_seed), "progress": _boolean("progress"),
        "training": _group("training"), "network": _group("network"),
        # TrainingOptions
        "patience": _optional(integer("patience")),
        "steps_per_epoch": _optional(integer("steps_per_epoch")),
        "warmup_steps": _optional(integer("warmup_steps", 0)),
        "min_delta": positive("min_delta", zero=True), "prior_mean": _finite("prior_mean"),
        "n_lambdas": integer("n_lambdas"), "select_by": choice("select_by", SELECTIONS),
        "validation_fraction": _fraction, "init": choice("init", INITS),
        "n_restarts": _optional(integer("n_restarts")),
        "refine_steps": _optional(integer("refine_steps", 0)),
        "sampler": choice("sampler", ("mixture", "smc")),
        "candidate_parents": _candidate_parents,
        # NetworkOptions
        "hidden_units": integer("hidden_units"), "hidden_layers": integer("hidden_layers"),
        "activation": choice("activation", tuple(ACTIVATIONS)), "bias": _boolean("bias"),
        # fit(...)
        "intervention_kind": choice("intervention_kind", INTERVENTION_KINDS),
    }


def _candidate_parents(value):
    """``"auto"``, None or a positive number of candidate parents."""
    if value == "auto" or value is None:
        return value
    return check_integer("candidate_parents", value, minimum=1)


def check_fields(options) -> None:
    """Check every field of an option group (``TrainingOptions``, ``NetworkOptions``)."""
    for field in fields(options):
        rules()[field.name](getattr(options, field.name))


def check(params: dict) -> None:
    """Check the constructor's ``params`` (``get_params()``) by ``rules()``, and the rules
    that join several of them."""
    for name, value in params.items():
        rules()[name](value)
    training = params["training"] or TrainingOptions()
    network = params["network"] or NetworkOptions()
    if params["bootstrap"] and training.select_by == "validation":
        raise ValueError("bootstrap=True fits every chain on its own resample of the rows "
                         "and chooses lam by the ELBO; use TrainingOptions(select_by='elbo') "
                         "with it.")
    if training.sampler == "smc" and (params["bootstrap"] or training.refine_steps):
        raise ValueError("sampler='smc' takes bootstrap=False and refine_steps=0 (or None).")
    if training.init == "data" and params["sem"] == "mlp" and (
            network.activation != "relu" or network.hidden_units < 2):
        raise ValueError("init='data' starts each network as the linear start with ReLU units "
                         "in +/- pairs: it needs NetworkOptions(activation='relu', hidden_units"
                         " >= 2); use TrainingOptions(init='prior') for this network.")


def nest(flat: dict) -> dict:
    """Flat settings ``{name: value}`` as ``ProDAG``'s keyword arguments: the fields of
    ``TrainingOptions`` and ``NetworkOptions`` gathered into ``training`` and ``network``
    (over any given there), ``tiers`` with ``forbid_within_tiers`` as ``Tiers``."""
    from prodag.inputs.knowledge import Tiers

    kwargs, groups = {}, {name: {} for name in GROUPS}
    owner = {f.name: group for group, cls in GROUPS.items() for f in fields(cls)}
    for name, value in flat.items():
        if name in REMOVED:
            raise ValueError(f"{name} was removed: {REMOVED[name]}; leave it out.")
        if name == "intervention_kind":
            raise ValueError("intervention_kind describes the data: give it to fit(X, "
                             "interventions=..., intervention_kind=...).")
        if name in owner:
            groups[owner[name]][name] = value
        elif name != "forbid_within_tiers":
            kwargs[name] = value
    if flat.get("forbid_within_tiers") and flat.get("tiers") is not None:
        kwargs["tiers"] = Tiers(flat["tiers"], forbid_within=True)
    for group, values in groups.items():
        if values:
            base = kwargs.get(group) or GROUPS[group]()
            kwargs[group] = GROUPS[group](**{**as_dict(base), **values})
    return kwargs


def as_dict(options) -> dict:
    """An option group's fields as a dict (JSON-ready)."""
    return {f.name: getattr(options, f.name) for f in fields(options)}

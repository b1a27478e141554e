"""Every setting of a fit, resolved once and passed forward.

``resolve`` turns the estimator's parameters (``prodag.config.parameters``) into a frozen
``FitSpec`` once the data's variables and the prior knowledge on them are known: the model
configuration, the optimiser, the noise model, the starts, the dtype. The fit's steps
(``prodag.fit``) read the spec, never the estimator; the fitted estimator keeps it as
``spec_`` (a reloaded one too), so nothing after ``fit`` resolves a setting again. The
spec's two value types that the inference takes are defined here: ``ModelConfig`` (what fixes
the compiled model and projection) and ``OptimiserOptions``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import jax
import numpy as np
import optax

from prodag.config import parameters
from prodag.config.epochs import (resolved_patience, resolved_steps_per_epoch,
                                  resolved_warmup_steps)
from prodag.config.starts import (SCREENED_LR, SCREENED_RESTARTS, n_searched_graphs,
                                  screened_linear, takes_two_orders)
from prodag.inputs import preprocessing
from prodag.inputs.knowledge import Knowledge
from prodag.models import StructuralEquationModel, make_model
from prodag.projection import Projector, make_projector
from prodag.projection.parents import ParentTable


@dataclass(frozen=True)
class ModelConfig:
    """What fixes the compiled model and projection: the SEM (with the network's shape for
    ``sem="mlp"``; ``None`` for the linear SEM), the projection method, the pruning level and
    the prior knowledge (``prodag.inputs.knowledge``), and the noise distribution."""

    sem: str = "linear"
    hidden_units: int | None = None
    hidden_layers: int | None = None
    activation: str | None = None
    bias: bool | None = None
    projection: str = "auto"
    prune: float = 0.0
    knowledge: Knowledge | None = None
    likelihood: str = "gaussian"

    @classmethod
    def create(cls, sem: str, hidden_units: int, hidden_layers: int, activation: str,
               bias: bool, projection: str, prune: float, knowledge: Knowledge | None = None,
               likelihood: str = "gaussian") -> "ModelConfig":
        """A configuration with the network options dropped for the other SEMs."""
        if sem != "mlp":
            return cls(sem, projection=projection, prune=float(prune), knowledge=knowledge,
                       likelihood=likelihood)
        return cls(sem, int(hidden_units), int(hidden_layers), activation, bool(bias),
                   projection, float(prune), knowledge, likelihood)

    def model(self) -> StructuralEquationModel:
        if self.sem != "mlp":
            return make_model(self.sem, likelihood=self.likelihood,
                              parents=None if self.knowledge is None else
                              self.knowledge.candidate_support())
        return make_model(self.sem, hidden_units=self.hidden_units,
                          hidden_layers=self.hidden_layers, activation=self.activation,
                          bias=self.bias, likelihood=self.likelihood)

    def projector(self) -> Projector:
        return make_projector(self.projection, self.prune, self.knowledge)


@dataclass(frozen=True)
class OptimiserOptions:
    """Optimiser and stopping settings (epochs and patience: ``prodag.inference.kernels``)."""

    n_samples: int = 100
    max_epochs: int = 1000
    patience: int = 5
    lr: float = 0.1
    steps_per_epoch: int = 10
    warmup_steps: int = 0
    """Steps from the start within which an epoch without gain does not count toward the
    patience."""
    min_delta: float = 1e-3
    epochs_per_call: int = 20
    member_batch: int = 0
    """Members computed together (``vmap``); the batches run one after another in the same
    compiled loop (``lax.map``). 0: all at once, stopped members leaving the batch as it
    shrinks (the default on a CPU as on a GPU: ``docs/findings.md``). 1: one at a time, a
    stopped member skipped (least memory)."""

    def transformation(self) -> optax.GradientTransformation:
        """The optimiser these options describe: Adam with learning rate ``lr`` (a new
        transformation every call: it is not hashable, so caches key on the options)."""
        return optax.adam(self.lr)


class PathScreen(NamedTuple):
    """When a radius of the λ path compared by its ELBO stops early for trailing its chain's
    best radius (``prodag.inference.Screen``): from epoch ``after`` on, once its best epoch
    objective (negative ELBO per row) is more than ``margin`` above the chain's best, unless it
    lies within ``spared`` places of the grid of the radius holding that best."""

    after: int
    margin: float
    spared: int


@dataclass(frozen=True)
class FitSpec:
    """The resolved settings of one fit (see the module docstring)."""

    config: ModelConfig
    """The SEM, projection, pruning, knowledge and noise distribution."""
    optimiser: OptimiserOptions
    prior_mean: float
    """Mean of the prior on every weight (``TrainingOptions.prior_mean``)."""
    n_lambdas: int
    select_by: str
    """How ``lam="auto"`` chooses a radius, among ``n_lambdas``: a criterion
    (``TrainingOptions.select_by`` resolved, ``resolved_select_by``)."""
    validation_fraction: float
    sampler: str
    """``"mixture"`` or ``"smc"`` (``TrainingOptions.sampler``)."""
    noise_model: Any
    """``"equal"``, ``"quietest"``, ``"estimate"``, a float or a ``(p,)`` array."""
    learns_noise: bool
    lam: Any
    """``"auto"`` or a radius (a float, ``inf`` included)."""
    from_data: bool
    """Whether the fits start from the data (``TrainingOptions.init`` resolved)."""
    restarts: int
    """Starts of each radius (``TrainingOptions.n_restarts`` resolved for p)."""
    path_screen: PathScreen
    """When the λ path's trailing radii stop (``resolved_path_screen``)."""
    refine_steps: int
    """Metropolis steps of the refinement (``TrainingOptions.refine_steps`` resolved for p)."""
    refine_steps_set: bool
    """Whether ``refine_steps`` was set (not resolved from ``None``)."""
    n_chains: int
    bootstrap: bool
    standardize: bool
    prior_std: float
    dtype: Any
    """float64 where JAX has x64 enabled, else float32."""

    @property
    def split(self) -> bool:
        """Whether λ is chosen on held-out rows split off the data (then refitted on all)."""
        return self.lam == "auto" and self.select_by == "validation"


def resolve(settings, knowledge: Knowledge | None, p: int) -> FitSpec:
    """The ``FitSpec`` of an estimator's parameters ``settings`` for ``p`` variables with the
    prior ``knowledge`` on them (``prodag.inputs.knowledge``; None: none)."""
    network = parameters.network_options(settings)
    noise_model = resolved_noise_model(settings)
    config = ModelConfig.create(settings.sem, network.hidden_units, network.hidden_layers,
                                network.activation, network.bias, settings.projection,
                                settings.prune, knowledge, settings.likelihood)
    lam = settings.lam if settings.lam == "auto" else float(settings.lam)
    training = parameters.training_options(settings)
    screened = knowledge is not None and knowledge.candidates is not None
    return FitSpec(config, optimiser_options(settings, p, screened), float(training.prior_mean),
                   int(training.n_lambdas), resolved_select_by(settings, p),
                   float(training.validation_fraction), training.sampler, noise_model,
                   preprocessing.learns_noise(noise_model), lam,
                   resolved_init(settings) == "data",
                   resolved_restarts(settings, p, screened),
                   resolved_path_screen(settings, screened),
                   resolved_refine_steps(settings, p, slot_width(knowledge)),
                   training.refine_steps is not None,
                   int(settings.n_chains),
                   bool(settings.bootstrap), bool(settings.standardize),
                   float(settings.prior_std), jax.dtypes.canonicalize_dtype(np.float64))


def slot_width(knowledge: Knowledge | None) -> int | None:
    """The most candidate parents of any variable (the width of a draw on the candidate
    slots, ``ParentTable``), or None without candidate parents."""
    if knowledge is None or knowledge.candidates is None:
        return None
    return ParentTable.from_lists(knowledge.candidates).parents.shape[1]


def optimiser_options(settings, p: int, screened: bool = False) -> OptimiserOptions:
    """The optimiser's ``OptimiserOptions`` of ``settings`` for ``p`` variables, on candidate
    parents or not (``screened``), with ``lr=None`` resolved (for the linear SEM 0.03, at which
    its many data starts each keep their own mode whatever the key, and on candidate parents
    ``SCREENED_LR``; 0.1, the paper's, otherwise), ``patience=None`` (``resolved_patience``),
    ``steps_per_epoch=None`` (``resolved_steps_per_epoch``), ``warmup_steps=None``
    (``resolved_warmup_steps``) and ``n_samples=None``
    (``resolved_n_samples``)."""
    training = parameters.training_options(settings)
    if settings.lr is not None:
        lr = float(settings.lr)
    elif settings.sem == "linear":
        lr = SCREENED_LR if screened else LINEAR_LR
    else:
        lr = PAPER_LR
    return OptimiserOptions(n_samples=resolved_n_samples(settings, p),
                            max_epochs=settings.max_epochs,
                            patience=resolved_patience(settings, screened), lr=lr,
                            steps_per_epoch=resolved_steps_per_epoch(settings, screened),
                            warmup_steps=resolved_warmup_steps(settings, screened),
                            min_delta=float(training.min_delta))


def with_knowledge(spec: FitSpec, knowledge: Knowledge | None) -> FitSpec:
    """``spec`` with other prior knowledge."""
    return replace(spec, config=replace(spec.config, knowledge=knowledge))


# ---- defaults resolved at fit time ----------------------------------------------------------

LINEAR_LR = 0.03
PAPER_LR = 0.1
PATH_SCREEN = PathScreen(after=10, margin=0.5, spared=1)
"""The λ path's screen: on the stability benchmark's data a radius trailing its chain's best by
more than 0.5 per row at epoch 10 ended at least 0.3 per row (30 nats at n = 100) below the
best, never among the polished radii nor a contender of the mixture; on MUNIN1 the radius next
below the best trailed it by 13 per row at epoch 10 and ended level with it, hence the one
radius spared on each side (docs/findings.md)."""
SCREENED_PATH_SCREEN = PathScreen(after=5, margin=1.0, spared=1)
"""The screen of a linear fit on candidate parents, whose path steps at ``SCREENED_LR``: over
ten p = 100, n = 100 datasets it chose the same radii and the same posteriors as
``PATH_SCREEN`` for 60 fewer member-epochs a fit, a ninth of its training
(docs/findings.md, 2026-11-29, "the path's screen after five epochs")."""
AUTO_REFINE_STEPS = 375
"""Refinement steps of a default linear fit at ``AUTO_REFINE_P`` variables: the 300 moves
within a mode chosen by the stability benchmark and the time of a fit at p = 20, and a fifth
of the steps more for the jumps between fits (``moves.JUMP_PROBABILITY``), which replacing
moves within a mode cost accuracy on the exact-posterior benchmark (docs/findings.md)."""
AUTO_REFINE_P = 20
MIN_AUTO_REFINE_STEPS = 10
"""The fewest steps a default linear fit refines by (the dense model reaches it at p = 122,
candidate parents with K = 16 at about p = 500): above it, every draw still makes a few moves
and jumps by the model's own ratio, whatever p."""
MAX_AUTO_REFINE_STEPS = 6000
"""The most steps a default linear fit refines by (p ≤ 5): below ``AUTO_REFINE_P`` the steps
grow as a step's arithmetic shrinks, up to what the exact-posterior benchmark asked for with a
variance per variable (docs/findings.md, 2026-11-26, "refinement steps in proportion below
p = 20", and 2026-11-27, "the cap raised to 6000 steps")."""


AUTO_SAMPLES = 50
"""Monte Carlo samples per step of a default fit from ``AUTO_SAMPLES_P`` variables on, and of
every default fit of the additive SEM and the MLP."""
AUTO_SAMPLES_P = 20
MAX_AUTO_SAMPLES = 100
"""The most samples a default linear fit takes (the paper's L), below ``AUTO_SAMPLES_P``."""


def resolved_n_samples(settings, p: int) -> int:
    """``settings.n_samples`` with ``None`` resolved for ``p`` variables: for the linear SEM,
    ``AUTO_SAMPLES · (AUTO_SAMPLES_P / p)²`` between ``AUTO_SAMPLES`` and
    ``MAX_AUTO_SAMPLES`` (100 up to p = 14, 50 from p = 20: a step's arithmetic, about
    ``L · p²``, at most the p = 20 default's; chosen by the stability benchmark at p = 10
    and p = 20, docs/findings.md); ``AUTO_SAMPLES`` for the other SEMs."""
    if settings.n_samples is not None:
        return int(settings.n_samples)
    if settings.sem != "linear":
        return AUTO_SAMPLES
    scaled = int(AUTO_SAMPLES * (AUTO_SAMPLES_P / max(p, 1)) ** 2)
    return min(MAX_AUTO_SAMPLES, max(AUTO_SAMPLES, scaled))


def resolved_init(settings) -> str:
    """``training.init`` with ``"auto"`` resolved: the data start but for the MLP."""
    init = parameters.training_options(settings).init
    return ("prior" if settings.sem == "mlp" else "data") if init == "auto" else init


SPARSE_SELECTION_FROM_P = 100
"""Variables from which ``select_by="auto"`` is ``"elbo-sparse"`` (below: ``"elbo"``)."""


def resolved_select_by(settings, p: int) -> str:
    """``training.select_by`` with ``"auto"`` resolved for ``p`` variables: ``"elbo-sparse"``
    from ``SPARSE_SELECTION_FROM_P`` on, ``"elbo"`` below (``docs/findings.md``)."""
    select_by = parameters.training_options(settings).select_by
    if select_by != "auto":
        return select_by
    return "elbo-sparse" if p >= SPARSE_SELECTION_FROM_P else "elbo"


def resolved_path_screen(settings, screened: bool) -> PathScreen:
    """The λ path's screen: ``SCREENED_PATH_SCREEN`` for the linear SEM on candidate parents
    (``screened``), the fits it was measured on; ``PATH_SCREEN`` otherwise."""
    return SCREENED_PATH_SCREEN if screened_linear(settings, screened) else PATH_SCREEN


def resolved_restarts(settings, p: int, screened: bool = False) -> int:
    """``training.n_restarts`` with ``None`` resolved for ``p`` variables: 1 for the MLP; for
    the linear SEM started from the data with known or equal noise variances, one fit per
    data start (the top-down order and ``n_searched_graphs(p)`` searched ones), and at least
    ``SCREENED_RESTARTS`` on candidate parents (``screened``); 3 otherwise."""
    n_restarts = parameters.training_options(settings).n_restarts
    if n_restarts is not None:
        return int(n_restarts)
    if settings.sem == "mlp":
        return 1
    per_variable = resolved_noise_model(settings) == "estimate"
    two_orders = takes_two_orders(settings.sem, resolved_init(settings) == "data", per_variable)
    if not two_orders:
        return 3
    return max(SCREENED_RESTARTS, 1 + n_searched_graphs(p)) if screened else (
        1 + n_searched_graphs(p))


def resolved_refine_steps(settings, p: int, width: int | None = None) -> int:
    """``training.refine_steps`` with ``None`` resolved for ``p`` variables whose draws hold
    ``width`` entries a variable (``p``, the default: the dense model; on candidate parents the
    slots' width, the most candidates of any variable): for the linear SEM's mixture,
    ``AUTO_REFINE_STEPS · (AUTO_REFINE_P / p) · (AUTO_REFINE_P / width)`` (a step's arithmetic,
    about ``draws · p · width``, in proportion to the p = 20 default's), between
    ``MIN_AUTO_REFINE_STEPS`` and ``MAX_AUTO_REFINE_STEPS``; 0 for the other SEMs and for
    ``sampler="smc"``."""
    training = parameters.training_options(settings)
    if training.refine_steps is not None:
        return int(training.refine_steps)
    if settings.sem != "linear" or training.sampler != "mixture":
        return 0
    width = p if width is None else width
    steps = int(AUTO_REFINE_STEPS * (AUTO_REFINE_P / p) * (AUTO_REFINE_P / width))
    return min(MAX_AUTO_REFINE_STEPS, max(MIN_AUTO_REFINE_STEPS, steps))


def resolved_noise_model(settings):
    """``settings.noise_variance`` with ``"auto"`` resolved for ``settings.sem``."""
    return preprocessing.resolved_noise(settings.noise_variance, settings.sem)

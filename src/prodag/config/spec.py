"""Every setting of a fit, resolved once and passed forward.

``resolve`` turns the estimator's parameters (``prodag.config.parameters``) into a frozen
``FitSpec`` once the data's variables and the prior knowledge on them are known: the model
configuration, the optimiser, the noise model, the starts, the dtype. The fit's steps
(``prodag.procedure``) read the spec, never the estimator; the fitted estimator keeps it as
``spec_`` (a reloaded one too), so nothing after ``fit`` resolves a setting again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np

from prodag.config import parameters
from prodag.config.parameters import TrainingOptions
from prodag.inference import OptimiserOptions
from prodag.inference.fitting import ModelConfig
from prodag.inputs import preprocessing
from prodag.inputs.knowledge import Knowledge


@dataclass(frozen=True)
class FitSpec:
    """The resolved settings of one fit (see the module docstring)."""

    config: ModelConfig
    """The SEM, projection, pruning, knowledge and noise distribution."""
    optimiser: OptimiserOptions
    training: TrainingOptions
    noise_model: Any
    """``"equal"``, ``"quietest"``, ``"estimate"``, a float or a ``(p,)`` array."""
    learns_noise: bool
    lam: Any
    """``"auto"`` or a radius (a float, ``inf`` included)."""
    from_data: bool
    """Whether the fits start from the data (``TrainingOptions.init`` resolved)."""
    restarts: int
    """Starts of each radius (``TrainingOptions.n_restarts`` resolved for p)."""
    n_chains: int
    bootstrap: bool
    standardize: bool
    prior_std: float
    dtype: Any
    """float64 where JAX has x64 enabled, else float32."""

    @property
    def split(self) -> bool:
        """Whether λ is chosen on held-out rows split off the data (then refitted on all)."""
        return self.lam == "auto" and self.training.select_by == "validation"


def resolve(settings, knowledge: Knowledge | None, p: int) -> FitSpec:
    """The ``FitSpec`` of an estimator's parameters ``settings`` for ``p`` variables with the
    prior ``knowledge`` on them (``prodag.inputs.knowledge``; None: none)."""
    network = parameters.network_options(settings)
    noise_model = parameters.noise_model(settings)
    config = ModelConfig.create(settings.sem, network.hidden_units, network.hidden_layers,
                                network.activation, network.bias, settings.projection,
                                settings.prune, knowledge, settings.likelihood)
    lam = settings.lam if settings.lam == "auto" else float(settings.lam)
    return FitSpec(config, optimiser_options(settings),
                   parameters.training_options(settings), noise_model,
                   preprocessing.learns_noise(noise_model), lam,
                   parameters.resolved_init(settings) == "data",
                   parameters.resolved_restarts(settings, p), int(settings.n_chains),
                   bool(settings.bootstrap), bool(settings.standardize),
                   float(settings.prior_std), jax.dtypes.canonicalize_dtype(np.float64))


def optimiser_options(settings) -> OptimiserOptions:
    """The optimiser's ``OptimiserOptions`` of ``settings``, with ``lr=None`` resolved (0.03 for
    the linear SEM, whose many data starts each keep their own mode at that rate whatever the
    key; 0.1, the paper's, otherwise)."""
    training = parameters.training_options(settings)
    lr = ((parameters.LINEAR_LR if settings.sem == "linear" else parameters.PAPER_LR)
          if settings.lr is None else float(settings.lr))
    return OptimiserOptions(n_samples=settings.n_samples, max_epochs=settings.max_epochs,
                            patience=training.patience, lr=lr,
                            steps_per_epoch=training.steps_per_epoch,
                            min_delta=float(training.min_delta))


def with_knowledge(spec: FitSpec, knowledge: Knowledge | None) -> FitSpec:
    """``spec`` with other prior knowledge."""
    return replace(spec, config=replace(spec.config, knowledge=knowledge))

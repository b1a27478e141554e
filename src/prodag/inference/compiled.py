"""The one place where the inference's kernels are compiled and cached.

The kernels are pure functions over NamedTuple states, with the model and projection bound
(BlackJAX's form): the variational fit's (``kernels.build_kernels``), the posterior's draws
(``draws.draw_batch``), the refinement's (``refinement.build_kernel``) and the tempered SMC's
(``smc.build_kernel``). The ``jit_*`` functions compile them (``prodag.xla.exact_jit``); the
others build and compile the kernels of one configuration (``ModelConfig`` is hashable), cached,
so that refits (λ paths, benchmarks, restarts, loaded models) reuse one compilation instead of
tracing new closures every time. The host loops that run them take the compiled kernels:
``engine.VariationalInference``, ``draws.sample``, ``refinement.refine`` and ``smc.run``.
"""

from __future__ import annotations

import functools

import optax

from prodag.config.spec import ModelConfig, OptimiserOptions
from prodag.inference import draws, refinement, smc
from prodag.inference.engine import VariationalInference
from prodag.inference.kernels import VariationalKernels, build_kernels
from prodag.models.base import StructuralEquationModel
from prodag.projection import Projector
from prodag.xla import exact_jit

CACHED = 16
"""Configurations each cache holds."""


def jit_variational(kernels: VariationalKernels) -> VariationalKernels:
    """``kernels`` compiled (``init``'s ``max_epochs`` and ``score_keys``' counts static; the
    loss is left as it is, for differentiating and testing)."""
    return kernels._replace(
        init=exact_jit(kernels.init, static_argnums=(2,)), step=exact_jit(kernels.step),
        run=exact_jit(kernels.run),
        scores=exact_jit(kernels.scores),
        score_keys=exact_jit(kernels.score_keys, static_argnums=(1, 2)),
        expected_log_likelihood=exact_jit(kernels.expected_log_likelihood))


def variational_inference(model: StructuralEquationModel, project: Projector,
                          options: OptimiserOptions = OptimiserOptions(),
                          prior_mean: float = 0.0, prior_std: float = 1.0,
                          learn_noise_variance: bool = False,
                          optimiser: optax.GradientTransformation | None = None
                          ) -> VariationalInference:
    """The variational fit of ``model`` and ``project`` with its kernels compiled (not
    cached); ``optimiser``: the gradient transformation they step with (default: the one
    ``options`` describe, ``OptimiserOptions.transformation``)."""
    optimiser = options.transformation() if optimiser is None else optimiser
    kernels = build_kernels(model, project, options, prior_mean, prior_std, optimiser)
    return VariationalInference(model, jit_variational(kernels), options, prior_mean,
                                prior_std, learn_noise_variance)


@functools.lru_cache(maxsize=CACHED)
def variational(config: ModelConfig, options: OptimiserOptions, prior_mean: float,
                prior_std: float, learn_noise: bool) -> VariationalInference:
    """The compiled ELBO optimiser of ``config`` (cached: the optax transformation, not
    hashable, is built here from ``options``)."""
    return variational_inference(config.model(), config.projector(), options, prior_mean,
                                 prior_std, learn_noise, options.transformation())


@functools.lru_cache(maxsize=CACHED)
def sampler(config: ModelConfig):
    """The compiled ``draws.draw_batch`` of ``config`` (cached): ``draw(params, key, lam)``,
    for ``draws.sample``."""
    return exact_jit(functools.partial(draws.draw_batch, config.model(), config.projector()))


@functools.lru_cache(maxsize=CACHED)
def slot_sampler(config: ModelConfig):
    """The compiled ``draws.slot_draw_batch`` of ``config`` (cached): ``draw_slots(params, key,
    lam)``, for ``draws.slot_edge_counts``; None where draws are not made on slots (no
    candidate parents, or a model or projection without them)."""
    model, project = config.model(), config.projector()
    if (getattr(model, "parents", None) is None or not hasattr(model, "draw_slots")
            or getattr(project, "on_parents", None) is None):
        return None
    return exact_jit(functools.partial(draws.slot_draw_batch, model, project))


@functools.lru_cache(maxsize=CACHED)
def l1_norms(config: ModelConfig):
    """The compiled ``draws.l1_norm_batch`` of ``config`` (cached): ``norms(params, key, lam,
    excluded)``, for ``draws.l1_norm_mean``."""
    return exact_jit(functools.partial(draws.l1_norm_batch, config.model(), config.projector()))


def jit_refinement(kernel: refinement.Kernel) -> refinement.Kernel:
    """``kernel`` compiled; its step loop with ``refinement.FULLY_OPTIMISED`` (read when
    compiled)."""
    return kernel._replace(
        init=exact_jit(kernel.init), step=exact_jit(kernel.step),
        run_steps=exact_jit(kernel.run_steps, compiler_options=refinement.FULLY_OPTIMISED),
        conditional_noise=(None if kernel.conditional_noise is None
                           else exact_jit(kernel.conditional_noise)),
        project=exact_jit(kernel.project))


@functools.lru_cache(maxsize=CACHED)
def refinement_kernel(config: ModelConfig, noise_model=None) -> refinement.Kernel:
    """The compiled Metropolis refinement of ``config`` (cached); with a learned
    ``noise_model`` (``"estimate"``, ``"equal"``) the linear-Gaussian SEM's refinement
    integrates its variances out (``prodag.inference.refinement``); with knowledge, the moves
    change the allowed edges' weights only."""
    allowed = None if config.knowledge is None else config.knowledge.allowed_mask()
    return jit_refinement(refinement.build_kernel(config.model(), config.projector(),
                                                  noise_model, allowed))


@functools.lru_cache(maxsize=CACHED)
def slot_refinement_kernel(config: ModelConfig, noise_model=None) -> refinement.Kernel | None:
    """The compiled refinement of ``config`` with its draws on the candidate parents' slots
    (``refinement.build_slot_kernel``; cached), or None where it does not apply."""
    kernel = refinement.build_slot_kernel(config.model(), config.projector(), noise_model)
    return None if kernel is None else jit_refinement(kernel)


@functools.lru_cache(maxsize=CACHED)
def smc_kernel(config: ModelConfig, mutation_steps: int, ess_fraction: float,
               min_temperatures: int) -> smc.Kernel:
    """The compiled tempered-SMC kernel of ``config`` (cached)."""
    return jit_smc(smc.build_kernel(config.model(), config.projector(), mutation_steps,
                                    ess_fraction, min_temperatures))


def jit_smc(kernel: smc.Kernel) -> smc.Kernel:
    """``kernel`` compiled (``init``'s population and particle counts static)."""
    return smc.Kernel(exact_jit(kernel.init, static_argnums=(3, 4)), exact_jit(kernel.step))

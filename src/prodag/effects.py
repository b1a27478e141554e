"""Causal effects from the posterior: total effects, a readable summary, interventional draws.

Every posterior draw is a full SEM (graph, weights, noise), so a causal question asked of each
draw and summarised over draws carries the uncertainty about the graph through to the answer.

* **Linear SEM** ``x = Wᵀx + ε``: the total effect of ``x_j`` on ``x_k`` (the change in
  ``E[x_k]`` per unit change of ``x_j`` under ``do(x_j)``) is ``[(I − W)⁻¹ − I]_jk``, the sum
  over directed paths of the products of their weights. In data units ``W_jk = W̃_jk s_k /
  s_j`` for the fitted (centred, scaled) weights ``W̃`` and the column scales ``s``, and
  ``(I − W)⁻¹`` changes the same way, so the effects are exact for each draw.
* **Additive and MLP SEMs**: the average effect of a unit shift, ``E[x_k | x_j ← x_j + δ] −
  E[x_k]`` divided by ``δ`` (1 data unit by default): each draw's model is simulated on
  ``noise_rows`` noise rows, once as it is and once with ``x_j`` shifted, with the same noise
  (common random numbers), and the change of ``x_k`` is averaged over the rows. For a linear
  model this equals the closed form above; for a nonlinear one it is the effect averaged
  over the model's own distribution of ``x``. Its Monte Carlo error per draw is the standard
  deviation of the per-row changes over ``√noise_rows``; it adds to the spread of the draws,
  and the summary's ``mc_error`` (posterior sd / √n) bounds the error of the posterior mean.

The noise of the simulations is that of the fit: Gaussian (or Student-t, ``likelihood=
"student"``) with the fitted variances, in the fitted units. Effects of a variable on itself
(the diagonal) are 0.

Functions taking ``fitted`` read a fit's ``prodag.posterior.fitted.FittedPosterior`` and draw
from it (``prodag.posterior.samples``); the others are pure functions of arrays.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from prodag.effect_summaries import (LEVEL, EffectSummary, effect_rows,  # noqa: F401
                                     effect_table, ranked_effects, summarize)
from prodag.graph import directed_paths, longest_path  # noqa: F401  (part of this API)
from prodag.inputs.checks import check_integer, check_positive
from prodag.inputs.interventions import condition_offsets
from prodag.inputs.units import check_units, column_sd, in_units
from prodag.posterior.fitted import FittedPosterior
from prodag.streams import NUMPY_NOISE_STREAM
from prodag.xla import exact_jit

NOISE_ROWS = 64
"""Noise rows each posterior draw of a nonlinear SEM is simulated on (``total_effects``)."""
CHUNK = 250
"""Posterior draws simulated at once (bounds the memory of an MLP's hidden units)."""


# ---- pure functions of draws ------------------------------------------------------------


def data_unit_weights(W: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Linear weights in data units: ``W (n, p, p)`` fitted on columns divided by ``scale
    (p,)`` → ``W_jk s_k / s_j`` ``(n, p, p)``."""
    scale = np.asarray(scale, dtype=float)
    return np.asarray(W) * scale[None, None, :] / scale[None, :, None]


def linear_total_effects(W: np.ndarray) -> np.ndarray:
    """``(I − W)⁻¹ − I`` for every DAG in ``W (n, p, p)``: the total effects ``(n, p, p)``
    (``[l, j, k]``: effect of j on k in draw l), the sum over paths of weight products."""
    W = np.asarray(W, dtype=float)
    eye = np.eye(W.shape[-1])
    return np.linalg.inv(eye - W) - eye


def edge_support(weights: dict) -> np.ndarray:
    """The graphs ``(n, p, p)`` bool of a model's projected weights (each with a leading axis
    ``n``): ``W`` (linear, additive) or the nonzero first-layer groups ``W1`` (MLP)."""
    W = np.asarray(weights["W"] if "W" in weights else weights["W1"])
    return W != 0 if W.ndim == 3 else np.any(W != 0, axis=-1)


@cache
def _simulation():
    """The compiled simulation ``(model, sweeps, weights, noise, shift, fixed, values) →
    (L, m, p)``, built on first use: JAX is imported only when a model is simulated, so the
    pure functions above (all a linear fit's saved draws need) start fast."""
    import jax
    import jax.numpy as jnp

    def per_draw_mean(model, weights, Z):
        # f(Z) of each draw on its own rows: weights with leading axis L, Z (L, m, p)
        def one(w, z):
            return model.predict_mean(jax.tree.map(lambda a: a[None], w), z)[0]
        return jax.vmap(one)(weights, Z)

    def run(model, sweeps, weights, noise, shift, fixed, values):
        def sweep(_, Z):
            return jnp.where(fixed, values, per_draw_mean(model, weights, Z) + noise + shift)
        return jax.lax.fori_loop(0, sweeps, sweep, jnp.where(fixed, values, noise + shift))

    return exact_jit(run, static_argnums=(0, 1))


def simulate(model, weights: dict, noise: np.ndarray, sweeps: int, shift=None,
             fixed=None, values=None) -> np.ndarray:
    """Draws of every variable from the SEM ``model`` (``prodag.models``) with ``weights``
    (leading axis ``L``, fitted units) and noise ``(L, m, p)``: ``x = f(x) + ε + shift``,
    the variables of ``fixed (p,)`` bool held at ``values (p,)`` (a do-intervention). The
    result ``(L, m, p)`` is exact after ``sweeps ≥ longest_path + 1``."""
    import jax
    import jax.numpy as jnp

    noise = jnp.asarray(noise)
    p = noise.shape[-1]
    shift = jnp.zeros(p, noise.dtype) if shift is None else jnp.asarray(shift, noise.dtype)
    fixed = jnp.zeros(p, bool) if fixed is None else jnp.asarray(fixed, bool)
    values = jnp.zeros(p, noise.dtype) if values is None else jnp.asarray(values, noise.dtype)
    weights = jax.tree.map(lambda a: jnp.asarray(a, noise.dtype), weights)
    return np.asarray(_simulation()(model, int(sweeps), weights, noise, shift, fixed,
                                    values))


def shift_effects(model, weights: dict, noise: np.ndarray, scale: np.ndarray, causes,
                  delta: float = 1.0) -> np.ndarray:
    """Average effects of a shift of ``delta`` data units: ``(L, p, p)`` with the rows of
    ``causes`` filled (others 0), ``[l, j, k] = mean_rows(x_k shifted − x_k) · s_k / delta``.

    ``weights`` (leading axis ``L``) and ``noise (L, m, p)`` are in fitted units, the data
    were divided by ``scale (p,)``; the same noise serves every simulation."""
    L, _, p = np.shape(noise)
    scale = np.asarray(scale, dtype=float)
    sweeps = longest_path(edge_support(weights)) + 1
    base = simulate(model, weights, noise, sweeps)
    effects = np.zeros((L, p, p))
    for j in causes:
        shift = np.zeros(p)
        shift[j] = delta / scale[j]
        moved = simulate(model, weights, noise, sweeps, shift=shift)
        effects[:, j, :] = (moved - base).mean(axis=1) * scale[None, :] / delta
        effects[:, j, j] = 0.0
    return effects


# ---- a fitted posterior ------------------------------------------------------------------


def variable_index(value, names, what: str) -> int:
    """The column index of ``value`` (a name of ``names`` or an index); ``what`` names the
    argument in the error."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if 0 <= value < len(names):
            return int(value)
        raise ValueError(f"{what}: index {value} is out of range for {len(names)} variables "
                         f"(0 … {len(names) - 1}).")
    if isinstance(value, str) and value in names:
        return list(names).index(value)
    raise ValueError(f"{what}: unknown variable {value!r}; the variables are "
                     f"{', '.join(map(str, names))}.")


def fitted_sd(fitted: FittedPosterior) -> np.ndarray | None:
    """The standard deviations ``(p,)`` of the columns of a standardised fit, else None."""
    return column_sd(fitted.scale, fitted.spec.standardize)


def fitted_weights(fitted: FittedPosterior, n: int, seed) -> dict:
    """The model weights of ``n`` posterior draws (leading axis ``n``, fitted units), as
    ``ProDAG.sample_weights`` draws them (JAX is imported here, on first use)."""
    from prodag.posterior.samples import draw

    return draw(fitted, n, seed)[0]


def fitted_noise(fitted: FittedPosterior, shape, seed) -> np.ndarray:
    """Noise ``shape = (..., p)`` of the fit's distribution and variances (fitted units)."""
    from prodag.models.robust import STUDENT_DOF

    rng = np.random.default_rng([fitted.seed if seed is None else int(seed),
                                 NUMPY_NOISE_STREAM])
    unit = (rng.standard_t(STUDENT_DOF, shape) if fitted.spec.config.likelihood == "student"
            else rng.standard_normal(shape))
    return unit * np.sqrt(np.asarray(fitted.noise_variance, dtype=float))


def draws_and_paths(fitted: FittedPosterior, n: int = 1000, seed=None, causes=None,
                    noise_rows: int = NOISE_ROWS, delta: float = 1.0, units: str = "data"):
    """Effect draws ``(n, p, p)`` of a ``fitted`` posterior in ``units``
    (``prodag.inputs.units``; for the nonlinear SEMs only the rows of ``causes``, default all)
    and whether each draw has a directed path ``(n, p, p)`` bool."""
    sd = fitted_sd(fitted)
    check_units(units, sd)
    weights = fitted_weights(fitted, n, seed)
    paths = directed_paths(edge_support(weights))
    if fitted.spec.config.sem == "linear":
        draws = linear_total_effects(data_unit_weights(weights["W"], fitted.scale))
        return in_units(draws, sd, units), paths
    p = fitted.p
    causes = range(p) if causes is None else causes
    noise_rows = check_integer("noise_rows", noise_rows, minimum=1)
    delta = check_positive("delta", delta)
    model, chunks = fitted.spec.config.model(), []
    noise = fitted_noise(fitted, (len(paths), int(noise_rows), p), seed)
    for start in range(0, len(paths), CHUNK):
        part = {name: value[start:start + CHUNK] for name, value in weights.items()}
        chunks.append(shift_effects(model, part, noise[start:start + CHUNK], fitted.scale,
                                    causes, delta))
    return in_units(np.concatenate(chunks), sd, units), paths


def total_effects(fitted: FittedPosterior, n: int = 1000, seed=None,
                  noise_rows: int = NOISE_ROWS, delta: float = 1.0,
                  units: str = "data") -> np.ndarray:
    """``(n, p, p)`` draws of every total effect of a ``fitted`` posterior in data units, or
    in standardised units (``units="standardized"``, a fit with ``standardize=True``;
    ``prodag.inputs.units``); ``noise_rows`` and ``delta`` apply to the nonlinear SEMs."""
    return draws_and_paths(fitted, n, seed, None, noise_rows, delta, units)[0]


def effect(fitted: FittedPosterior, cause, on, n: int = 1000, level: float = LEVEL,
           seed=None, noise_rows: int = NOISE_ROWS, delta: float = 1.0,
           units: str = "data") -> EffectSummary:
    """The ``EffectSummary`` of the total effect of ``cause`` on ``on`` (names or indices),
    in ``units`` (``total_effects``)."""
    names = list(fitted.columns)
    j, k = variable_index(cause, names, "cause"), variable_index(on, names, "effect")
    if j == k:
        raise ValueError(f"cause and effect are the same variable ({names[j]!r}); name two "
                         "different variables.")
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must be a probability in (0, 1), e.g. 0.9; got {level!r}.")
    draws, paths = draws_and_paths(fitted, n, seed, [j], noise_rows, delta, units)
    return summarize(draws[:, j, k], paths[:, j, k], level, names[j], names[k], units)


def _refuse_overflow(do: dict, names: list, standardised: np.ndarray,
                     fixed: np.ndarray) -> None:
    """Refuse ``do`` values whose draws overflow the fit's float32 arithmetic (``standardised``
    and ``fixed``: ``(p,)``, the values in the units the model sees and which are set)."""
    shown = ", ".join(f"{names[j]} at {abs(standardised[j]):.3g} standard deviations from "
                      "its mean" for j in np.flatnonzero(fixed))
    raise ValueError(f"do={do!r} makes draws too large to compute (they overflow to "
                     f"infinity): {shown}. Set values within the range the data cover.")


def intervene(fitted: FittedPosterior, do: dict, n: int = 1000, seed=None, condition=None):
    """``n`` draws of every variable under ``do`` (``{variable: value in data units}``), one
    posterior draw (graph, weights) and one noise row each: ``(n, p)``, a DataFrame when the
    fit had column names. A fit with conditions needs the ``condition`` to intervene in."""
    names = list(fitted.columns)
    if not isinstance(do, dict) or not do:
        raise ValueError("do must be a dict {variable: value}, e.g. {'pkc': 1.0}; got "
                         f"{do!r}.")
    fixed, values = np.zeros(len(names), bool), np.zeros(len(names))
    for variable, value in do.items():
        j = variable_index(variable, names, "do")
        try:
            values[j] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"do[{variable!r}] must be a number, got {value!r}.") from None
        if not np.isfinite(values[j]):
            raise ValueError(f"do[{variable!r}] must be finite, got {value!r}.")
        fixed[j] = True
    if fitted.conditions is None:
        if condition is not None:
            raise ValueError("this model was fitted without conditions; intervene takes no "
                             "condition.")
        offsets = 0.0
    elif condition is None:
        raise ValueError("this model was fitted with one intercept per condition: give "
                         "intervene a condition, one of "
                         f"{', '.join(map(repr, fitted.conditions))}.")
    else:
        offsets = condition_offsets(fitted.conditions, fitted.condition_means, [condition],
                                    1)[0]
    centre = fitted.mean + offsets
    standardised = (values - centre) / fitted.scale
    if np.abs(standardised[fixed]).max() > np.finfo(np.float32).max:
        _refuse_overflow(do, names, standardised, fixed)
    weights = fitted_weights(fitted, n, seed)
    noise = fitted_noise(fitted, (len(edge_support(weights)), 1, len(names)), seed)
    sweeps = longest_path(edge_support(weights)) + 1
    Z = simulate(fitted.spec.config.model(), weights, noise, sweeps, fixed=fixed,
                 values=standardised)[:, 0]
    X = np.where(fixed, values, Z * fitted.scale + centre)
    if not np.isfinite(X).all():
        _refuse_overflow(do, names, standardised, fixed)
    default = names == [f"x{j}" for j in range(len(names))]
    return X if default else pd.DataFrame(X, columns=names)

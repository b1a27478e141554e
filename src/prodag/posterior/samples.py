"""Draws of a fitted posterior (``prodag.posterior.fitted.FittedPosterior``).

A fit with draws of its own (refinement or tempered SMC) is sampled by taking those draws in
a random order (with replacement beyond their number) and projecting them; otherwise every
draw picks a mixture component by its weight and samples that component's projected normal
(``prodag.posterior.mixture``). Either way, negligible entries are dropped
(``prodag.posterior.negligible``). ``seed=None`` uses the key fixed by the fit's seed, so
repeated calls and a reloaded fit draw the same samples.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.inference import compiled, refinement
from prodag.inference import draws as fit_draws
from prodag.inputs.checks import check_integer, check_seed
from prodag.posterior import mixture
from prodag.posterior.fitted import FittedPosterior
from prodag.posterior.negligible import without_negligible, without_negligible_on_slots
from prodag.streams import SAMPLE_STREAM


def sampling_key(fitted: FittedPosterior, seed) -> jax.Array:
    """The key of a draw: the fit's own sampling stream (``seed=None``) or ``seed``'s."""
    return (jax.random.fold_in(jax.random.PRNGKey(fitted.seed), SAMPLE_STREAM) if seed is None
            else jax.random.PRNGKey(check_seed(seed)))


def draw_rows(n_draws: int, n: int, key: jax.Array) -> np.ndarray:
    """Which of ``n_draws`` stored draws make a sample of ``n``: a random order of all of them,
    then (beyond ``n_draws``) draws with replacement; the first ``m`` rows for ``n ≥ m`` are
    those for ``m``."""
    order = np.asarray(jax.random.permutation(key, n_draws))
    extra = np.asarray(jax.random.choice(jax.random.fold_in(key, 1), n_draws,
                                         (max(n - n_draws, 0),)))
    return np.concatenate([order, extra])[:n]


def stored_draws(config, draws, picked: np.ndarray | None = None) -> tuple[dict, np.ndarray]:
    """The fit's own draws ``draws`` (``prodag.inference.refinement.Refined``; those at the
    indices ``picked``, all by default) as the posterior samples them: projected at their radii
    (``config``: the fit's ``ModelConfig``; on their slots where they are kept there),
    negligible entries dropped; the model weights and the graphs ``(n, p, p)``, fitted
    units."""
    picked = np.arange(len(draws.lams)) if picked is None else picked
    kernel = projection_kernel(config, draws)
    weights, graphs = projected(kernel, draws, picked)
    if kernel.table is not None:  # slots (n, p, K) as the (n, p, p) matrices they stand for
        weights, graphs = {"W": kernel.table.dense(weights["W"])}, kernel.table.dense(graphs)
    return without_negligible(config.sem, weights, graphs, draws.noise[picked],
                              config.knowledge)


def projected(kernel, draws, picked: np.ndarray) -> tuple[dict, np.ndarray]:
    """The stored draws at the indices ``picked`` projected at their radii by ``kernel``
    (``projection_kernel``): weights and graphs, ``(n, p, p)``, or ``(n, p, K)`` on slots."""
    return fit_draws.project_in_batches(
        kernel, {name: value[picked] for name, value in draws.weights_tilde.items()},
        draws.lams[picked])


def projection_kernel(config, draws) -> refinement.Kernel:
    """The compiled kernel that projects the fit's own ``draws``: on the candidate parents'
    slots where the draws are kept there (``ParentTable.holds``), else the dense one."""
    kernel = compiled.slot_refinement_kernel(config)
    if kernel is not None and kernel.table.holds(draws.weights_tilde):
        return kernel
    return compiled.refinement_kernel(config)


def stored_batches(config, draws, picked: np.ndarray):
    """``stored_draws`` of the rows ``picked`` made ``fit_draws.PROJECT_BATCH`` at a time: a
    generator of ``(weights, graphs)`` blocks whose concatenation is ``stored_draws(config,
    draws, picked)`` (each draw is projected in a batch of the same size either way), so no
    ``(n, p, p)`` array is held."""
    for start in range(0, len(picked), fit_draws.PROJECT_BATCH):
        yield stored_draws(config, draws, picked[start:start + fit_draws.PROJECT_BATCH])


def stored_edge_probabilities(config, draws) -> np.ndarray:
    """``P(edge)`` ``(p, p)`` over the fit's own draws ``draws`` as ``stored_draws`` gives
    them, counted a block at a time (``stored_batches``; on their slots where they are kept
    there, ``negligible.negligible_on_slots``)."""
    n = len(draws.lams)
    kernel = projection_kernel(config, draws)
    if kernel.table is None:
        return sum(np.sum(graphs != 0, axis=0)
                   for _, graphs in stored_batches(config, draws, np.arange(n))) / n
    counts = 0  # on the slots: the same entries dropped, no (n, p, p) block made
    for start in range(0, n, fit_draws.PROJECT_BATCH):
        picked = np.arange(start, min(n, start + fit_draws.PROJECT_BATCH))
        _, slots = projected(kernel, draws, picked)
        kept = without_negligible_on_slots(config.sem, np.asarray(slots), kernel.table,
                                           draws.noise[picked], config.knowledge)
        counts = counts + np.sum(kept != 0, axis=0)
    return kernel.table.dense(np.asarray(counts)[None])[0] / n


def draw(fitted: FittedPosterior, n: int, seed=None) -> tuple[dict, np.ndarray]:
    """``n`` posterior draws: the model weights (a dict of arrays with a leading axis ``n``,
    fitted units) and the graphs ``(n, p, p)`` (``[s, j, k]``: j → k, fitted units)."""
    n = check_integer("n", n, minimum=1)
    key = sampling_key(fitted, seed)
    config, draws = fitted.spec.config, fitted.draws
    if draws is not None:
        return stored_draws(config, draws, draw_rows(len(draws.lams), n, key))
    return mixture_draws(fitted, n, key)


def draw_batches(fitted: FittedPosterior, n: int, seed=None):
    """The draws of ``draw(fitted, n, seed)`` as a generator of ``(weights, graphs)`` blocks
    in order, their concatenation equal to ``draw``'s: ``fit_draws.PROJECT_BATCH`` draws a
    block for a fit with draws of its own (no ``(n, p, p)`` array held), one block for a
    mixture's draws."""
    n = check_integer("n", n, minimum=1)  # checked now, not at the first block
    key = sampling_key(fitted, seed)
    config, draws = fitted.spec.config, fitted.draws
    if draws is not None:
        return stored_batches(config, draws, draw_rows(len(draws.lams), n, key))

    def one_block():
        yield mixture_draws(fitted, n, key)
    return one_block()


def mixture_draws(fitted: FittedPosterior, n: int, key) -> tuple[dict, np.ndarray]:
    """``n`` draws of the fitted mixture (every draw picks a component by its weight and
    samples its projected normal; ``key``), negligible entries dropped: weights and graphs
    ``(n, p, p)``, fitted units."""
    config = fitted.spec.config
    draw_batch = compiled.sampler(config)

    def sample(k, component_key, m):
        return fit_draws.sample(draw_batch, jax.tree.map(jnp.asarray, fitted.components[k]),
                                component_key, m, fitted.lams[k])
    weights, graphs = mixture.sample_mixture(sample, list(range(len(fitted.components))),
                                             fitted.weights, key, n)
    return without_negligible(config.sem, weights, graphs, fitted.noise_variance,
                              fitted.knowledge)

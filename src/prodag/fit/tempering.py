"""The tempered SMC of a fit (``prodag.inference.smc``): its populations run and pooled.

``POPULATIONS`` independent populations of particles start from the same proposal (every
contender fit) and move to the model's posterior; their draws are pooled, each population an
equal share, and compared per edge (``prodag.posterior.populations``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.inference import compiled, draws, refinement, smc
from prodag.posterior.populations import diagnose_populations

POPULATIONS = 2
"""Independent populations; the draws are theirs pooled, each an equal share."""


def sample(config, proposal: smc.Proposal, target: refinement.Target, key: jax.Array,
           n_draws: int, names: list[str], n_populations: int = POPULATIONS,
           on_step=None) -> tuple[refinement.Refined, dict]:
    """``n_draws`` draws of the model's posterior (``n_populations`` populations of
    ``n_draws // n_populations`` particles, pooled) as ``refinement.Refined`` (acceptance:
    of refinement's moves), and the populations' diagnostic (``diagnose``)."""
    n_particles = n_draws // n_populations
    kernel = compiled.smc_kernel(config, smc.MUTATION_STEPS, smc.ESS_FRACTION,
                                 smc.MIN_TEMPERATURES)
    state, infos = smc.run(kernel, key, proposal, target, n_populations, n_particles, on_step)
    weights_tilde = {name: np.asarray(value) for name, value in state.position.items()
                     if name != smc.NOISE}
    noise = np.asarray(jnp.exp(state.position[smc.NOISE]) if smc.NOISE in state.position else
                       jnp.broadcast_to(target.noise, (len(state.lams), target.noise.shape[-1])))
    counts = np.sum([np.asarray(info.counts) for info in infos], axis=0)
    acceptance = counts[0] / np.maximum(counts[1], 1)
    lams = np.asarray(state.lams)
    graphs = draws.project_in_batches(compiled.refinement_kernel(config), weights_tilde,
                                           lams)[1]
    probabilities = (graphs != 0).reshape(n_populations, n_particles,
                                          *graphs.shape[1:]).mean(axis=1)
    moves = len(refinement.MOVES)  # the SMC's moves within a mode; it makes no jumps
    drawn = refinement.Refined(weights_tilde, lams, noise, np.concatenate(
        [acceptance[:moves], np.zeros(len(refinement.KINDS) - moves)]))
    return drawn, diagnose_populations(probabilities, np.asarray(state.log_evidence),
                                       np.asarray(infos[-1].ess), len(infos), names)

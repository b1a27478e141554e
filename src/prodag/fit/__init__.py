"""One fit, top to bottom: prepare → plan (starts) → chains → pool → draws.

``ProDAG.fit`` checks its parameters, prepares the data (``prepare.preprocess``), resolves
the settings once (``prepare.resolve_spec``), calls ``run`` and holds what it returns. Each
step reads the resolved ``FitSpec``, the prepared data and the previous step's result; none
reads or writes the estimator, so the state flows forward only:

1. ``prepare``: the data checked, centred and scaled as the model sees them (``Prepared``);
2. ``plan``: the compiled engine and every chain's rows with their starts (``FitPlan``);
3. ``chains``: every chain's fits, through the λ path or at the fixed radius;
4. ``pool``: the fits pooled by evidence into one mixture, the chains compared;
5. ``draws``: the posterior's own draws (refinement, or tempered SMC: ``tempering``) and
   what orients their edges.
"""

from __future__ import annotations

import jax
import numpy as np

from prodag.config.spec import FitSpec
from prodag.fit import chains, draws, plan, pool
from prodag.fit.prepare import Prepared
from prodag.inputs import candidates
from prodag.posterior.fitted import FittedPosterior


def run(spec: FitSpec, prepared: Prepared, progress) -> FittedPosterior:
    """The fitted posterior of the ``prepared`` data under the settings ``spec``, every key
    drawn from ``prepared.seed``; ``progress`` (``prodag.progress.Progress``) names the stage
    that runs and times it."""
    progress.stage("data starts (order search)")
    fit_plan = plan.plan_fit(spec, prepared)
    progress.set_total(fit_plan.n_fits)
    key = jax.random.PRNGKey(prepared.seed)
    runs = chains.run_chains(spec, fit_plan, prepared.noise, [
        jax.random.fold_in(key, c) for c in range(spec.n_chains)], progress)
    progress.stage("pooling the fits")
    pooled = pool.pool(fit_plan, runs, prepared, key)
    pooled, own_draws = draws.finish(spec, fit_plan, pooled, runs, prepared, key, progress)
    return fitted_posterior(spec, prepared, pooled, own_draws)


def fitted_posterior(spec: FitSpec, prepared: Prepared, pooled: pool.PooledMixture,
                     own_draws) -> FittedPosterior:
    """The ``FittedPosterior`` of a fit: its ``pooled`` mixture, its own draws (or None) and
    what maps them back to the data; the noise variances are the first component's learned
    ones, or the fixed ones."""
    learned = pooled.components[0].log_noise_variance
    p = len(prepared.columns)
    screened = spec.config.knowledge
    return FittedPosterior(
        spec=spec, columns=prepared.columns, mean=prepared.mean, scale=prepared.scale,
        noise_variance=(prepared.noise if learned is None else
                        np.broadcast_to(np.exp(learned), (p,)).copy()),
        components=pooled.components, weights=pooled.weights, lams=pooled.lams,
        lambda_path=pooled.lambda_path, history=pooled.history, objective=pooled.objective,
        diagnostics=pooled.diagnostics, draws=own_draws, seed=prepared.seed,
        knowledge=prepared.knowledge,
        candidate_parents=(None if screened is None or screened.candidates is None
                           else candidates.as_mask(screened.candidates)),
        conditions=prepared.conditions, condition_means=prepared.condition_means,
        intervention_kind=prepared.intervention_kind)

"""The fitted posterior: one immutable value holding everything a fit produced.

``prodag.fit.run`` returns it, ``ProDAG`` holds it (``posterior_``) and reads its fitted
attributes from it, ``prodag.io.persistence`` saves and loads it, and everything that answers
questions of a fit (``prodag.posterior.samples``, ``prodag.effects``, the chains' diagnostic)
takes it, never the estimator. It imports nothing of JAX, so reading a fit's fields stays
cheap (``prodag effects`` on saved draws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from prodag.config.spec import FitSpec
    from prodag.inference import Params
    from prodag.inference.refinement import Refined
    from prodag.inputs.knowledge import Knowledge


class FittedPosterior(NamedTuple):
    """What one fit of ``p`` variables produced (``K`` mixture components, ``G`` conditions)."""

    spec: FitSpec
    """Every setting of the fit, resolved once (SEM, noise model, knowledge with the screened
    candidate parents, starts, refinement steps)."""
    columns: list[str]
    """The ``p`` variables' names."""
    mean: np.ndarray
    """``(p,)``: the fit saw ``(X − mean) / scale``."""
    scale: np.ndarray
    """``(p,)``: the columns' divisors (one common scale unless standardised)."""
    noise_variance: np.ndarray
    """``(p,)``: the noise variances of the first component, in the fitted units."""
    components: list[Params]
    """The mixture's ``K`` variational fits, largest weight first."""
    weights: np.ndarray
    """``(K,)``: the components' weights (sum 1)."""
    lams: np.ndarray
    """``(K,)``: the components' ℓ1 radii."""
    lambda_path: dict | None
    """The first component's chain's λ grid with its scores (None: a fixed radius)."""
    history: np.ndarray
    """``(epochs,)``: the first component's objective per epoch."""
    objective: float
    """The first component's negative ELBO per row."""
    diagnostics: dict
    """The chains' agreement (``prodag.posterior.chains.diagnose``), with the SMC's
    ``"populations"``, the ``"refinement"`` report and the ``"sortability"`` report."""
    draws: Refined | None
    """The posterior's own draws (refinement or tempered SMC; ``N`` of them), or None: the
    mixture itself is the posterior."""
    seed: int
    """The fit's seed (the default sampling key derives from it)."""
    knowledge: Knowledge | None
    """The checked prior knowledge on the variables (without the candidate parents)."""
    candidate_parents: np.ndarray | None
    """``(p, p)`` bool: ``[j, k]``, ``j`` a candidate parent of ``k`` (None: all were)."""
    conditions: list[str] | None
    """The ``G`` experimental conditions' labels, or None."""
    condition_means: np.ndarray | None
    """``(G, p)``: each condition's column means in data units, or None."""
    intervention_kind: str
    """``"do"`` or ``"activity"`` (``prodag.inputs.interventions``)."""

    @property
    def p(self) -> int:
        """The number of variables."""
        return len(self.columns)

    @property
    def lam(self) -> float:
        """The first component's radius."""
        return float(self.lams[0])

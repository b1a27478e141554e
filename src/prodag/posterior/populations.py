"""The agreement of a fit's tempered SMC populations (``prodag.fit.tempering`` runs them).

Independent populations of particles start from the same proposal and move to the same
posterior; their draws are pooled, each population an equal share. Their edge probabilities
are compared per edge as ``prodag.posterior.chains.diagnose`` compares chains: an edge on
which they differ by more than 0.3 says the sampler did not mix between the modes there.
"""

from __future__ import annotations

import warnings

import numpy as np

from prodag.posterior.chains import diagnose, listed_edges


def diagnose_populations(probabilities: np.ndarray, log_evidence: np.ndarray, ess: np.ndarray,
                         temperatures: int, names: list[str]) -> dict:
    """``chains.diagnose`` of the populations' edge probabilities ``(P, p, p)`` (its
    ``chain_elbos``: each population's ``log Ẑ``, like an ELBO a lower bound of the log
    evidence in expectation), with each population's last ESS (as a share of its
    particles) and the number of temperatures."""
    return {**diagnose(probabilities, list(log_evidence), names),
            "ess": [float(x) for x in ess], "temperatures": int(temperatures)}


def warn_disagreement(diagnostics: dict) -> None:
    """Warn (``PopulationDisagreementWarning``) naming the edges the populations disagree on."""
    edges = diagnostics["disagreeing_edges"]
    if not edges:
        return
    shown, more = listed_edges(edges)
    warnings.warn(
        f"the {diagnostics['n_chains']} independent SMC populations disagree by more than "
        f"{diagnostics['threshold']:g} on {len(edges)} edge(s): {shown}{more}. The posterior "
        "pools them, each an equal share, but these probabilities are not reproducible: the "
        "sampler did not mix between the modes; fit more chains (n_chains) or starts "
        "(TrainingOptions(n_restarts=...)) so that the proposal holds every mode.",
        PopulationDisagreementWarning, stacklevel=5)


class PopulationDisagreementWarning(UserWarning):
    """Independent SMC populations disagree about some edges."""


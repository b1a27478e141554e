"""Fitting a posterior and writing its files: what ``fit`` and ``demo`` share."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import typer

RESULT_FILES = {"edge_probabilities": "edge_probabilities.csv", "samples": "samples.npz",
                "posterior": "posterior.npz", "heatmap": "heatmap.png", "graph": "graph.png"}
"""The files ``write_results`` writes into a results folder."""


def fit_posterior(frame: pd.DataFrame, interventions=None, conditions=None, **settings):
    """A :class:`prodag.ProDAG` built from ``settings`` and fitted on ``frame`` (with the
    known ``interventions`` and the rows' ``conditions``, if any), and the seconds the fit
    took."""
    from prodag import ProDAG

    estimator = ProDAG(**settings)
    start = time.perf_counter()
    estimator.fit(frame, interventions=interventions, conditions=conditions)
    return estimator, time.perf_counter() - start


def write_results(estimator, variables: list[str], out: Path, *, threshold: float,
                  n_draws: int, truth: np.ndarray | None = None) -> dict:
    """Write ``RESULT_FILES`` into ``out``; return the drawn ``samples`` and the edge
    ``probabilities`` computed from them.

    ``samples.npz`` holds ``estimator.sample(n_draws)`` (the estimator's own sampling key),
    exactly what ``prodag evaluate`` draws from the saved ``posterior.npz``.
    """
    from prodag import plotting
    from prodag.metrics import edge_probabilities

    samples = np.asarray(estimator.sample(n_draws))
    probs = edge_probabilities(samples)
    pd.DataFrame(probs, index=variables, columns=variables).to_csv(
        out / RESULT_FILES["edge_probabilities"])
    np.savez_compressed(out / RESULT_FILES["samples"], samples=samples,
                        variables=np.array(variables))
    estimator.save(out / RESULT_FILES["posterior"])
    plotting.plot_edge_probabilities(probs, variables, true_graph=truth).savefig(
        out / RESULT_FILES["heatmap"], dpi=150)
    plotting.plot_graph(probs, threshold, variables).savefig(out / RESULT_FILES["graph"],
                                                             dpi=150)
    return {"probabilities": probs, "samples": samples}


def lam_used(estimator) -> float | None:
    """The fitted radius ``lam_`` for JSON: a float, or ``None`` for ∞ (no ℓ1 step)."""
    lam = float(estimator.lam_)
    return lam if math.isfinite(lam) else None


def describe_lam(estimator) -> str:
    """One sentence naming the radius the fit used and how it came about."""
    lam = float(estimator.lam_)
    text = "inf (no l1 constraint)" if math.isinf(lam) else f"{lam:.4g}"
    how = (f", chosen by {estimator.select_by} among {estimator.n_lambdas} radii"
           if estimator.lam is None else "")
    return f"l1 radius lam = {text}{how}."


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(path: Path, content: dict) -> None:
    path.write_text(json.dumps(content, indent=2, default=_json_default) + "\n")


def describe_mixture(estimator) -> str:
    """One sentence on the posterior's components (``prodag.mixture``)."""
    weights = estimator.mixture_weights_
    if len(weights) == 1:
        return "The posterior is one variational fit (the other starts scored far worse)." \
            if estimator.n_restarts_ > 1 else "The posterior is one variational fit."
    return (f"The posterior mixes {len(weights)} fits from different starts, weighted by "
            f"their evidence: {', '.join(f'{w:.2f}' for w in weights)}.")


def echo_done(seconds: float, estimator, out: Path, files) -> None:
    """The closing lines of a fit: its time, its radius, its components and where its files
    are."""
    typer.echo(f"\nFit took {seconds:.1f} s (seed {estimator.seed_}); {describe_lam(estimator)}")
    typer.echo(describe_mixture(estimator))
    typer.echo(f"Results in {out}/: {', '.join(files)}")
    typer.echo(f"Causal effects with their uncertainty: prodag effects {out} "
               "[--cause X --effect Y]")

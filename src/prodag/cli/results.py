"""Fitting a posterior and writing its files: what ``fit`` and ``demo`` share. The results
folder every command writes whole or not at all is ``prodag.cli.folders`` (``check_out``,
``results_folder``)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import typer

from prodag.config import parameters
from prodag.posterior.sortability import describe as describe_orientation

RESULT_FILES = {"edge_probabilities": "edge_probabilities.csv", "samples": "samples.npz",
                "posterior": "posterior.npz", "heatmap": "heatmap.png", "graph": "graph.png",
                "disagreeing_edges": "disagreeing_edges.csv"}
"""The files ``write_results`` writes into a results folder."""


LARGE_P = 100
"""Beyond this many variables ``check_settings`` announces the memory a fit needs."""
KNOWLEDGE_OPTIONS = {"forbidden": "--forbid", "required": "--require", "tiers": "--tiers"}
"""The option that gives each kind of prior knowledge (as ``prodag.inputs.knowledge`` names it)."""


def check_settings(frame: pd.DataFrame, interventions=None, conditions=None, **settings):
    """The checks ``ProDAG.fit`` makes before fitting (settings, data table, prior knowledge,
    intervention targets), made before the command announces a fit or writes anything; an
    error about prior knowledge names its option."""
    from prodag.config.parameters import network_options, rules
    from prodag.config.spec import resolved_n_samples
    from prodag.inputs.interventions import intervention_mask
    from prodag.inputs.knowledge import Knowledge, KnowledgeError
    from prodag.inputs.validation import MIN_FIT_ROWS, check_data
    from prodag.resources import check_memory, fit_bytes

    estimator, kind = _estimator(settings)
    parameters.check(estimator.get_params())
    rules()["intervention_kind"](kind)
    data, columns = check_data(frame, min_rows=MIN_FIT_ROWS)
    try:
        Knowledge.create(columns, estimator.forbidden, estimator.required, estimator.tiers)
    except KnowledgeError as error:
        raise KnowledgeError(with_option(str(error))) from None
    if interventions is not None:
        intervention_mask(interventions, columns, len(data))
    n, p = data.shape
    n_samples = resolved_n_samples(estimator, p)
    needed = fit_bytes(n, p, n_samples, estimator.sem, network_options(estimator).hidden_units)
    check_memory(needed, f"Fitting {p} variables with --n-samples {n_samples}",
                 "lower --n-samples, or fit fewer variables.")
    announce(estimator, p, needed)


def with_option(text: str) -> str:
    """A message about prior knowledge with its option in front: ``tiers tiers.csv: ...``
    becomes ``--tiers tiers.csv: ...`` and ``forbidden edges: ...`` ``--forbid forbidden edges:
    ...`` (the tiers' messages start with the word the option replaces)."""
    for kind, option in KNOWLEDGE_OPTIONS.items():
        if text.startswith(kind):
            return option + text[len(kind):] if kind == "tiers" else f"{option} {text}"
    return text


def announce(estimator, p: int, needed: int) -> None:
    """Print the memory of a fit of more than ``LARGE_P`` variables, and the time of one
    estimated (``prodag.resources.fit_seconds`` and ``refine_seconds``) to take over
    ``ANNOUNCED_SECONDS``, with the options that shorten it."""
    from prodag.config.spec import resolve
    from prodag.fit.draws import REFINED_DRAWS
    from prodag.fit.plan import n_fits
    from prodag.resources import (ANNOUNCED_SECONDS, TYPICAL_EPOCHS, fit_seconds, format_bytes,
                                  format_duration, refine_seconds)

    if p > LARGE_P:
        typer.echo(f"{p} variables: a large fit; it needs about {format_bytes(needed)} of "
                   "memory.")
    spec = resolve(estimator, None, p)
    split = spec.split
    fits = n_fits(spec, split)
    n_samples = spec.optimiser.n_samples
    screened = on_candidates(estimator, p)
    fitting = fit_seconds(p, n_samples, fits, estimator.max_epochs,
                          spec.optimiser.steps_per_epoch, screened)
    refining = refine_seconds(p, REFINED_DRAWS, spec.refine_steps, screened)
    if fitting + refining > ANNOUNCED_SECONDS:
        path = "" if estimator.lam != "auto" else \
            f"--lam with a number (one radius instead of a path of {spec.n_lambdas}), "
        epochs = min(estimator.max_epochs, TYPICAL_EPOCHS)
        refinement, fewer_steps = "", ""
        if refining > ANNOUNCED_SECONDS / 10:
            refinement = (f"; then {spec.refine_steps} refinement steps moving "
                          f"{REFINED_DRAWS} draws, {format_duration(refining)} of it")
            fewer_steps = "fewer --refine-steps (0: none), "
        typer.echo(f"This fit may take {format_duration(fitting + refining)} (a rough "
                   f"estimate: {fits} fits of about {epochs} epochs of "
                   f"{spec.optimiser.steps_per_epoch} steps, each step projecting {n_samples} "
                   f"sampled {p} x {p} matrices onto DAGs"
                   f"{' on candidate parents' if screened else ''}{refinement}; it depends on the "
                   "machine and on when each fit stops early). "
                   f"Shorter: {fewer_steps}{path}fewer --chains, --restarts, --n-samples or "
                   "--max-epochs. The progress bar shows each stage.")


def on_candidates(estimator, p: int) -> bool:
    """Whether a fit of ``estimator`` (not yet fitted) on ``p`` variables runs on candidate
    parents (``prodag.inputs.candidates``)."""
    from prodag.config.parameters import training_options
    from prodag.inputs.candidates import resolved_count

    return estimator.sem == "linear" and resolved_count(
        training_options(estimator).candidate_parents, p) is not None


def planned_drawing(settings: dict, p: int) -> dict:
    """How the results' graphs of a fit of the command's ``settings`` on ``p`` variables will be
    drawn, as ``prodag.resources.check_draws`` takes it: ``screened``, on candidate parents;
    ``block``, ``PROJECT_BATCH`` draws at a time where the fit keeps draws of its own
    (refinement or SMC), else None (a mixture's, all at once)."""
    from prodag.config.spec import resolve
    from prodag.inference.draws import PROJECT_BATCH

    estimator, _ = _estimator(settings)
    spec = resolve(estimator, None, p)
    own = spec.sampler == "smc" or spec.refine_steps > 0
    return {"screened": on_candidates(estimator, p), "block": PROJECT_BATCH if own else None}


def fit_posterior(frame: pd.DataFrame, interventions=None, conditions=None, **settings):
    """A :class:`prodag.ProDAG` built from ``settings`` and fitted on ``frame`` (with the
    known ``interventions`` and the rows' ``conditions``, if any), and the seconds the fit
    took."""
    estimator, kind = _estimator(settings)
    start = time.perf_counter()
    estimator.fit(frame, interventions=interventions, conditions=conditions,
                  intervention_kind=kind)
    return estimator, time.perf_counter() - start


def _estimator(settings: dict):
    """``(ProDAG, intervention_kind)`` of the command's flat ``settings``
    (``prodag.config.parameters.nest``; ``intervention_kind`` goes to ``fit``)."""
    from prodag import ProDAG
    from prodag.config.parameters import nest

    settings = dict(settings)
    kind = settings.pop("intervention_kind", "do")
    return ProDAG(**nest(settings)), kind


def write_results(estimator, variables: list[str], out: Path, *, threshold: float,
                  n_draws: int, truth: np.ndarray | None = None,
                  truth_name: str = "true edges") -> dict:
    """Write ``RESULT_FILES`` into ``out``; return the edge ``probabilities`` ``(p, p)`` and the
    nonzero ``entries`` of the drawn graphs (``prodag.io.samples_file.Entries``).

    ``samples.npz`` holds ``estimator.sample(n_draws)`` (the estimator's own sampling key),
    exactly what ``prodag evaluate`` draws from the saved ``posterior.npz``; it is drawn and
    written a block at a time (``sample_batches``; ``prodag.io.samples_file`` for its two
    layouts), and the probabilities are counted from its entries, the same as
    ``edge_probabilities`` of the whole array.
    """
    from prodag.evaluation import plotting
    from prodag.io.samples_file import write_samples

    if len(variables) > LARGE_P:  # many large projections and pictures: say what runs
        typer.echo(f"Drawing {n_draws} graphs from the posterior and writing the results...")
    entries = write_samples(out / RESULT_FILES["samples"], estimator.sample_batches(n_draws),
                            n_draws, variables)
    probs = entries.edge_probabilities()
    pd.DataFrame(probs, index=variables, columns=variables).to_csv(
        out / RESULT_FILES["edge_probabilities"])
    estimator.save(out / RESULT_FILES["posterior"])
    disagreeing = disagreement_table(estimator, probs, variables)
    disagreeing.to_csv(out / RESULT_FILES["disagreeing_edges"], index=False)
    marked = list(zip(disagreeing["source"], disagreeing["target"]))
    plotting.plot_edge_probabilities(probs, variables, true_graph=truth, truth_name=truth_name,
                                     disagreeing=marked).savefig(
        out / RESULT_FILES["heatmap"], dpi=150)
    plotting.plot_graph(probs, threshold, variables, disagreeing=marked).savefig(
        out / RESULT_FILES["graph"], dpi=150)
    return {"probabilities": probs, "entries": entries}


def disagreement_table(estimator, probs: np.ndarray, variables: list[str]) -> pd.DataFrame:
    """The edges the fit's independent chains disagree on
    (``prodag.posterior.chains.flagged_edges``; none for a bagged fit), one row each, largest
    difference first: source, target, the pooled ``probability`` of ``probs (p, p)``, each chain's
    (``chain_1``, ...) and their ``difference`` (max - min)."""
    from prodag.posterior.chains import flagged_edges

    chains = [f"chain_{c + 1}" for c in range(estimator.n_chains)]
    rows = [{"source": e["source"], "target": e["target"],
             "probability": float(probs[variables.index(e["source"]),
                                        variables.index(e["target"])]),
             **dict(zip(chains, e["probabilities"])),
             "difference": round(max(e["probabilities"]) - min(e["probabilities"]), 6)}
            for e in flagged_edges(estimator.posterior_)]
    return pd.DataFrame(rows, columns=["source", "target", "probability", *chains,
                                       "difference"])


def lam_used(estimator) -> float | None:
    """The fitted radius ``lam_`` for JSON: a float, or ``None`` for ∞ (no ℓ1 step)."""
    lam = float(estimator.lam_)
    return lam if math.isfinite(lam) else None


def stage_seconds(estimator) -> dict:
    """Seconds of each stage of the fit (``fit_seconds_``), rounded for JSON."""
    return {stage: round(value, 2) for stage, value in estimator.fit_seconds_.items()}


def describe_lam(estimator) -> str:
    """One sentence naming the radius the fit used and how it came about."""
    lam = float(estimator.lam_)
    text = "inf (no l1 constraint)" if math.isinf(lam) else f"{lam:.4g}"
    from prodag.config.parameters import training_options

    training = training_options(estimator)
    radii = (len(estimator.lambda_path_["lambdas"]) if estimator.lambda_path_
             else training.n_lambdas)
    criterion = (estimator.lambda_path_["criterion"] if estimator.lambda_path_
                 else training.select_by)
    how = f", chosen by {criterion} among {radii} radii" if estimator.lam == "auto" else ""
    return f"l1 radius lam = {text}{how}."


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(path: Path, content: dict) -> None:
    path.write_text(json.dumps(content, indent=2, default=_json_default) + "\n")


SHOWN_WEIGHTS = 8
"""Mixture weights printed after a fit (the largest; the rest are summed)."""


def describe_mixture(estimator) -> str:
    """One sentence on the posterior's components (``prodag.posterior.mixture``)."""
    weights = estimator.mixture_weights_
    if len(weights) == 1:
        return "The posterior is one variational fit (the other starts scored far worse)." \
            if estimator.n_restarts_ > 1 else "The posterior is one variational fit."
    shown = [f"{w:.2f}" for w in weights[:SHOWN_WEIGHTS]]
    rest = weights[SHOWN_WEIGHTS:]
    if len(rest):
        shown.append(f"and {len(rest)} more of {rest.sum():.2f} in all")
    return (f"The posterior mixes {len(weights)} fits from different starts, weighted by "
            f"their evidence: {', '.join(shown)}.")


def echo_done(seconds: float, estimator, out: Path, files) -> None:
    """The closing lines of a fit: its time, its radius, its components, what orients its
    edges (``prodag.posterior.sortability.describe``) and where its files are."""
    typer.echo(f"\nFit took {seconds:.1f} s (seed {estimator.seed_}); {describe_lam(estimator)}")
    typer.echo(describe_mixture(estimator))
    orientation = describe_orientation((estimator.diagnostics_ or {}).get("sortability"))
    if orientation:
        typer.echo(orientation)
    typer.echo(f"Results in {out}/: {', '.join(files)}")
    typer.echo(f"Causal effects with their uncertainty: prodag effects {out} "
               "[--cause X --effect Y]")

"""Fitting a posterior and writing its files: what ``fit`` and ``demo`` share, and the
results folder every command writes whole or not at all (``results_folder``)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import typer

RESULT_FILES = {"edge_probabilities": "edge_probabilities.csv", "samples": "samples.npz",
                "posterior": "posterior.npz", "heatmap": "heatmap.png", "graph": "graph.png"}
"""The files ``write_results`` writes into a results folder."""


def check_out(out: Path, known: Iterable[str]) -> None:
    """Refuse, before any work, an ``--out`` that ``results_folder`` must not replace: an
    existing file, the working folder or one above it, a folder holding files other than
    ``known`` (the files the command writes; earlier results are replaced whole, anything
    else would be lost with them), or a place that cannot be written."""
    from prodag.validation import DataError

    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} is an existing file; name a folder for the results "
                        "(it is created if missing).")
    resolved = out.resolve()
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise DataError(f"--out {out} is the working folder or one above it; name a new "
                        "folder for the results (it replaces the folder's content).")
    if out.is_dir():
        foreign = sorted(entry.name for entry in out.iterdir() if entry.name not in set(known))
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more"
                                              if len(foreign) > 5 else "")
            raise DataError(f"--out {out} holds files that this command does not write "
                            f"({shown}); the results replace the whole folder, so name a new "
                            "folder, an empty one, or one with earlier results of this command.")
    parent = next(folder for folder in resolved.parents if folder.exists())
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DataError(f"--out {out}: cannot write into {parent} (permission denied); name "
                        "a folder you can write to.")


@contextlib.contextmanager
def results_folder(out: Path, known: Iterable[str]) -> Iterator[Path]:
    """A temporary folder beside ``out`` to write the results into; when the block ends
    without error it replaces ``out`` (two renames that an interrupt waits for), else it is
    removed. So ``out`` holds either the old results or the new ones, never a mix or half a
    file (``prodag.cli.interrupts``)."""
    from prodag.cli import interrupts

    check_out(out, known)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    temporary.chmod(0o777 & ~umask)  # mkdtemp's 0700 would otherwise become out's

    def remove() -> None:
        shutil.rmtree(temporary, ignore_errors=True)

    with interrupts.on_interrupt(remove):
        try:
            yield temporary
        except BaseException:
            remove()
            raise
        old = None
        with interrupts.critical():
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.replace(out, old / out.name)
            os.replace(temporary, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


LARGE_P = 100
"""Beyond this many variables ``check_settings`` announces a long fit and its memory."""
KNOWLEDGE_OPTIONS = {"forbidden": "--forbid", "required": "--require", "tiers": "--tiers"}
"""The option that gives each kind of prior knowledge (as ``prodag.knowledge`` names it)."""


def check_settings(frame: pd.DataFrame, interventions=None, conditions=None, **settings):
    """The checks ``ProDAG.fit`` makes before fitting (settings, data table, prior knowledge,
    intervention targets), made before the command announces a fit or writes anything; an
    error about prior knowledge names its option."""
    from prodag.interventions import intervention_mask
    from prodag.knowledge import Knowledge, KnowledgeError
    from prodag.parameters import network_options, rules
    from prodag.resources import check_memory, fit_bytes, format_bytes
    from prodag.validation import MIN_FIT_ROWS, check_data

    estimator, kind = _estimator(settings)
    estimator._check_params()
    rules()["intervention_kind"](kind)
    data, columns = check_data(frame, min_rows=MIN_FIT_ROWS)
    try:
        Knowledge.create(columns, estimator.forbidden, estimator.required, estimator.tiers)
    except KnowledgeError as error:
        option = next((flag for kind, flag in KNOWLEDGE_OPTIONS.items()
                       if str(error).startswith(kind)), None)
        raise KnowledgeError(f"{option} {error}" if option else str(error)) from None
    if interventions is not None:
        intervention_mask(interventions, columns, len(data))
    n, p = data.shape
    units = network_options(estimator).hidden_units
    check_memory(fit_bytes(n, p, estimator.n_samples, estimator.sem, units),
                 f"Fitting {p} variables with --n-samples {estimator.n_samples}",
                 "lower --n-samples, or fit fewer variables.")
    if p > LARGE_P:
        typer.echo(f"{p} variables: a large fit. It needs about "
                   f"{format_bytes(fit_bytes(n, p, estimator.n_samples, estimator.sem, units))}"
                   " of memory, and each step projects "
                   f"{estimator.n_samples} sampled {p} x {p} matrices onto DAGs, so expect a long "
                   "run (minutes per fit or more on a CPU); the progress bar shows each stage. "
                   "--n-samples and --max-epochs shorten it.")


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
    (``prodag.parameters.nest``; ``intervention_kind`` goes to ``fit``)."""
    from prodag import ProDAG
    from prodag.parameters import nest

    settings = dict(settings)
    kind = settings.pop("intervention_kind", "do")
    return ProDAG(**nest(settings)), kind


def write_results(estimator, variables: list[str], out: Path, *, threshold: float,
                  n_draws: int, truth: np.ndarray | None = None,
                  truth_name: str = "true edges") -> dict:
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
    plotting.plot_edge_probabilities(probs, variables, true_graph=truth,
                                     truth_name=truth_name).savefig(
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
    from prodag.parameters import training_options

    training = training_options(estimator)
    how = (f", chosen by {training.select_by} among {training.n_lambdas} radii"
           if estimator.lam == "auto" else "")
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

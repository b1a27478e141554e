"""The compared methods on one dataset: ProDAG's fitters beside the installed peers, and the
scores of their samples.

A *fitter* (``benchmarks.suite.jobs.Fitter``) is a function of no arguments that returns posterior
graph samples ``(L, p, p)`` and the fit's seconds; ``benchmarks.suite.jobs`` runs them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .jobs import Fitter

PEER_LABELS = {"dagma": "DAGMA", "dibs": "DiBS", "dibs+": "DiBS+"}

_PEER_NOTES: set[str] = set()


def posterior_metrics(truth: np.ndarray, samples: np.ndarray) -> dict[str, float]:
    """The four metrics of posterior graph ``samples (L, p, p)`` against ``truth (p, p)``, the
    expected calibration error of their edge probabilities (``ece``, in [0, 1]) and the share
    of samples that are acyclic (``dags``, in [0, 1])."""
    from prodag import graph, metrics

    scores = {name: float(value) for name, value in metrics.evaluate(truth, samples).items()}
    scores["ece"] = metrics.calibration_error(truth, metrics.edge_probabilities(samples))
    scores["dags"] = float(np.mean(graph.is_dag(samples)))
    return scores


def score_against(truth: np.ndarray, samples: np.ndarray, **labels) -> list[dict]:
    """One row: ``labels`` and the four metrics of ``samples`` against ``truth``."""
    return [{**labels, **posterior_metrics(truth, samples)}]


def score_against_each(graphs: dict[str, np.ndarray], samples: np.ndarray,
                       **labels) -> list[dict]:
    """One row per reference graph ``{name: (p, p) adjacency}``: ``{"graph": name, **labels,
    metrics}``."""
    return [{"graph": name, **labels, **posterior_metrics(truth, samples)}
            for name, truth in graphs.items()]


def select_methods(fitters: dict[str, Fitter], methods: Sequence[str] | None) -> dict:
    """The fitters named in ``methods`` (all when ``None``, any case); unknown names are an
    error."""
    if methods is None:
        return fitters
    by_key = {name.lower(): name for name in fitters}
    unknown = sorted(m for m in methods if m.lower() not in by_key)
    if unknown:
        raise ValueError(f"method(s) {', '.join(unknown)} not available here; "
                         f"available: {', '.join(fitters)}")
    return {by_key[m.lower()]: fitters[by_key[m.lower()]] for m in methods}


def peer_fitters(data, seed: int, sem: str = "linear", quick: bool = False,
                 dagma_library_defaults: bool = False) -> dict[str, Fitter]:
    """``{label: fitter}`` of the installed peers on ``data`` (anything with ``X`` and
    ``X_val`` arrays), from ``benchmarks.suite.peers``, with ``dagma_library_defaults`` also DAGMA
    as its library fits by default (``DAGMA (library defaults)``: no λ chosen on held-out
    rows); a peer whose package is missing is skipped with a note (printed once) saying how
    to install it."""
    from . import peers

    fitters = {}
    for name in peers.PEERS:
        if not peers.is_available(name):
            _note(f"{name} skipped: not installed ({peers.install_command(name)})")
            continue
        fitters[PEER_LABELS.get(name, name)] = _timed(peers.fit_peer, name, data, sem=sem,
                                                      seed=seed, quick=quick)
        if name == "dagma" and dagma_library_defaults:
            fitters["DAGMA (library defaults)"] = _timed(
                peers.fit_peer, name, data, sem=sem, seed=seed, quick=quick,
                **peers.DAGMA_LIBRARY_DEFAULTS)
    return fitters


def _timed(function, *args, **kwargs) -> Fitter:
    def fit():
        start = time.perf_counter()
        samples = np.asarray(function(*args, **kwargs))
        return samples, time.perf_counter() - start
    return fit


def _note(message: str) -> None:
    if message not in _PEER_NOTES:
        _PEER_NOTES.add(message)
        print(f"  note: {message}", flush=True)

"""Fitting the compared methods on one dataset: ProDAG's fitters beside the installed peers.

A *fitter* is a function of no arguments that returns posterior graph samples ``(L, p, p)``
and the fit's seconds; ``fit_methods`` runs them, scores the samples and checkpoints the rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from prodag.metrics import METRICS

from .checkpoint import Checkpoint

PEER_LABELS = {"dagma": "DAGMA", "dibs": "DiBS", "dibs+": "DiBS+"}

Fitter = Callable[[], tuple[np.ndarray, float]]

_PEER_NOTES: set[str] = set()


def posterior_metrics(truth: np.ndarray, samples: np.ndarray) -> dict[str, float]:
    """The four metrics of posterior graph ``samples (L, p, p)`` against ``truth (p, p)``."""
    from prodag import metrics

    return {name: float(value) for name, value in metrics.evaluate(truth, samples).items()}


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


def peer_fitters(data, seed: int, sem: str = "linear", quick: bool = False) -> dict[str, Fitter]:
    """``{label: fitter}`` of the installed peers on ``data`` (anything with ``X`` and
    ``X_val`` arrays), from ``benchmarks.peers``; a peer whose package is missing is skipped
    with a note (printed once) saying how to install it."""
    from . import peers

    fitters = {}
    for name in peers.PEERS:
        if not peers.is_available(name):
            _note(f"{name} skipped: not installed ({peers.install_command(name)})")
            continue
        fitters[PEER_LABELS.get(name, name)] = _timed(peers.fit_peer, name, data, sem=sem,
                                                      seed=seed, quick=quick)
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


def fit_methods(fitters: dict[str, Fitter], keys: dict, score: Callable[[np.ndarray], list[dict]],
                checkpoint: Checkpoint, rows: list[dict]) -> None:
    """Fit each method on one dataset and append its rows to ``rows``.

    ``keys`` name the dataset (e.g. ``{"n": 100, "seed": 3}``); ``score(samples)`` returns one
    dict per row (the metrics, and e.g. the reference graph's name). Each row is
    ``{"method", **keys, "seconds", **scores}``. A method that ``checkpoint`` has done at
    ``keys`` is not fitted again: its rows are reused. After each fit the rows so far are
    checkpointed and a line printed.
    """
    where = " ".join(f"{key}={value}" for key, value in keys.items())
    for method, fit in fitters.items():
        if done := checkpoint.done(method, **keys):
            rows += done
            continue
        samples, seconds = fit()
        new = [{"method": method, **keys, "seconds": round(seconds, 2), **scores}
               for scores in score(samples)]
        rows += new
        checkpoint.save(rows)
        print(f"  {where} {method}: {seconds:.0f} s, "
              + ", ".join(f"{k}={new[0][k]:.1f}" for k in METRICS), flush=True)

"""Sachs et al. (2005) flow cytometry: the paper's Table 2, over 10 random splits.

Data: all n = 7466 cells, p = 11 proteins, natural log of the raw intensities (they span four
orders of magnitude), then standardised by the estimator (``standardize=True``).

A *split* ``s`` (s = 0..9) is the estimator's random validation split with seed ``s``: the rows
are shuffled with ``numpy.random.default_rng(s)``, ⌊0.1·n⌉ = 747 rows are held out to choose λ
(the ℓ1 radius, from a grid of 10 in (0, λ_max]), and the posterior is then refit on all rows
at the chosen λ. Peers get the same 90% training rows and their own λ choice (see peers.py).

Each split's posterior (1000 sampled DAGs) is scored against the 18-edge consensus graph used
in the paper (it has one directed cycle; the metrics are edge-wise) and the 17-edge DAG.

Run: ``prodag bench sachs`` or ``python benchmarks/sachs.py [--seeds 10]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import peer_fitters, posterior_metrics, select_methods  # noqa: E402

PAPER_PRODAG = {"brier": 16.0, "eshd": 18.0, "ef1": 24.0, "auroc": 60.0}
N_DRAWS = 1000


def load():
    """``(X (7466, 11) log intensities as a DataFrame, {graph name: (11, 11) adjacency})``."""
    from prodag import datasets

    sachs = datasets.load_sachs()
    X = np.log(sachs.data[list(sachs.variables)])
    return X, {"18-edge": np.asarray(sachs.graph), "17-edge DAG": np.asarray(sachs.graph_dag)}


def fit_prodag(X, split: int, quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, 11, 11)`` of ProDAG on split ``split`` and the fit seconds."""
    from prodag import ProDAG

    estimator = ProDAG(sem="linear", lam=None, standardize=True, seed=split, progress=False,
                       max_epochs=100 if quick else 1000)
    start = time.perf_counter()
    estimator.fit(X)
    return estimator.sample(N_DRAWS), time.perf_counter() - start


class _Split:
    """The rows of split ``s`` as peers see them: ``X`` (90%) and ``X_val`` (10%)."""

    def __init__(self, X: np.ndarray, split: int):
        n_val = int(np.floor(0.1 * len(X) + 0.5))
        order = np.random.default_rng(split).permutation(len(X))
        self.X_val, self.X = X[order[:n_val]], X[order[n_val:]]


def _split(X: np.ndarray, split: int) -> _Split:
    return _Split(X, split)


def run(seeds: Iterable[int] = range(10), quick: bool = False,
        methods: Sequence[str] | None = None) -> list[dict]:
    """One row per (method, split, graph) with the four metrics and the fit time."""
    X, graphs = load()
    rows = []
    for split in seeds:
        fitters = select_methods({"ProDAG": lambda: fit_prodag(X, split, quick),
                                  **peer_fitters(_split(X.to_numpy(), split), split,
                                                 quick=quick)}, methods)
        for method, fit in fitters.items():
            samples, seconds = fit()
            for graph_name, truth in graphs.items():
                rows.append({"method": method, "split": split, "graph": graph_name,
                             "seconds": round(seconds, 2), "n": len(X),
                             **posterior_metrics(truth, samples)})
            print(f"  split {split} {method}: {seconds:.0f} s, "
                  + ", ".join(f"{k}={v:.2f}" for k, v in rows[-2].items()
                              if k in PAPER_PRODAG), flush=True)
    return rows


if __name__ == "__main__":
    import suite

    suite.main(["sachs", *sys.argv[1:]])

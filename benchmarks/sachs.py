"""Sachs et al. (2005) flow cytometry: the paper's Table 2, over 10 random splits.

Data: all n = 7466 cells, p = 11 proteins, natural log of the raw intensities (they span four
orders of magnitude), then standardised by the estimator (``standardize=True``).

A *split* ``s`` (s = 0..9) shuffles the rows with ``numpy.random.default_rng(s)`` and holds out
⌊0.1·n⌉ = 747 of them as the validation set; every method fits the other 6719 rows.

* **ProDAG** (prodag's defaults): λ, the ℓ1 radius, is chosen from a grid of 10 values in
  (0, λ_max] by the ELBO of the 6719 fitted rows (``select_by="elbo"``); small weights are
  zeroed at |w| ≤ 0.1 as in the paper's implementation (``prune=0.1``).
* **ProDAG (validation)** (the paper's protocol): the same, with λ chosen by the expected
  log-likelihood of the 747 validation rows and a refit at that radius.
* **ProDAG λ=2**: the same with the radius fixed at λ = 2. This value was picked from a
  five-point sweep (λ ∈ {0.5, 1, 2, 3, 5}, one fit on all rows) scored against the consensus
  graph, so it is tuned on the ground truth: read it as "what a sparse radius achieves", not
  as a held-out result.

Both criteria prefer dense graphs here: with thousands of rows the linear model's likelihood
keeps improving as λ grows (e.g. validation log-likelihood −10 867 at λ = 1.7 vs −10 141 at
λ = 8.7 on split 0), and many of the dependencies it fits are absent from, or reversed
against, the consensus graph. Other preprocessing or noise models on split 0 (linear, ELBO,
threshold 0.1) were no better: raw intensities standardised, Brier 29.0 / E-SHD 23.0 /
E-F1 17.2 % / AUROC 53.9 %; normal scores of the ranks, 33.5 / 27.5 / 10.4 / 40.6;
``noise_variance="estimate"`` on the log data (λ 8.6, 21.5 edges per sample),
29.1 / 24.5 / 25.3 / 52.8. Without standardising (2026-11-23, split 0, ELBO, threshold 0.1):
log data λ 11.4, 26 edges per sample, 34.0 / 28.1 / 22.6 / 51.9; raw intensities λ 27.7,
25 edges, 33.0 / 27.0 / 23.3 / 53.0. The paper's path projection (``projection="path"``)
did not finish one λ path on split 0 in 15 minutes on this CPU. Choosing λ on a held-out
experimental condition instead of random rows (fit the other eight, ``select_by=validation``):
holding out cd3cd28 picks λ = 1.8 (5 edges; 19.0 / 17.0 / 17.4 / 52.5), holding out pma
picks the largest radius (21 edges; 26.9 / 22.0 / 30.8 / 59.0), so it is no reliable rule
either.
* Peers (DAGMA, DiBS, when installed and asked for with ``--method``) get the same rows.

Each posterior (1000 sampled DAGs) is scored against the 18-edge consensus graph used in the
paper (it has one directed cycle; the metrics are edge-wise) and the 17-edge DAG.

Run: ``prodag bench sachs`` or ``python benchmarks/sachs.py [--seeds 10]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import (checkpoint, peer_fitters, posterior_metrics, resumed_rows,  # noqa: E402
                   select_methods)

PAPER_PRODAG = {"brier": 16.0, "eshd": 18.0, "ef1": 24.0, "auroc": 60.0}
N_DRAWS = 1000
PRUNE = 0.1
FIXED_LAM = 2.0


def load():
    """``(X (7466, 11) log intensities as a DataFrame, {graph name: (11, 11) adjacency})``."""
    from prodag import datasets

    sachs = datasets.load_sachs()
    X = np.log(sachs.data[list(sachs.variables)])
    return X, {"18-edge": np.asarray(sachs.graph), "17-edge DAG": np.asarray(sachs.graph_dag)}


def fit_prodag(split: "_Split", lam: float | None, select_by: str = "elbo",
               quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, 11, 11)`` of ProDAG on a split, and the fit seconds."""
    from prodag import ProDAG

    estimator = ProDAG(sem="linear", lam=lam, select_by=select_by, standardize=True,
                       prune=PRUNE, seed=split.seed, progress=False,
                       max_epochs=100 if quick else 1000)
    by_validation = lam is None and select_by == "validation"
    start = time.perf_counter()
    estimator.fit(split.X, X_val=split.X_val if by_validation else None)
    return estimator.sample(N_DRAWS), time.perf_counter() - start


class _Split:
    """The rows of split ``s``: ``X`` (90%, fitted) and ``X_val`` (10%, for λ)."""

    def __init__(self, X: np.ndarray, split: int):
        self.seed = split
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
        rows_of_split = _split(X.to_numpy(), split)
        fitters = select_methods(
            {"ProDAG": lambda: fit_prodag(rows_of_split, None, quick=quick),
             "ProDAG (validation)": lambda: fit_prodag(rows_of_split, None, "validation",
                                                       quick),
             f"ProDAG λ={FIXED_LAM:g}": lambda: fit_prodag(rows_of_split, FIXED_LAM,
                                                          quick=quick),
             **peer_fitters(rows_of_split, split, quick=quick)}, methods)
        for method, fit in fitters.items():
            if done := resumed_rows(method, split=split):
                rows += done
                continue
            samples, seconds = fit()
            for graph_name, truth in graphs.items():
                rows.append({"method": method, "split": split, "graph": graph_name,
                             "seconds": round(seconds, 2), "n": len(rows_of_split.X),
                             **posterior_metrics(truth, samples)})
            checkpoint(rows)
            print(f"  split {split} {method}: {seconds:.0f} s, "
                  + ", ".join(f"{k}={v:.2f}" for k, v in rows[-2].items()
                              if k in PAPER_PRODAG), flush=True)
    return rows


if __name__ == "__main__":
    import suite

    suite.main(["sachs", *sys.argv[1:]])

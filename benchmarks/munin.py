"""MUNIN1 semi-synthetic data: the paper's Table 4 (Appendix G.2), n = 100.

The MUNIN subnetwork 1 graph (p = 186 nodes, s = 273 edges, bnlearn repository) gets random
linear weights, uniform on [−0.7, −0.3] ∪ [0.3, 0.7], and N(0, 1) noise, as in the synthetic
experiments (``prodag.simulate.semi_synthetic``); seed ``s`` draws dataset ``s``. ProDAG
chooses λ on its own held-out ⌊0.1·n⌉ = 10 rows, then refits on all 100 rows. Each posterior
(1000 sampled DAGs) is scored against the MUNIN1 graph.

Run: ``prodag bench munin`` or ``python benchmarks/munin.py [--seeds 10]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import peer_fitters, posterior_metrics, select_methods  # noqa: E402

PAPER_PRODAG = {"brier": 146.0, "eshd": 201.0, "ef1": 37.0, "auroc": 87.0}
N = 100
N_DRAWS = 1000


def fit_prodag(X: np.ndarray, seed: int, quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, p, p)`` of ProDAG on ``X`` and the fit seconds."""
    from prodag import ProDAG

    estimator = ProDAG(sem="linear", lam=None, seed=seed, progress=False,
                       max_epochs=50 if quick else 1000)
    start = time.perf_counter()
    estimator.fit(X)
    return estimator.sample(N_DRAWS), time.perf_counter() - start


def run(seeds: Iterable[int] = range(10), quick: bool = False,
        methods: Sequence[str] | None = None) -> list[dict]:
    """One row per (method, dataset seed) with the four metrics and the fit time."""
    from prodag import datasets, simulate

    truth = np.asarray(datasets.load_munin1().graph)
    rows = []
    for seed in seeds:
        data = simulate.semi_synthetic(truth, N, sem="linear", noise="gaussian", seed=seed)
        fitters = select_methods({"ProDAG": lambda: fit_prodag(data.X, seed, quick),
                                  **peer_fitters(data, seed, sem="linear", quick=quick)},
                                 methods)
        for method, fit in fitters.items():
            samples, seconds = fit()
            rows.append({"method": method, "seed": seed, "n": N, "seconds": round(seconds, 2),
                         **posterior_metrics(truth, samples)})
            print(f"  seed {seed} {method}: {seconds:.0f} s, "
                  + ", ".join(f"{k}={rows[-1][k]:.1f}" for k in PAPER_PRODAG), flush=True)
    return rows


if __name__ == "__main__":
    import suite

    suite.main(["munin", *sys.argv[1:]])

"""MUNIN1 semi-synthetic data: the paper's Table 4 (Appendix G.2), n = 100.

The MUNIN subnetwork 1 graph (p = 186 nodes, s = 273 edges, bnlearn repository) gets random
linear weights, uniform on [−0.7, −0.3] ∪ [0.3, 0.7], and N(0, 1) noise, as in the synthetic
experiments (``prodag.simulate.semi_synthetic``); seed ``s`` draws dataset ``s`` with n = 100
training rows and the simulator's separate ⌊0.1·n⌉ = 10 validation rows, on which ProDAG
chooses λ (the paper's protocol). Each posterior (1000 sampled DAGs) is scored against the
MUNIN1 graph.

Budget settings (``SETTINGS``). On a 2-core CPU one optimisation step at p = 186 costs about a
second per 10 Monte Carlo samples, so the paper's settings (L = 100, 10 radii, up to 1000
epochs each) would take hours per dataset. This script uses L = 10 samples per step, 4 radii,
at most 40 epochs per fit (patience 3) and the paper's 0.1 threshold; the numbers are
therefore a lower bound on what the full settings give.

Run: ``prodag bench munin`` or ``python benchmarks/munin.py [--seeds 10]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import checkpoint, peer_fitters, posterior_metrics, select_methods  # noqa: E402

PAPER_PRODAG = {"brier": 146.0, "eshd": 201.0, "ef1": 37.0, "auroc": 87.0}
N = 100
N_DRAWS = 1000


SETTINGS = {"n_samples": 10, "n_lambdas": 4, "max_epochs": 40, "patience": 3,
            "threshold": 0.1}
"""ProDAG settings of this benchmark (budget reductions explained in the module docstring)."""


def fit_prodag(data, seed: int, quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, p, p)`` of ProDAG on ``data.X`` (λ chosen on ``data.X_val``)
    and the fit seconds."""
    from prodag import ProDAG

    settings = {**SETTINGS, **({"max_epochs": 5, "n_lambdas": 2} if quick else {})}
    estimator = ProDAG(sem="linear", lam=None, seed=seed, progress=False, **settings)
    start = time.perf_counter()
    estimator.fit(data.X, X_val=data.X_val)
    return estimator.sample(N_DRAWS), time.perf_counter() - start


def run(seeds: Iterable[int] = range(10), quick: bool = False,
        methods: Sequence[str] | None = None) -> list[dict]:
    """One row per (method, dataset seed) with the four metrics and the fit time."""
    from prodag import datasets, simulate

    truth = np.asarray(datasets.load_munin1().graph)
    rows = []
    for seed in seeds:
        data = simulate.semi_synthetic(truth, N, sem="linear", noise="gaussian", seed=seed)
        fitters = select_methods({"ProDAG": lambda: fit_prodag(data, seed, quick),
                                  **peer_fitters(data, seed, sem="linear", quick=quick)},
                                 methods)
        for method, fit in fitters.items():
            samples, seconds = fit()
            rows.append({"method": method, "seed": seed, "n": N, "seconds": round(seconds, 2),
                         **posterior_metrics(truth, samples)})
            checkpoint(rows)
            print(f"  seed {seed} {method}: {seconds:.0f} s, "
                  + ", ".join(f"{k}={rows[-1][k]:.1f}" for k in PAPER_PRODAG), flush=True)
    return rows


if __name__ == "__main__":
    import suite

    suite.main(["munin", *sys.argv[1:]])

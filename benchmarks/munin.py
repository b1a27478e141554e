"""MUNIN1 semi-synthetic data: the paper's Table 4 (Appendix G.2), n = 100.

The MUNIN subnetwork 1 graph (p = 186 nodes, s = 273 edges, bnlearn repository) gets random
linear weights, uniform on [−0.7, −0.3] ∪ [0.3, 0.7], and N(0, 1) noise, as in the synthetic
experiments (``prodag.simulate.semi_synthetic``); seed ``s`` draws dataset ``s`` with n = 100
rows. ProDAG fits them with λ chosen by the ELBO (prodag's default) and the data-driven start;
each posterior (1000 sampled DAGs) is scored against the MUNIN1 graph.

Budget settings (``SETTINGS``). On a 2-core CPU one optimisation step at p = 186 costs about
0.25 s with 10 Monte Carlo samples (the order search dominates), so the paper's settings
(L = 100, up to 1000 epochs per fit, several starts) would take hours per dataset. This
script uses L = 10 samples per step, one start per radius, at most 40 epochs per fit
(patience 3) and the paper's 0.1 pruning (``prune=0.1``).

Measured on dataset 0 (one start each, fixed λ unless stated; the true Σ|w| is about 137):

* 4 radii by the ELBO (grid bottom λ_max / 4 = 393, which it picked): Brier 460, E-SHD 546,
  E-F1 34.7 %, AUROC 80.5 %, 289 s. The ELBO improves down to the grid's bottom, so the
  benchmark uses 10 radii (bottom λ_max / 10).
* λ = 60 / 100 / 157 / 236: Brier 220 / 212 / 239 / 292, E-SHD 223 / 221 / 271 / 344,
  E-F1 35.8 / 43.4 / 41.8 / 39.4 %, AUROC 64.6 / 68.9 / 73.2 / 75.3 %, about 45 s each.
* At λ = 100: the prior start instead of the data start, Brier 270, E-SHD 413 (early stopping
  ends it after 4 epochs); the data start alone (1 epoch) 221 / 296; lr 0.01 and up to 200
  epochs 211 / 215 / 46.6 % / 73.4 % in 423 s; up to 200 epochs at lr 0.1 stopped after 15
  (212 / 218).
* Before the data start (prior starts, 4 radii by the validation rows): Brier 1018,
  E-SHD 1213 on dataset 0.

These settings on datasets 0-2 (``prodag bench munin --seeds 3``, results/munin.json): Brier
239.6 ± 3.2, E-SHD 267.8 ± 3.5, E-F1 42.2 ± 0.5 %, AUROC 71.5 ± 0.8 %; the paper's row is
146 / 201 / 37 % / 87 %.

Run: ``prodag bench munin`` or ``python benchmarks/munin.py [--seeds 10]``.
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

PAPER_PRODAG = {"brier": 146.0, "eshd": 201.0, "ef1": 37.0, "auroc": 87.0}
N = 100
N_DRAWS = 1000


SETTINGS = {"n_samples": 10, "n_lambdas": 10, "max_epochs": 40, "patience": 3,
            "prune": 0.1, "n_restarts": 1}
"""ProDAG settings of this benchmark (budget reductions explained in the module docstring)."""


def fit_prodag(data, seed: int, quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, p, p)`` of ProDAG on ``data.X`` (λ chosen by the ELBO) and
    the fit seconds."""
    from prodag import ProDAG

    settings = {**SETTINGS, **({"max_epochs": 5, "n_lambdas": 2} if quick else {})}
    estimator = ProDAG(sem="linear", lam=None, seed=seed, progress=False, **settings)
    start = time.perf_counter()
    estimator.fit(data.X)
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
            if done := resumed_rows(method, seed=seed):
                rows += done
                continue
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

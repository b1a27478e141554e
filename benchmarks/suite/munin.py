"""MUNIN1 semi-synthetic data: the paper's Table 4 (Appendix G.2), n = 100.

The MUNIN subnetwork 1 graph (p = 186 nodes, s = 273 edges, bnlearn repository) gets random
linear weights, uniform on [−0.7, −0.3] ∪ [0.3, 0.7], and N(0, 1) noise, as in the synthetic
experiments (``prodag.simulate.semi_synthetic``); seed ``s`` draws dataset ``s`` with n = 100
rows. ProDAG fits them with λ chosen by the ELBO (prodag's default) and the data-driven start;
each posterior (1000 sampled DAGs) is scored against the MUNIN1 graph.

Settings: prodag's defaults, edges counted as the fit counts them (an entry whose effect
exceeds the negligible-edge threshold), without the paper's 0.1 pruning, which on this graph
lowered every metric (dataset 0 on commit 50df65a: Brier / E-SHD / E-F1 / AUROC 208.1 / 206.6 /
42.2 % / 68.4 % without it, 226.7 / 230.9 / 35.7 % / 64.7 % with it). Runs before 2026-11-28 used
``prune=0.1``; runs before 2026-11-24 used a tenth of the paper's budget (L = 10, at most 40
epochs, patience 3, one start), the only one affordable before the numba search kernel; their
results are in ``docs/findings.md``.

Run: ``prodag bench munin`` or ``python -m benchmarks.suite munin [--seeds 10]``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Sequence

import numpy as np

from .checkpoint import Checkpoint
from .jobs import InProcess, RayExecutor, execute, jobs_of
from .methods import peer_fitters, score_against, select_methods

N = 100
N_DRAWS = 1000


def fit_prodag(data, seed: int, quick: bool = False) -> tuple[np.ndarray, float]:
    """Posterior samples ``(1000, p, p)`` of ProDAG on ``data.X`` (λ chosen by the ELBO) and
    the fit seconds."""
    from prodag import ProDAG
    from prodag.config.parameters import nest

    settings = {"max_epochs": 5, "n_lambdas": 2} if quick else {}
    estimator = ProDAG(sem="linear", lam="auto", seed=seed, progress=False, **nest(settings))
    start = time.perf_counter()
    estimator.fit(data.X)
    return estimator.sample(N_DRAWS), time.perf_counter() - start


def run(seeds: Iterable[int] = range(10), quick: bool = False,
        methods: Sequence[str] | None = None, checkpoint: Checkpoint | None = None,
        executor: InProcess | RayExecutor | None = None) -> list[dict]:
    """One row per (method, dataset seed) with the four metrics and the fit time."""
    from prodag import datasets, simulate

    truth = np.asarray(datasets.load_munin1().graph)
    jobs = []
    for seed in seeds:
        data = simulate.semi_synthetic(truth, N, sem="linear", noise="gaussian", seed=seed)
        fitters = select_methods(
            {"ProDAG": functools.partial(fit_prodag, data, seed, quick),
             **peer_fitters(data, seed, sem="linear", quick=quick)}, methods)
        jobs += jobs_of(fitters, {"seed": seed, "n": N}, functools.partial(score_against, truth))
    return execute(jobs, checkpoint, executor)

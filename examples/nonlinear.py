"""Nonlinear data: the additive SEM beside the linear one.

    python examples/nonlinear.py

Simulates the paper's nonlinear benchmark (one ReLU network per variable, 10 variables,
20 edges, 100 rows) and fits the additive SEM, whose edges are a strength times a learned
piecewise-linear shape, and the linear SEM.
"""

import os

from prodag import ProDAG, TrainingOptions, metrics, simulate

# PRODAG_EXAMPLES_QUICK=1 (the tests) fits with tiny settings; unset, a real fit.
QUICK = ({"lam": 2.0, "max_epochs": 10, "n_samples": 8, "n_chains": 1,
          "training": TrainingOptions(n_restarts=1)}
         if os.environ.get("PRODAG_EXAMPLES_QUICK") else {})

data = simulate.dataset(p=10, s=20, n=100, sem="mlp", seed=0)

scores = {}
for sem in ("additive", "linear"):
    estimator = ProDAG(sem=sem, seed=0, progress=False, **QUICK).fit(data.X)
    scores[sem] = metrics.evaluate(data.adjacency, estimator.sample(1000))
    print(f"{sem:>8}: " + ", ".join(f"{m} {v:.1f}" for m, v in scores[sem].items()))

"""Interventional rows: telling the model which variables were set from outside.

    python examples/interventions.py

Simulates 100 observational rows of a 10-variable linear SEM and 10 rows under a perfect
intervention on each of 5 variables, then fits the same rows twice: with the targets in the
likelihood, and read as observational.
"""

import os

from prodag import ProDAG, TrainingOptions, metrics, simulate

# PRODAG_EXAMPLES_QUICK=1 (the tests) fits with tiny settings; unset, a real fit.
QUICK = ({"lam": 2.0, "max_epochs": 10, "n_samples": 8, "n_chains": 1,
          "training": TrainingOptions(n_restarts=1, refine_steps=20)}
         if os.environ.get("PRODAG_EXAMPLES_QUICK") else {})

data = simulate.dataset(p=10, s=15, n=100, interventions=5, seed=0)
print(f"{data.X.shape[0]} rows, {int(data.interventions.any(axis=1).sum())} of them "
      "under an intervention")                     # data.interventions: (rows, p) bool

scores = {}
for name, targets in (("with the targets", data.interventions), ("as observational", None)):
    estimator = ProDAG(seed=0, progress=False, **QUICK).fit(data.X, interventions=targets)
    scores[name] = metrics.evaluate(data.adjacency, estimator.sample(1000))
    print(f"{name:>17}: " + ", ".join(f"{m} {v:.1f}" for m, v in scores[name].items()))

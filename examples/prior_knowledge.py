"""Prior knowledge: required edges, forbidden edges and tiers hold in every posterior sample.

    python examples/prior_knowledge.py
"""

import os

import numpy as np
import pandas as pd

from prodag import ProDAG, TrainingOptions, simulate

# PRODAG_EXAMPLES_QUICK=1 (the tests) fits with tiny settings; unset, a real fit.
QUICK = ({"lam": 2.0, "max_epochs": 10, "n_samples": 8, "n_chains": 1,
          "training": TrainingOptions(n_restarts=1, refine_steps=20)}
         if os.environ.get("PRODAG_EXAMPLES_QUICK") else {})

data = simulate.dataset(p=10, s=15, n=200, seed=1)
frame = pd.DataFrame(data.X, columns=[f"x{j}" for j in range(10)])

estimator = ProDAG(
    required=[("x0", "x2")],                   # every sample has x0 -> x2
    forbidden=[("x5", "x0"), ("x3", "x1")],    # no sample has these
    tiers=[["x0", "x1"], [f"x{j}" for j in range(2, 10)]],  # no edge from tier 2 back
    seed=0, progress=False, **QUICK).fit(frame)

samples = estimator.sample(1000) != 0          # (1000, 10, 10) edge indicators
required = estimator.knowledge_.required_mask()    # (10, 10) bool
forbidden = estimator.knowledge_.forbidden_mask()  # (10, 10) bool, tiers included
broken = int((~samples[:, required]).sum() + samples[:, forbidden].sum())
print(f"required edges: {int(required.sum())}, forbidden pairs: {int(forbidden.sum())}")
print(f"knowledge broken in {broken} places over 1000 samples")
print(pd.DataFrame(np.round(estimator.edge_probabilities(), 2),
                   index=frame.columns, columns=frame.columns))

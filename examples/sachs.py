"""The Sachs demo in Python: protein signalling from flow cytometry, scored against the
consensus graphs (what ``prodag demo`` does).

    python examples/sachs.py

7466 cells x 11 proteins under 9 experimental conditions. As in the paper: log intensities,
standardised, weights |w| <= 0.1 zeroed. As in the experiment: each condition has its own
intercepts, and a reagent acts on its target's activity, not on the measured value.
"""

import os

import numpy as np

from prodag import ProDAG, TrainingOptions, datasets, metrics

# PRODAG_EXAMPLES_QUICK=1 (the tests) fits with tiny settings; unset, a real fit.
QUICK = ({"lam": 2.0, "max_epochs": 10, "n_samples": 8, "n_chains": 1,
          "training": TrainingOptions(n_restarts=1, refine_steps=20)}
         if os.environ.get("PRODAG_EXAMPLES_QUICK") else {})

sachs = datasets.load_sachs()
cells = np.log(sachs.data[sachs.variables])        # (7466, 11); raw values span 10^4

# The demo's fit: 18 chains, each on its own bootstrap resample of the cells (BayesBag), and
# 2000 Metropolis steps that move the draws towards each resample's own posterior.
DEMO = {"bootstrap": True, "n_chains": 18, "training": TrainingOptions(refine_steps=2000)}
estimator = ProDAG(standardize=True, prune=0.1, seed=0, progress=False, **{**DEMO, **QUICK})
estimator.fit(cells, interventions=sachs.interventions, conditions=sachs.conditions,
              intervention_kind="activity")

samples = estimator.sample(1000)                   # (1000, 11, 11) posterior DAGs
scores = {"18-edge consensus graph": metrics.evaluate(sachs.graph, samples),
          "17-edge consensus DAG": metrics.evaluate(sachs.graph_dag, samples)}
for graph, row in scores.items():
    print(f"against the {graph}: "
          + ", ".join(f"{name} {value:.1f}" for name, value in row.items()))

probabilities = estimator.edge_probabilities()
print("Most probable edges (* = in the 18-edge consensus graph):")
for flat in np.argsort(probabilities, axis=None)[::-1][:10]:
    j, k = np.unravel_index(flat, probabilities.shape)
    mark = "*" if sachs.graph[j, k] else " "
    print(f"  {mark} {sachs.variables[j]} -> {sachs.variables[k]}: {probabilities[j, k]:.2f}")

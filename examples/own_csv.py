"""Fit a posterior over DAGs to your own CSV file and write the edge probabilities.

    python examples/own_csv.py data.csv      # one row per observation, a header row of names

Without a file it simulates one (10 variables, 100 rows) so the script runs as it is. The
command line does the same in one line: ``prodag fit data.csv --out results/ --seed 0``.
"""

import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from prodag import ProDAG, TrainingOptions, simulate

# PRODAG_EXAMPLES_QUICK=1 (the tests) fits with tiny settings; unset, a real fit.
QUICK = ({"lam": 2.0, "max_epochs": 10, "n_samples": 8, "n_chains": 1,
          "training": TrainingOptions(n_restarts=1, refine_steps=20)}
         if os.environ.get("PRODAG_EXAMPLES_QUICK") else {})


def example_csv(folder: Path) -> Path:
    """A simulated table written as a user's CSV would be: named columns, no index."""
    data = simulate.dataset(p=10, s=15, n=100, seed=0)
    path = folder / "data.csv"
    pd.DataFrame(data.X, columns=[f"x{j}" for j in range(10)]).to_csv(path, index=False)
    return path


folder = Path(tempfile.mkdtemp(prefix="prodag-example-"))
path = Path(sys.argv[1]) if len(sys.argv) > 1 else example_csv(folder)
frame = pd.read_csv(path)                        # (n, p): the columns are the variables

estimator = ProDAG(seed=0, progress=False, **QUICK).fit(frame)
probabilities = pd.DataFrame(estimator.edge_probabilities(),  # (p, p): row = parent
                             index=frame.columns, columns=frame.columns)
probabilities.to_csv(folder / "edge_probabilities.csv")

edges = probabilities.stack().sort_values(ascending=False)
print(f"l1 radius used: {estimator.lam_:.3g}")
print("Most probable edges (parent -> child: probability):")
for (parent, child), probability in edges.head(10).items():
    print(f"  {parent} -> {child}: {probability:.2f}")
print(f"Edge probabilities written to {folder / 'edge_probabilities.csv'}")

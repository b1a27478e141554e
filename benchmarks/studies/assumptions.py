"""How far data from the model stay from the assumption checks' thresholds.

For the simulator's data (linear and MLP SEMs, ER graphs with p and 2p edges, p 5-50,
n 50-2000, Gaussian and exponential noise, seeds 0 … seeds-1) and for the Sachs cells (raw
and log-transformed; without grouping, within the 9 conditions, within the 7 sets of
intervention targets), prints the statistic of every check of ``prodag.inputs.assumptions`` beside
its threshold: the median |lag-1 autocorrelation| (as a multiple of 1/√n for the simulator),
the largest |correlation| between two columns, the fewest distinct values of a column, the
largest share of a column's sum of squares in one value, the number of sorted columns; and
which warnings fire. Writes ``benchmarks/results/assumptions.json``.

Run: ``python -m benchmarks.studies.assumptions [--seeds 5]``.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pandas as pd

from prodag import datasets, simulate
from prodag.inputs import assumptions
from prodag.inputs.interventions import intervention_mask

from .. import RESULTS_DIR


def statistics(data: np.ndarray, names: list[str], groups=None, mask=None) -> dict:
    """Every check's statistic on ``data (n, p)`` and the kinds of warning that fire."""
    n = len(data)
    if groups is None and mask is not None:
        groups = np.unique(mask, axis=0, return_inverse=True)[1].reshape(-1)
    lag1 = float(np.median(np.abs(assumptions.lag1_autocorrelation(data, groups))))
    correlation = np.abs(np.corrcoef(data, rowvar=False) - np.eye(data.shape[1]))
    squares = (data - data.mean(axis=0)) ** 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assumptions.warn_assumptions(data, names, groups)
    fired = sorted(str(w.message).rsplit("#", 1)[1].rstrip(".") for w in caught
                   if issubclass(w.category, assumptions.AssumptionWarning))
    return {"n": n, "lag1": lag1, "lag1_sqrt_n": lag1 * np.sqrt(n),
            "max_correlation": float(correlation.max()),
            "fewest_values": int(min(len(np.unique(c)) for c in data.T)),
            "spike_share": float((squares.max(axis=0) / squares.sum(axis=0)).max()),
            "calendar": len(assumptions.calendar_columns(data, names)), "fired": fired}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    seeds = parser.parse_args().seeds
    simulated = []
    for sem in ("linear", "mlp"):
        for p in (5, 10, 20, 50):
            for n in (50, 200, 2000):
                for edges in (p, 2 * p):
                    for noise in ("gaussian", "exponential"):
                        for seed in range(seeds):
                            data = simulate.dataset(p, edges, n, sem=sem, noise=noise,
                                                    seed=seed)
                            row = statistics(data.X, [f"x{j}" for j in range(p)])
                            simulated.append({"sem": sem, "p": p, "n": n, "edges": edges,
                                              "noise": noise, "seed": seed, **row})
    table = pd.DataFrame(simulated)
    print(f"simulator: {len(table)} tables; worst median |lag-1| x sqrt(n) "
          f"{table.lag1_sqrt_n.max():.2f} (threshold {assumptions.LAG1_SDS:g}), worst |corr| "
          f"{table.max_correlation.max():.4f} (threshold {assumptions.NEAR_DUPLICATE:g}), "
          f"fewest values {table.fewest_values.min()}, worst spike share "
          f"{table.spike_share.max():.2f} (threshold {assumptions.SPIKE_SHARE:g}), sorted or "
          f"calendar columns {table.calendar.sum()}, "
          f"tables warned {int(table.fired.map(bool).sum())}")
    sachs = datasets.load_sachs()
    names = list(sachs.variables)
    raw = sachs.data[names].to_numpy(float)
    codes = pd.factorize(pd.Series(sachs.conditions).astype(str))[0]
    mask = intervention_mask(sachs.interventions, names, len(raw))
    rows = []
    for scale, data in (("raw", raw), ("log", np.log(raw))):
        for grouping, groups, targets in (("none", None, None), ("conditions", codes, None),
                                          ("targets", None, mask)):
            row = statistics(data, names, groups, targets)
            rows.append({"data": scale, "grouping": grouping, **row})
            print(f"Sachs {scale:3s} within {grouping:10s}: median |lag-1| {row['lag1']:.3f}, "
                  f"|corr| {row['max_correlation']:.4f}, spike share {row['spike_share']:.2f}, "
                  f"warned: {', '.join(row['fired']) or 'none'}")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "assumptions.json").write_text(json.dumps(
        {"simulated": simulated, "sachs": rows}, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()

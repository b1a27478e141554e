"""Outliers: one gross value in otherwise clean data, Gaussian against Student-t noise.

For each dataset (linear ER, p = 20, s = 40, ``--n`` rows, unit Gaussian noise; datasets
0 … seeds-1) one cell, drawn with ``numpy.random.default_rng(20_000 + seed)``, is set to
``--value`` (default 10⁶). In ``--place sink`` mode the cell lies in a variable without
children in the true graph, in ``--place source`` mode in one with children: under any SEM
an outlier in a cause predicts outliers in its children, so the two differ in kind.

Each likelihood (``gaussian``, ``student``) is fitted with prodag's defaults otherwise (seed
= the dataset's seed) to the clean rows and to the rows with the outlier. Reported per
likelihood: the four metrics of the fit with the outlier, and how far the outlier moved the
posterior (max and mean |ΔP| over all pairs, against the clean fit). Prints mean ± standard
error and writes ``benchmarks/results/outliers_<place>.json`` (after every dataset).

Run: ``python -m benchmarks.studies.outliers [--seeds 10] [--place sink|source]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR

N_DRAWS = 1000
LIKELIHOODS = ("gaussian", "student")


def with_outlier(X: np.ndarray, adjacency: np.ndarray, seed: int, place: str,
                 value: float) -> tuple[np.ndarray, int, int]:
    """``X (n, p)`` with one cell set to ``value``: a random row of a random variable that has
    (``place="source"``) or has not (``"sink"``) children. Returns the rows, row, column."""
    rng = np.random.default_rng(20_000 + seed)
    has_children = adjacency.any(axis=1)
    columns = np.flatnonzero(has_children if place == "source" else ~has_children)
    row, column = int(rng.integers(len(X))), int(rng.choice(columns))
    dirty = X.copy()
    dirty[row, column] = value
    return dirty, row, column


def fit_and_score(rows: np.ndarray, truth: np.ndarray, seed: int, likelihood: str) -> dict:
    """Edge probabilities ``(p, p)`` and the four metrics of a default fit."""
    import warnings

    from prodag import ProDAG, metrics

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the outlier warning is expected here
        estimator = ProDAG(likelihood=likelihood, seed=seed, progress=False).fit(rows)
    seconds = time.perf_counter() - start
    samples = estimator.sample(N_DRAWS)
    return {"probabilities": metrics.edge_probabilities(samples),
            **{k: float(v) for k, v in metrics.evaluate(truth, samples).items()},
            "seconds": seconds, "epochs_of_best_fit": len(estimator.history_)}


def run_dataset(seed: int, n: int, place: str, value: float) -> list[dict]:
    from prodag import simulate

    data = simulate.dataset(20, 40, n, seed=seed)
    dirty, row, column = with_outlier(data.X, data.adjacency, seed, place, value)
    rows = []
    for likelihood in LIKELIHOODS:
        clean = fit_and_score(data.X, data.adjacency, seed, likelihood)
        moved = fit_and_score(dirty, data.adjacency, seed, likelihood)
        change = np.abs(clean.pop("probabilities") - moved.pop("probabilities"))
        rows.append({"seed": seed, "likelihood": likelihood, "row": row, "column": column,
                     **moved, "clean": {k: clean[k] for k in METRICS},
                     "max_dp": float(change.max()), "mean_dp": float(change.mean())})
        print(f"seed={seed} {likelihood:8s} column {column}: max|dP| {change.max():.3f} "
              f"mean|dP| {change.mean():.4f} brier {moved['brier']:.1f} (clean "
              f"{clean['brier']:.1f}) eshd {moved['eshd']:.1f} {moved['seconds']:.1f}s "
              f"({moved['epochs_of_best_fit']} epochs, clean {clean['epochs_of_best_fit']})",
              flush=True)
    return rows


def summary(rows: list[dict]) -> dict:
    """Mean and standard error of every reported number, per likelihood."""
    out = {}
    for likelihood in LIKELIHOODS:
        mine = [r for r in rows if r["likelihood"] == likelihood]
        out[likelihood] = {}
        for key in (*METRICS, "max_dp", "mean_dp", "seconds"):
            values = np.array([r[key] for r in mine])
            out[likelihood][key] = {"mean": float(values.mean()),
                                    "se": float(values.std(ddof=1) / np.sqrt(len(values)))
                                    if len(values) > 1 else 0.0}
        clean = np.array([r["clean"]["brier"] for r in mine])
        out[likelihood]["clean_brier"] = float(clean.mean())
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--place", choices=("sink", "source"), default="sink")
    parser.add_argument("--value", type=float, default=1e6)
    args = parser.parse_args(argv)
    out = RESULTS_DIR / f"outliers_{args.place}.json"
    rows = []
    for seed in range(args.seeds):  # the file is rewritten after every dataset
        rows += run_dataset(seed, args.n, args.place, args.value)
        table = summary(rows)
        out.write_text(json.dumps({"settings": vars(args), "summary": table, "rows": rows},
                                  indent=1))
    print(f"\n{'likelihood':10s} {'max|dP|':>14s} {'mean|dP|':>16s} "
          + " ".join(f"{m:>13s}" for m in METRICS) + "  clean Brier")
    for likelihood, values in table.items():
        print(f"{likelihood:10s} "
              + " ".join(f"{values[k]['mean']:7.3f} ± {values[k]['se']:5.3f}"
                         for k in ("max_dp", "mean_dp"))
              + " " + " ".join(f"{values[m]['mean']:6.1f} ± {values[m]['se']:4.1f}"
                               for m in METRICS)
              + f"  {values['clean_brier']:.1f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Edges that are not there: should ``P(edge)`` count weights too small to tell from zero?

Each fit (``ProDAG(lam=..., n_chains=1, seed=dataset seed)``, linear SEM, n = 100) draws 1000
graphs once with no rule (``prodag.posterior.negligible.EFFECT_SIZE = 0``); each threshold τ then
drops the entries whose effect size ``|w_jk| · sd(x_j) / σ_k`` (``prodag.posterior.negligible``) is
at most τ, and the posterior is scored with and without the rule:

* independent columns (true graph empty), p = 10: Gaussian with sd 2, 0/1 (fair coin), and
  integer (Poisson, mean 3); Brier = Σ P², E-SHD = expected edge count, AUROC undefined;
* sparse simulated data (``prodag.simulate.dataset``, ER, s = p), p = 10 and 20;

at a fixed radius (``lam=2``) and with λ chosen (``lam="auto"``). Prints one row per setting
and threshold (mean over seeds) and writes ``benchmarks/results/zero_edges_n<n>.json``.

Run: ``python -m benchmarks.studies.zero_edges --seeds 2`` (n = 100, 20 fits, about 4 min on
2 cores); ``--n 1000 --lam auto`` checks the chosen threshold on more rows.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from .. import RESULTS_DIR

THRESHOLDS = (0.0, 0.05, 0.1, 0.2, 0.3)
N_DRAWS = 1000
SCORES = ("brier", "eshd", "ef1", "auroc", "edges_at_half", "expected_edges")


def independent(kind: str, p: int, n: int, seed: int) -> np.ndarray:
    """``(n, p)`` independent columns of one ``kind``: gaussian (sd 2), binary, integer."""
    rng = np.random.default_rng([seed, 41])
    if kind == "gaussian":
        return 2.0 * rng.standard_normal((n, p))
    if kind == "binary":
        return rng.integers(0, 2, (n, p)).astype(float)
    return rng.poisson(3.0, (n, p)).astype(float)


def datasets(seeds: int, n: int):
    """``(setting, seed, X, truth)`` of every dataset of the study."""
    from prodag import simulate

    for seed in range(seeds):
        for kind in ("gaussian", "binary", "integer"):
            yield f"independent {kind}, p=10", seed, independent(kind, 10, n, seed), \
                np.zeros((10, 10))
        for p in (10, 20):
            data = simulate.dataset(p, p, n, seed=seed)
            yield f"sparse ER, p={p}, s={p}", seed, data.X, (data.adjacency != 0)


def scores(truth: np.ndarray, samples: np.ndarray) -> dict:
    """The four metrics (AUROC None for an empty truth) and the edge counts of ``samples``."""
    from prodag import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = metrics.evaluate(truth, samples)
    probabilities = metrics.edge_probabilities(samples)
    result["auroc"] = None if not np.any(truth) else float(result["auroc"])
    result["edges_at_half"] = int(np.sum(probabilities >= 0.5))
    result["expected_edges"] = float(probabilities.sum())
    return {name: (None if value is None else float(value)) for name, value in result.items()}


def run_one(X: np.ndarray, truth: np.ndarray, lam, seed: int) -> dict:
    """Fit once, score the raw draws under every threshold of ``THRESHOLDS``."""
    from prodag import ProDAG
    from prodag.posterior import negligible

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ProDAG(lam=lam, n_chains=1, seed=seed, progress=False).fit(X)
    saved, negligible.EFFECT_SIZE = negligible.EFFECT_SIZE, 0.0
    try:
        raw = est.sample(N_DRAWS)  # data units, every nonzero entry kept
    finally:
        negligible.EFFECT_SIZE = saved
    noise = est.noise_variance_ * est.scale_ ** 2  # data units, like the draws
    rows = {}
    for tau in THRESHOLDS:
        dropped = negligible.negligible(raw, noise, tau) if tau > 0 else np.zeros(raw.shape, bool)
        rows[f"{tau:g}"] = scores(truth, np.where(dropped, 0.0, raw))
    return {"lam_used": float(est.lam_), "seconds": time.perf_counter() - start,
            "thresholds": rows}


def summarise(records: list) -> list:
    """Mean of every score per (setting, lam, threshold) over seeds."""
    table = []
    keys = sorted({(r["setting"], str(r["lam"])) for r in records}, key=str)
    for setting, lam in keys:
        group = [r for r in records if r["setting"] == setting and str(r["lam"]) == lam]
        for tau in THRESHOLDS:
            row = {"setting": setting, "lam": lam, "threshold": tau, "n": len(group)}
            for name in SCORES:
                values = [r["thresholds"][f"{tau:g}"][name] for r in group]
                row[name] = (None if any(v is None for v in values)
                             else float(np.mean(values)))
            table.append(row)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--n", type=int, default=100, help="rows of every dataset")
    parser.add_argument("--lam", action="append", choices=["2", "auto"],
                        help="radii to fit at (repeat; default both)")
    args = parser.parse_args()
    lams = [2.0 if lam == "2" else lam for lam in (args.lam or ["2", "auto"])]
    records = []
    for setting, seed, X, truth in datasets(args.seeds, args.n):
        for lam in lams:
            result = run_one(X, truth, lam, seed)
            records.append({"setting": setting, "seed": seed, "lam": lam, **result})
            print(f"{setting:<28} seed {seed} lam {lam!s:<5} {result['seconds']:6.1f} s",
                  flush=True)
    table = summarise(records)
    print(f"\n{'setting':<28} {'lam':>5} {'tau':>5} {'Brier':>7} {'E-SHD':>7} {'E-F1':>6} "
          f"{'AUROC':>6} {'P>=.5':>6} {'E[edges]':>8}")
    for row in table:
        auroc = "-" if row["auroc"] is None else f"{row['auroc']:.1f}"
        print(f"{row['setting']:<28} {row['lam']:>5} {row['threshold']:>5g} "
              f"{row['brier']:>7.2f} {row['eshd']:>7.2f} {row['ef1']:>6.1f} {auroc:>6} "
              f"{row['edges_at_half']:>6.1f} {row['expected_edges']:>8.2f}")
    out = RESULTS_DIR / f"zero_edges_n{args.n}.json"
    out.write_text(json.dumps({"thresholds": list(THRESHOLDS), "n": args.n,
                               "records": records, "table": table}, indent=1) + "\n")
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()

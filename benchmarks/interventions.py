"""Interventional data: the interventional likelihood against the observational one on the
same rows.

Linear ER, p = 20, s = 40: ``--n`` observational rows plus ``--rows-per-target`` rows under a
perfect intervention on each of ``--targets`` random single variables
(``prodag.simulate.dataset(..., interventions=...)``), datasets 0 … seeds-1. ProDAG
(defaults, seed = dataset seed) is fitted on all rows twice: ``interventional`` with the
known targets (``fit(X, interventions=mask)``), ``observational`` treating every row as
observational. Each posterior (1000 samples) is scored with the four metrics and the
expected calibration error. Prints mean ± standard error per variant and writes
``benchmarks/results/interventions.json``.

Run: ``python -m benchmarks.interventions [--seeds 10]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.metrics import METRICS

from . import RESULTS_DIR

N_DRAWS = 1000


def run_one(args, seed: int) -> list[dict]:
    from prodag import ProDAG, metrics, simulate

    data = simulate.dataset(args.p, args.s, args.n, seed=seed, interventions=args.targets,
                            rows_per_target=args.rows_per_target)
    rows = []
    for variant, mask in (("interventional", data.interventions), ("observational", None)):
        start = time.perf_counter()
        estimator = ProDAG(seed=seed, progress=False).fit(data.X, interventions=mask)
        seconds = time.perf_counter() - start
        samples = estimator.sample(N_DRAWS)
        scores = metrics.evaluate(data.adjacency, samples)
        rows.append({"variant": variant, "seed": seed, "seconds": seconds,
                     "lam": estimator.lam_, **{k: float(v) for k, v in scores.items()},
                     "ece": metrics.calibration_error(data.adjacency,
                                                      metrics.edge_probabilities(samples))})
        print(f"seed {seed} {variant:<14} " + " ".join(
            f"{k}={rows[-1][k]:.2f}" for k in (*METRICS, "ece")) + f" {seconds:.1f}s",
            flush=True)
    return rows


def summarize(rows: list[dict]) -> dict:
    table = {}
    for variant in dict.fromkeys(row["variant"] for row in rows):
        group = [row for row in rows if row["variant"] == variant]
        table[variant] = {}
        for key in (*METRICS, "ece", "seconds"):
            values = np.array([row[key] for row in group])
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
            table[variant][key] = {"mean": float(values.mean()), "se": float(se)}
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, default=100, help="observational rows")
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--rows-per-target", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    rows = [row for seed in range(args.seeds) for row in run_one(args, seed)]
    table = summarize(rows)
    titles = {**METRICS, "ece": "ECE", "seconds": "fit s"}
    print(f"{'variant':<14} " + " ".join(f"{titles[k]:>14}" for k in titles))
    for variant, entry in table.items():
        print(f"{variant:<14} " + " ".join(
            f"{entry[k]['mean']:6.2f} ± {entry[k]['se']:4.2f}" for k in titles))
    out = RESULTS_DIR / "interventions.json"
    out.write_text(json.dumps({"settings": vars(args), "summary": table, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

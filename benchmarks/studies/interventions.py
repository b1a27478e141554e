"""Interventional data: the interventional likelihood against the observational one on the
same rows, beside DiBS with the same targets.

ER, p = 20, s = 40 (``--p``, ``--s``), linear or MLP (``--sem``; the data and the fitted
SEM): ``--n`` observational rows plus ``--rows-per-target`` rows under a perfect intervention
on each of ``--targets`` random single variables
(``prodag.simulate.dataset(..., interventions=...)``), datasets 0 … seeds-1. ProDAG
(defaults for the SEM, seed = dataset seed) is fitted on all rows twice: ``interventional``
with the known targets (``fit(X, interventions=mask)``), ``observational`` treating every
row as observational. With ``--peers``, DiBS and DiBS+ (``benchmarks.suite.peers``) get the same
rows and targets (DiBS's ``interv_mask``). Each posterior (1000 samples; DiBS: its particles)
is scored with the four metrics and the expected calibration error. Prints mean ± standard
error per variant and writes ``benchmarks/results/interventions[_<tag>].json``.

Run: ``python -m benchmarks.studies.interventions [--seeds 10]``; the MLP row: ``python -m
benchmarks.studies.interventions --sem mlp --p 10 --s 20 --tag mlp_p10``; DiBS alone (8-15 min per
dataset on a 2-core CPU): ``--peers --skip-prodag --tag dibs``; ``--resume`` runs only the
datasets missing from the results file.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR

N_DRAWS = 1000


def run_one(args, seed: int) -> list[dict]:
    from prodag import ProDAG, simulate

    data = simulate.dataset(args.p, args.s, args.n, sem=args.sem, seed=seed,
                            interventions=args.targets, rows_per_target=args.rows_per_target)
    rows = []
    for variant, mask in (("interventional", data.interventions), ("observational", None)):
        if args.skip_prodag:
            break
        start = time.perf_counter()
        estimator = ProDAG(sem=args.sem, seed=seed, progress=False).fit(data.X, interventions=mask)
        seconds = time.perf_counter() - start
        rows.append(scored(variant, seed, seconds, estimator.sample(N_DRAWS), data.adjacency,
                           lam=estimator.lam_))
    if args.peers:
        from ..suite.peers import dibs_particles, systematic_resample

        start = time.perf_counter()
        graphs, weights = dibs_particles(data.X, seed, sem=args.sem,
                                         interventions=data.interventions)
        seconds = time.perf_counter() - start
        rows.append(scored("DiBS (interventional)", seed, seconds, graphs, data.adjacency))
        rows.append(scored("DiBS+ (interventional)", seed, seconds,
                           systematic_resample(graphs, weights, N_DRAWS, seed=seed),
                           data.adjacency))
    return rows


def scored(variant: str, seed: int, seconds: float, samples: np.ndarray, truth: np.ndarray,
           **extra) -> dict:
    """One result row: the four metrics and the calibration error of ``samples (L, p, p)``
    against ``truth (p, p)``, printed as it comes."""
    from prodag import metrics

    scores = metrics.evaluate(truth, samples)
    row = {"variant": variant, "seed": seed, "seconds": seconds, **extra,
           **{k: float(v) for k, v in scores.items()},
           "ece": metrics.calibration_error(truth, metrics.edge_probabilities(samples))}
    print(f"seed {seed} {variant:<22} " + " ".join(
        f"{k}={row[k]:.2f}" for k in (*METRICS, "ece")) + f" {seconds:.1f}s", flush=True)
    return row


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
    parser.add_argument("--sem", default="linear", choices=("linear", "mlp"))
    parser.add_argument("--tag", default=None, help="results file suffix")
    parser.add_argument("--peers", action="store_true",
                        help="also DiBS and DiBS+ with the same targets (dibs-lib; one SVGD "
                             "run per dataset serves both)")
    parser.add_argument("--skip-prodag", action="store_true",
                        help="only the peers' rows (with --peers)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the datasets already in the results file, run the others")
    args = parser.parse_args(argv)
    out = RESULTS_DIR / f"interventions{'_' + args.tag if args.tag else ''}.json"
    rows = json.loads(out.read_text())["rows"] if args.resume and out.exists() else []
    done = {row["seed"] for row in rows}
    for seed in range(args.seeds):  # the file is rewritten after every dataset
        if seed in done:
            continue
        rows += run_one(args, seed)
        table = summarize(rows)
        out.write_text(json.dumps({"settings": vars(args), "summary": table, "rows": rows},
                                  indent=1) + "\n")
    titles = {**METRICS, "ece": "ECE", "seconds": "fit s"}
    print(f"{'variant':<22} " + " ".join(f"{titles[k]:>14}" for k in titles))
    for variant, entry in table.items():
        print(f"{variant:<22} " + " ".join(
            f"{entry[k]['mean']:6.2f} ± {entry[k]['se']:4.2f}" for k in titles))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

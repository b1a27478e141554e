"""Wall-clock seconds of a default linear fit in a warm process, stage by stage: the batched
engine's cost target (p = 20, s = 40, n = 100: ≤ 15 s; p = 100, s = 200: ≤ 200 s, on a quiet
2-core CPU).

One untimed fit first (seed 99 on the first dataset) compiles what the timed fits run; then
every dataset × seed is fitted with the library's defaults (``--option name=value`` changes
one) and timed as a whole and per stage (``ProDAG.fit_seconds_``), and scored against the
true graph (1000 draws).

    PYTHONPATH=src python -m benchmarks.studies.fit_time --p 20 --datasets 0 1 2 --seeds 0 1
    PYTHONPATH=src python -m benchmarks.studies.fit_time --p 100 --datasets 0 --seeds 0

Prints a row per fit and the median, and writes ``benchmarks/results/fit_time_p<p>[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

from prodag import ProDAG, metrics, simulate
from prodag.config.parameters import nest

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options


def timed_fit(X, seed: int, options: dict) -> tuple[float, ProDAG]:
    began = time.perf_counter()
    estimator = ProDAG(seed=seed, progress=False, **nest(options)).fit(X)
    return time.perf_counter() - began, estimator


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--datasets", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--option", action="append", default=[],
                        help="an estimator setting, name=value (repeatable)")
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    options = parse_options(args.option)
    data = {d: simulate.dataset(args.p, 2 * args.p, args.n, seed=d) for d in args.datasets}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm_up, _ = timed_fit(data[args.datasets[0]].X, 99, options)
        print(f"untimed first fit (compiling) {warm_up:.1f} s; load {os.getloadavg()[0]:.2f}",
              flush=True)
        rows = []
        for d in args.datasets:
            for seed in args.seeds:
                seconds, estimator = timed_fit(data[d].X, seed, options)
                scores = metrics.evaluate(data[d].adjacency, estimator.sample(1000, seed=0))
                rows.append({"dataset": d, "seed": seed, "seconds": seconds,
                             "stages_s": estimator.fit_seconds_, "lam": estimator.lam_,
                             **{k: float(v) for k, v in scores.items()}})
                print(f"dataset {d} seed {seed}: {seconds:6.1f} s  Brier {scores['brier']:6.2f}"
                      f"  E-SHD {scores['eshd']:6.2f}  AUROC {scores['auroc']:5.1f}  | "
                      + "; ".join(f"{stage} {value:.1f}"
                                  for stage, value in estimator.fit_seconds_.items()),
                      flush=True)
    median = statistics.median(row["seconds"] for row in rows)
    print(f"median {median:.1f} s over {len(rows)} fits (p = {args.p}, n = {args.n}); "
          f"load after {os.getloadavg()[0]:.2f}")
    name = f"fit_time_p{args.p}" + (f"_n{args.n}" if args.n != 100 else "") + (
        f"_{args.tag}" if args.tag else "")
    out = RESULTS_DIR / f"{name}.json"
    out.write_text(json.dumps({"p": args.p, "n": args.n, "options": options,
                               "warm_up_s": warm_up, "median_s": median, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""What a user's first default fit costs: a fresh process each time, so every program it runs
is compiled, and how much of its time went into compiling (JAX's own compile events, by
program).

A default fit of ``simulate.dataset(p, 2p, n, seed=dataset)`` in ``--runs`` fresh processes,
one after another: the fit's seconds, the seconds JAX spent tracing, lowering and compiling
(``jax.monitoring``'s ``/jax/core/compile/*`` events), the programs it compiled, and those
under 0.05 s each (eager operations on new shapes), with the edge probabilities' sum as a
check that two versions fit the same posterior.

    PYTHONPATH=src python -m benchmarks.studies.first_fit
    PYTHONPATH=src python -m benchmarks.studies.first_fit --p 5 --runs 3 --tag host_copies

Prints a row per run and writes ``benchmarks/results/first_fit_p{p}[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import statistics

from .. import RESULTS_DIR
from .scale import in_fresh_process

SMALL_PROGRAM_SECONDS = 0.05
"""A program whose tracing, lowering and compiling took less than this is counted as an
eager operation."""


def one_fit(p: int, n: int, dataset: int) -> dict:
    """A default fit (seed 0) in this process, with JAX's compile events summed by program."""
    import collections
    import time

    import jax.monitoring
    import numpy as np

    from prodag import ProDAG, simulate

    seconds, compiled = collections.Counter(), collections.Counter()

    def listener(event, duration, **info):
        if event.startswith("/jax/core/compile/"):
            seconds[info.get("fun_name")] += duration
            compiled[info.get("fun_name")] += event.endswith("backend_compile_duration")

    jax.monitoring.register_event_duration_secs_listener(listener)
    data = simulate.dataset(p, 2 * p, n, seed=dataset)
    began = time.perf_counter()
    estimator = ProDAG(seed=0, progress=False).fit(data.X)
    elapsed = time.perf_counter() - began
    small = [name for name in seconds
             if compiled[name] and seconds[name] / compiled[name] < SMALL_PROGRAM_SECONDS]
    return {"seconds": elapsed, "compile_seconds": sum(seconds.values()),
            "programs": sum(compiled.values()),
            "eager_programs": sum(compiled[name] for name in small),
            "eager_seconds": sum(seconds[name] for name in small),
            "edge_probability_sum": float(np.asarray(estimator.edge_probabilities()).sum())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=5)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--dataset", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    rows = []
    for run in range(args.runs):
        row = {"run": run, **in_fresh_process(one_fit, args.p, args.n, args.dataset)}
        rows.append(row)
        print(f"p {args.p} n {args.n} run {run}: fit {row['seconds']:6.1f} s, compiling "
              f"{row['compile_seconds']:5.1f} s over {row['programs']} programs "
              f"({row['eager_programs']} eager, {row['eager_seconds']:.1f} s); "
              f"edge probabilities sum {row['edge_probability_sum']:.6f}")
    mean = {key: statistics.mean(row[key] for row in rows)
            for key in ("seconds", "compile_seconds", "programs", "eager_programs",
                        "eager_seconds")}
    print("mean: " + ", ".join(f"{key} {value:.2f}" for key, value in mean.items()))
    out = RESULTS_DIR / f"first_fit_p{args.p}{'_' + args.tag if args.tag else ''}.json"
    out.write_text(json.dumps({"p": args.p, "n": args.n, "dataset": args.dataset,
                               "mean": mean, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""What a linear fit costs, to calibrate the time estimate ``prodag fit`` prints before long
fits (``prodag.resources.fit_seconds``): seconds per training step by number of variables p
and posterior samples per step L (simulated linear-Gaussian data, ER graph with 2p edges,
n rows, compiled once before timing), the cost of scoring a finished fit in steps, and the
epochs a fit at a fixed radius runs before it stops early (from the data start, default
settings otherwise).

    PYTHONPATH=src python -m benchmarks.studies.fit_cost --p 25 50 100 200 --samples 100

Prints a table, the fitted constants ``t_step = a · L · p^b`` (least squares on logs) and
writes ``benchmarks/results/fit_cost.json`` (``fit_cost_p50-100-200-300.json`` for other
``--p``).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import jax
import numpy as np

from prodag import ProDAG
from prodag.config.spec import resolve
from prodag.evaluation.simulate import dataset
from prodag.fit import prepare
from prodag.inference import compiled, fitting

from .. import RESULTS_DIR

DEFAULT_P = [25, 50, 100, 200]


def prepared_fit(p: int, n: int, n_samples: int, max_epochs: int, lam: float, seed: int = 0):
    """The engine, the first data start and the data of a linear fit on simulated data."""
    X = dataset(p, 2 * p, n, seed=seed).X
    settings = ProDAG(n_samples=n_samples, max_epochs=max_epochs, lam=lam, progress=False,
                      seed=seed)  # the parameters, read as ``ProDAG.fit`` reads them
    prepared = prepare.preprocess(settings, X, None, None, None)
    spec = resolve(settings, None, p)
    config, dtype = spec.config, spec.dtype
    engine = compiled.variational(config, spec.optimiser, 0.0, 1.0, False)
    start = fitting.starts(engine, prepared.Z, prepared.noise, dtype, config, True, 1)[0]
    data = engine.model.prepare_data(jax.numpy.asarray(prepared.Z, dtype), None)
    return engine, start, data, prepared


def timed_fit(engine, start, data, prepared, lam: float, key: int) -> tuple[float, int]:
    """Seconds and epochs of one fit."""
    begin = time.perf_counter()
    result = engine.fit(start, data, prepared.Z.shape[0], lam, prepared.noise,
                        jax.random.PRNGKey(key))
    return time.perf_counter() - begin, len(result.history)


def step_cost(p: int, n: int, n_samples: int, lam: float, epochs: int = 3) -> dict:
    """Seconds per step (a fit of ``epochs`` epochs, compiled by an earlier identical fit,
    less its final scoring) and the scoring's cost in steps (timed on its own)."""
    engine, start, data, prepared = prepared_fit(p, n, n_samples, epochs, lam)
    steps = engine.options.steps_per_epoch
    timed_fit(engine, start, data, prepared, lam, 0)  # compiles the loop and the scoring
    fit, _ = timed_fit(engine, start, data, prepared, lam, 1)
    began = time.perf_counter()
    engine.negative_elbo(start, jax.random.PRNGKey(2), data, prepared.Z.shape[0],
                         lam, prepared.noise)
    score = time.perf_counter() - began
    step = max((fit - score) / (epochs * steps), 1e-6)
    return {"p": p, "n": n, "n_samples": n_samples, "step_seconds": round(step, 5),
            "score_steps": round(score / step, 2)}


def epochs_to_stop(p: int, n: int, lam: float, seed: int) -> int:
    """Epochs of a default fit at radius ``lam`` before early stopping."""
    return timed_fit(*prepared_fit(p, n, ProDAG().n_samples, ProDAG().max_epochs, lam, seed),
                     lam, seed)[1]


def power_law(rows: list[dict]) -> tuple[float, float]:
    """``(a, b)`` of ``step_seconds ≈ a · n_samples · p^b`` (least squares on logs)."""
    x = np.log([row["p"] for row in rows])
    y = np.log([row["step_seconds"] / row["n_samples"] for row in rows])
    b, log_a = np.polyfit(x, y, 1)
    return float(math.exp(log_a)), float(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, nargs="+", default=DEFAULT_P)
    parser.add_argument("--samples", type=int, nargs="+", default=[100])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--lam", type=float, default=2.0)
    parser.add_argument("--epochs-p", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    rows = []
    print(f"{'p':>5} {'L':>5} {'s/step':>9} {'score (steps)':>14}")
    for p in args.p:
        for n_samples in args.samples:
            row = step_cost(p, args.n, n_samples, args.lam)
            rows.append(row)
            print(f"{p:>5} {n_samples:>5} {row['step_seconds']:>9.4f} "
                  f"{row['score_steps']:>14.1f}", flush=True)
    a, b = power_law([row for row in rows if row["p"] >= 50] or rows)
    print(f"step seconds ~ {a:.3g} * L * p^{b:.3f}")
    epochs = []
    for p in args.epochs_p:
        for seed in range(args.seeds):
            epochs.append({"p": p, "seed": seed, "epochs": epochs_to_stop(p, args.n,
                                                                           args.lam, seed)})
            print(f"p = {p}, seed {seed}: {epochs[-1]['epochs']} epochs to stop", flush=True)
    results = RESULTS_DIR / ("fit_cost.json" if args.p == DEFAULT_P else
                             f"fit_cost_p{'-'.join(map(str, args.p))}.json")
    results.parent.mkdir(exist_ok=True)
    results.write_text(json.dumps({
        "settings": vars(args), "steps": rows, "epochs": epochs,
        "fit": {"a": a, "b": b, "median_score_steps": float(np.median(
            [row["score_steps"] for row in rows])),
            "median_epochs": float(np.median([row["epochs"] for row in epochs]))},
        "note": "taken beside other jobs on a shared 2-core machine"}, indent=1) + "\n")


if __name__ == "__main__":
    main()

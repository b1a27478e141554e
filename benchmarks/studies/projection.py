"""Speed and accuracy of the DAG projection methods (exact, search, auto, path).

``search`` runs on the compiled CPU kernel where it applies (numba, CPU backend);
``search-jax`` is the same search in pure JAX (what runs on a GPU), timed beside it.

For each p and input kind, L matrices W̃ are projected (acyclic step, λ = ∞) by every method.
Reported per row: median wall time of one batched, compiled call (after a warm-up call that
compiles, each timed call ended by ``block_until_ready``); the mean objective
``½‖W̃ − Ŵ‖²`` relative to the exact optimum (p ≤ 12) or else to the best method on each sample;
the share of samples at the exact optimum (p ≤ 12); the share of outputs that are DAGs; and the
mean number of edges the path method's clean-up removed.

Inputs: "prior" W̃ ~ N(0, 1); "posterior" a random DAG (2p expected edges, weights ±U[0.3, 2],
random node order) plus N(0, 0.1²) noise on every entry. Diagonals are zero.

    python -m benchmarks.studies.projection                      # full table (a few minutes)
    python -m benchmarks.studies.projection --p 10 20 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from prodag.graph import is_dag
from prodag.projection import EXACT_MAX_NODES, project
from prodag.projection.api import _resolve_method
from prodag.projection.orders import forward_mask
from prodag.projection.path import path_support
from prodag.projection.search import search_positions

from .. import RESULTS_DIR

EXACT_REFERENCE_MAX_P = 12
RESULTS = RESULTS_DIR / "projection.json"


def prior_like(rng, L, p):
    W = rng.normal(size=(L, p, p))
    W[:, np.arange(p), np.arange(p)] = 0.0
    return W.astype(np.float32)


def posterior_like(rng, L, p):
    """A sparse random DAG per sample (weights ±U[0.3, 2]) plus N(0, 0.1²) noise."""
    edge_probability = min(1.0, 4.0 / max(p - 1, 1))
    upper = np.triu(rng.random((L, p, p)) < edge_probability, 1)
    weights = rng.uniform(0.3, 2.0, (L, p, p)) * rng.choice([-1.0, 1.0], (L, p, p))
    W = np.where(upper, weights, 0.0)
    for sample in range(L):
        order = rng.permutation(p)
        W[sample] = W[sample][np.ix_(order, order)]
    W = W + rng.normal(0.0, 0.1, (L, p, p))
    W[:, np.arange(p), np.arange(p)] = 0.0
    return W.astype(np.float32)


def timed(function, *args, repeats):
    """(median seconds of ``repeats`` calls after one warm-up call, last result)."""
    result = jax.block_until_ready(function(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def run_method(method, W, repeats, path_options):
    """Returns (seconds, projected W (L, p, p) numpy, removed edges per sample or None)."""
    if method == "path":
        support_of = jax.jit(jax.vmap(partial(path_support, **path_options)))
        seconds, (support, removed) = timed(support_of, W, repeats=repeats)
        return seconds, np.where(np.asarray(support), W, 0.0), np.asarray(removed)
    projector = (jax.jit(jax_search_projection) if method == "search-jax" else
                 jax.jit(partial(project, lam=jnp.inf, method=method)))
    seconds, projected = timed(projector, W, repeats=repeats)
    return seconds, np.asarray(projected), None


def jax_search_projection(W):
    """The acyclic step of ``method="search"`` with the pure-JAX search, ``(L, p, p)``."""
    p = W.shape[-1]
    squared = jnp.square(W) * (1 - jnp.eye(p, dtype=W.dtype))
    return jnp.where(forward_mask(jax.vmap(search_positions)(squared)), W, 0.0)


def objective(W_tilde, W):
    return 0.5 * np.sum((W_tilde.astype(np.float64) - W.astype(np.float64)) ** 2, axis=(1, 2))


def benchmark_case(kind, p, args):
    rng = np.random.default_rng(1000 * p + (kind == "posterior"))
    W = (prior_like if kind == "prior" else posterior_like)(rng, args.L, p)
    methods = (["exact"] if p <= min(EXACT_REFERENCE_MAX_P, EXACT_MAX_NODES) else [])
    methods += ["search", "search-jax", "auto"]
    if p <= args.path_max_p:
        methods.append("path")
    outcomes = {}
    for method in methods:
        subset = W
        repeats = args.repeats
        path_options = {"tol": args.path_tol}
        if method == "path" and p >= args.path_small_from:
            subset, repeats = W[: args.path_samples], 1
            path_options["max_steps"] = args.path_large_max_steps
        seconds, projected, removed = run_method(method, subset, repeats, path_options)
        outcomes[method] = (len(subset), seconds, projected, removed)
        print(f"  {kind:9s} p={p:3d} {method:6s} {seconds * 1e3:10.1f} ms", flush=True)
    objectives = {m: objective(W[: out[0]], out[2]) for m, out in outcomes.items()}
    if "exact" in outcomes:
        reference, reference_name = objectives["exact"], "exact"
    else:  # the best objective any method reached on each sample
        reference = np.min([objectives[m] for m in outcomes if outcomes[m][0] == len(W)], axis=0)
        for values in objectives.values():
            reference[: len(values)] = np.minimum(reference[: len(values)], values)
        reference_name = "best method"
    rows = []
    for method, (n, seconds, projected, removed) in outcomes.items():
        ref = reference[:n]
        at_optimum = (np.mean(objectives[method] <= ref * (1 + 1e-5) + 1e-6)
                      if reference_name == "exact" else None)
        rows.append({
            "input": kind, "p": p, "method": method,
            "resolved_method": (_resolve_method(method, p)
                                if method not in ("path", "search-jax") else method),
            "L": int(n), "repeats": args.repeats if n == args.L else 1,
            "path_max_steps": (None if method != "path" else
                               args.path_large_max_steps if p >= args.path_small_from else 10_000),
            "median_ms": seconds * 1e3,
            "objective_ratio": float(objectives[method].mean() / ref.mean()),
            "reference": reference_name,
            "share_at_exact_optimum": None if at_optimum is None else float(at_optimum),
            "share_dags": float(np.mean(is_dag(projected))),
            "mean_edges_removed": None if removed is None else float(removed.mean()),
            "mean_edges_kept": float((projected != 0).sum(axis=(1, 2)).mean()),
        })
    return rows


def print_table(rows):
    header = (f"{'input':9s} {'p':>3s} {'method':8s} {'L':>4s} {'median ms':>10s} "
              f"{'obj/ref':>8s} {'at opt':>7s} {'DAGs':>6s} {'removed':>8s} {'edges':>7s}")
    print(header)
    print("-" * len(header))
    for r in rows:
        at_opt = "" if r["share_at_exact_optimum"] is None else f"{100 * r['share_at_exact_optimum']:.0f}%"
        removed = "" if r["mean_edges_removed"] is None else f"{r['mean_edges_removed']:.1f}"
        print(f"{r['input']:9s} {r['p']:3d} {r['method']:8s} {r['L']:4d} {r['median_ms']:10.1f} "
              f"{r['objective_ratio']:8.4f} {at_opt:>7s} {100 * r['share_dags']:5.0f}% "
              f"{removed:>8s} {r['mean_edges_kept']:7.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--p", type=int, nargs="+", default=[10, 12, 20, 50, 100, 200])
    parser.add_argument("--L", type=int, default=100, help="matrices per batched call")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per method")
    parser.add_argument("--inputs", nargs="+", default=["prior", "posterior"])
    parser.add_argument("--path-tol", type=float, default=1e-2, help="path gradient tolerance")
    parser.add_argument("--path-max-p", type=int, default=100, help="skip path above this p")
    parser.add_argument("--path-small-from", type=int, default=50,
                        help="from this p on, time path once on --path-samples matrices")
    parser.add_argument("--path-samples", type=int, default=10)
    parser.add_argument("--path-large-max-steps", type=int, default=10_000,
                        help="path's step cap per stage from --path-small-from on (the paper: "
                             "10000; prior-like input at p >= 50 never converges, so each call "
                             "then costs 10 x this many batched p x p inversions)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    rows = []
    for kind in args.inputs:
        for p in args.p:
            rows.extend(benchmark_case(kind, p, args))
            write_results(args, rows)  # after every case, so an interrupted run keeps its rows
    print()
    print_table(rows)
    by_key = {(r["input"], r["p"], r["method"]): r for r in rows}
    for kind in args.inputs:
        for p in args.p:
            auto, path = by_key.get((kind, p, "auto")), by_key.get((kind, p, "path"))
            if auto and path:
                per_sample = (path["median_ms"] / path["L"]) / (auto["median_ms"] / auto["L"])
                print(f"{kind} p={p}: auto is {per_sample:.0f}x faster than path per sample")
    write_results(args, rows)
    print(f"wrote {args.out}")


def write_results(args, rows):
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"jax": jax.__version__, "backend": jax.default_backend(), "cpu_count": os.cpu_count(),
            "machine": platform.machine(), "load_average_at_write": os.getloadavg(),
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()

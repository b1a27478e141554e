"""Total causal effects: prodag's posterior against plug-in estimates and the true effects.

Linear ER (``--sem linear``, default p = 20, s = 40, ``--n``): the true total effects are
``(I − W)⁻¹ − I`` of the simulator's weights. Rows:

* ``prodag``: ``ProDAG(seed=dataset seed)`` with its defaults; the posterior mean of
  ``total_effects(1000)`` and its equal-tailed 90% intervals;
* ``DAGMA plug-in``: DAGMA's point graph (``benchmarks.peers.fit_dagma``, λ chosen on
  ``X_val``) with least-squares weights refitted on each node's parents (centred data);
* ``oracle (true graph, LS)``: the true graph with least-squares weights, a lower bound.

MLP simulator (``--sem mlp``, p = 10, s = 10): the true effect of a unit shift
``E[x_k | x_j ← x_j + 1] − E[x_k]`` by simulating the simulator's networks on
``TRUTH_ROWS`` noise rows with common random numbers; rows ``prodag additive`` (the additive
SEM, defaults) and ``prodag linear`` (the linear SEM, defaults) fitted to the same data.

Scores over the p(p − 1) ordered pairs: RMSE of the point estimate (all pairs, and pairs whose
true effect is nonzero, i.e. with a directed path in the true graph); for prodag the
coverage of the 90% intervals (all pairs, nonzero pairs) and their mean width. Prints mean ±
standard error over datasets and writes ``benchmarks/results/effects_<sem>_p<p>_n<n>.json``
(rewritten after every dataset; ``--resume`` skips the datasets already in it).

Run: ``python -m benchmarks.studies.effects --n 100 --seeds 10`` (linear), ``python -m
benchmarks.studies.effects --sem mlp --p 10 --s 10 --n 1000 --seeds 10`` (additive); other
ProDAG settings with ``--option NAME=VALUE --tag NAME`` (e.g. ``--option bootstrap=True
--option n_chains=4 --tag bootstrap_chains4``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from .. import RESULTS_DIR
from ..suite import synthetic

N_DRAWS = 1000
LEVEL = 0.9
TRUTH_ROWS = 20000
"""Noise rows of the simulation that gives the MLP simulator's true effects."""
SCORES = ("rmse", "rmse_nonzero", "coverage", "coverage_nonzero", "width", "seconds")


def least_squares_weights(X: np.ndarray, support: np.ndarray) -> np.ndarray:
    """``W (p, p)``: each column k regressed (least squares, centred ``X (n, p)``) on the
    parents that ``support (p, p)`` (nonzero = edge j → k) gives it."""
    Z = X - X.mean(axis=0)
    p = X.shape[1]
    W = np.zeros((p, p))
    for k in range(p):
        parents = np.flatnonzero(support[:, k])
        if parents.size:
            W[parents, k] = np.linalg.lstsq(Z[:, parents], Z[:, k], rcond=None)[0]
    return W


def mlp_shift_effects(weights: dict, order: np.ndarray, rows: int, seed: int) -> np.ndarray:
    """``(p, p)`` effects of a unit shift in the simulator's MLP SEM (``prodag.simulate``),
    on ``rows`` Gaussian noise rows shared by every simulation."""
    from prodag.evaluation.simulate import mlp_sem

    p = weights["W2"].shape[0]
    noise = np.random.default_rng([seed, 7]).standard_normal((rows, p))
    base = mlp_sem(weights, noise, order)
    effects = np.zeros((p, p))
    for j in range(p):
        shifted = noise.copy()
        shifted[:, j] += 1.0
        effects[j] = (mlp_sem(weights, shifted, order) - base).mean(axis=0)
        effects[j, j] = 0.0
    return effects


def score(name: str, seed: int, seconds: float, truth: np.ndarray, nonzero: np.ndarray,
          draws: np.ndarray | None = None, point: np.ndarray | None = None) -> dict:
    """One row: RMSE of ``point`` (or the mean of ``draws (L, p, p)``) against ``truth (p,
    p)`` over ordered pairs and over ``nonzero``; coverage and width of the draws' intervals."""
    p = truth.shape[0]
    pairs = ~np.eye(p, dtype=bool)
    point = draws.mean(axis=0) if point is None else point
    error = (point - truth)[pairs]
    row = {"method": name, "seed": seed, "seconds": seconds,
           "rmse": float(np.sqrt(np.mean(error ** 2))),
           "rmse_nonzero": float(np.sqrt(np.mean((point - truth)[nonzero & pairs] ** 2)))}
    if draws is not None:
        lower, upper = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
        inside = (lower <= truth) & (truth <= upper)
        row |= {"coverage": float(inside[pairs].mean()),
                "coverage_nonzero": float(inside[nonzero & pairs].mean()),
                "width": float((upper - lower)[pairs].mean())}
    print(f"seed {seed} {name:<26} " + " ".join(
        f"{key}={row[key]:.3f}" for key in SCORES if key in row), flush=True)
    return row


def prodag_row(name, seed, data, truth, nonzero, **settings) -> tuple[dict, dict]:
    from prodag import ProDAG
    from prodag.config.parameters import nest

    start = time.perf_counter()
    estimator = ProDAG(seed=seed, progress=False, **nest(settings)).fit(data.X)
    draws = estimator.total_effects(N_DRAWS)
    row = score(name, seed, time.perf_counter() - start, truth, nonzero, draws=draws)
    return row, {key: (value if isinstance(value, (int, float, str, type(None)))
                       else str(value)) for key, value in estimator.get_params().items()}


def run_one(args, seed: int) -> tuple[list[dict], dict]:
    from prodag import effects, simulate
    from prodag.graph import topological_order

    data = simulate.dataset(args.p, args.s, args.n, sem=args.sem, seed=seed)
    nonzero = effects.directed_paths(data.adjacency[None])[0]
    if args.sem == "linear":
        truth = effects.linear_total_effects(data.weights[None])[0]
    else:
        truth = mlp_shift_effects(data.weights, topological_order(data.adjacency), TRUTH_ROWS,
                                  seed)
    rows, settings = [], {}
    fitted = ("additive", "linear") if args.sem == "mlp" else ("linear",)
    for sem in fitted:
        name = f"prodag {sem}" if args.sem == "mlp" else "prodag"
        row, settings[name] = prodag_row(name, seed, data, truth, nonzero,
                                         **{**synthetic.parse_options(args.option),
                                            "sem": sem})
        rows.append(row)
    oracle = least_squares_weights(data.X, data.adjacency)
    rows.append(score("oracle (true graph, LS)", seed, 0.0, truth, nonzero,
                      point=effects.linear_total_effects(oracle[None])[0]))
    if args.sem == "linear" and not args.skip_dagma:
        from ..suite.peers import fit_dagma

        start = time.perf_counter()
        graph = fit_dagma(data.X, data.X_val)[0]
        plug_in = effects.linear_total_effects(least_squares_weights(data.X, graph)[None])[0]
        rows.append(score("DAGMA plug-in (LS)", seed, time.perf_counter() - start, truth,
                          nonzero, point=plug_in))
    return rows, settings


def summarize(rows: list[dict]) -> dict:
    """Mean and standard error over datasets of every score, per method."""
    table = {}
    for method in dict.fromkeys(row["method"] for row in rows):
        group = [row for row in rows if row["method"] == method]
        table[method] = {}
        for key in SCORES:
            if key in group[0]:
                values = np.array([row[key] for row in group])
                se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
                table[method][key] = {"mean": float(values.mean()), "se": float(se)}
        table[method]["datasets"] = len(group)
    return table


def print_table(table: dict) -> None:
    titles = {"rmse": "RMSE", "rmse_nonzero": "RMSE (≠0)", "coverage": "cover",
              "coverage_nonzero": "cover (≠0)", "width": "width", "seconds": "s"}
    print(f"{'method':<26} " + " ".join(f"{titles[k]:>15}" for k in SCORES))
    for method, entry in table.items():
        print(f"{method:<26} " + " ".join(
            f"{entry[k]['mean']:7.3f} ± {entry[k]['se']:5.3f}" if k in entry else f"{'':>15}"
            for k in SCORES))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sem", default="linear", choices=("linear", "mlp"),
                        help="the simulator (mlp: prodag's additive and linear SEMs fitted)")
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--skip-dagma", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a ProDAG setting other than its default, e.g. bootstrap=True "
                             "(repeatable; the result file's name then needs --tag)")
    parser.add_argument("--tag", default=None, help="result file suffix, e.g. bootstrap_chains4")
    args = parser.parse_args(argv)
    if args.option and not args.tag:
        parser.error("--option needs --tag: the result file is named after the settings")
    tag = f"_{args.tag}" if args.tag else ""
    out = RESULTS_DIR / f"effects_{args.sem}_p{args.p}_n{args.n}{tag}.json"
    previous = json.loads(out.read_text()) if args.resume and out.exists() else {}
    rows, settings = previous.get("rows", []), previous.get("prodag_settings", {})
    done = {row["seed"] for row in rows}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        if seed in done:
            continue
        new_rows, settings = run_one(args, seed)
        rows += new_rows
        out.write_text(json.dumps({"settings": vars(args), "level": LEVEL, "draws": N_DRAWS,
                                   "prodag_settings": settings, "summary": summarize(rows),
                                   "rows": rows}, indent=1) + "\n")
    print_table(summarize(rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

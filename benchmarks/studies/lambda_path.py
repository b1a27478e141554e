"""Where restarts pay on the λ path: every start at every radius, scored, and the choices of
cheaper strategies read off the same fits.

For every dataset it fits the λ = ∞ fit and every radius of the default grid from every start
(the keys ``prodag.inference.radius_selection.select_lambda`` uses), scores each fit against
the truth, and then replays strategies on these fits:

* ``all``: every start at every radius (33 fits with 3 starts and 10 radii);
* ``one``: the first start only (11 fits);
* ``topK``: the first start at every radius, every start at the K best radii by the first
  start's ELBO, the best ELBO among them kept (13 + 2K fits).

The grid comes from the best λ = ∞ fit of all starts, so the replayed strategies differ from
a real run only in that (the default runs its λ = ∞ fit from one start). Prints a table of
mean ± standard error per strategy and writes ``benchmarks/results/lambda_path_<tag>.json``.

Run: ``python -m benchmarks.studies.lambda_path --p 20 --s 40 --n 100 --seeds 10``.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR

STRATEGIES = {"all": None, "one": 0, "top1": 1, "top2": 2, "top3": 3}
"""Strategy name → number of radii refitted from every start (``None``: all, 0: none)."""


def path_fits(p: int, s: int, n: int, seed: int) -> dict:
    """Every start at every radius of the default path on dataset ``seed``: the grid, the
    λ = ∞ fits and ``fits[i][r]`` (radius i, start r), each with objective, epochs, seconds
    and the four metrics of 1000 posterior samples."""
    import jax

    from prodag import ProDAG, TrainingOptions, metrics, simulate
    from prodag.config.spec import resolve
    from prodag.inference import compiled, draws, fitting, radius_selection

    data = simulate.dataset(p, s, n, seed=seed)
    spec = resolve(ProDAG(seed=seed, progress=False), None, p)
    Z = data.X - data.X.mean(axis=0)
    noise = np.ones(p)
    config = spec.config
    engine = compiled.variational(config, spec.optimiser, 0.0, 1.0, False)
    starts = fitting.starts(engine, Z, noise, spec.dtype, config, True, spec.restarts)
    prepared = engine.model.prepare_data(jax.numpy.asarray(Z, spec.dtype))
    fit_key, _, sample_key, _ = jax.random.split(jax.random.PRNGKey(seed), 4)

    def one(lam, key, restart):
        start = time.perf_counter()
        result = engine.fit(starts[restart], prepared, n, lam, noise,
                            jax.random.fold_in(key, restart))
        seconds = time.perf_counter() - start
        graphs = draws.sample(compiled.sampler(config), result.params, jax.random.PRNGKey(7),
                              1000, lam)[1]
        scores = metrics.evaluate(data.adjacency, np.asarray(graphs))
        return result, {"objective": float(result.objective), "epochs": len(result.history),
                        "seconds": seconds, **{k: float(scores[k]) for k in METRICS}}

    unbounded = [one(math.inf, fit_key, r) for r in range(len(starts))]
    best = min(unbounded, key=lambda fit: fit[1]["objective"])[0]
    graphs = draws.sample(compiled.sampler(config), best.params, sample_key,
                          radius_selection.N_DRAWS_FOR_LAM_MAX, math.inf)[1]
    grid = radius_selection.lambda_grid(radius_selection.mean_l1_norm(graphs),
                                        TrainingOptions().n_lambdas)
    fits = [[one(float(lam), jax.random.fold_in(fit_key, i + 1), r)[1]
             for r in range(len(starts))] for i, lam in enumerate(grid)]
    return {"seed": seed, "lambdas": grid.tolist(),
            "unbounded": [record for _, record in unbounded], "fits": fits}


def replay(run: dict, polished: int | None) -> tuple[dict, int]:
    """The fit a strategy keeps on one dataset's ``path_fits``, and its number of fits."""
    fits, n_starts = run["fits"], len(run["fits"][0])
    if polished is None:
        kept = [min(radius, key=lambda f: f["objective"]) for radius in fits]
        return min(kept, key=lambda f: f["objective"]), n_starts * (len(fits) + 1)
    order = sorted(range(len(fits)), key=lambda i: fits[i][0]["objective"])
    if polished == 0:
        return fits[order[0]][0], len(fits) + 1
    kept = [min(fits[i], key=lambda f: f["objective"]) for i in order[:polished]]
    return (min(kept, key=lambda f: f["objective"]),
            1 + len(fits) + polished * (n_starts - 1))


def summarize(runs: list[dict]) -> dict:
    """Mean and standard error of every metric per strategy, and its number of fits."""
    table = {}
    for name, polished in STRATEGIES.items():
        kept = [replay(run, polished) for run in runs]
        entry = {"fits": kept[0][1]}
        for metric in METRICS:
            values = np.array([fit[metric] for fit, _ in kept])
            entry[metric] = {"mean": float(values.mean()),
                             "se": float(values.std(ddof=1) / np.sqrt(len(values)))}
        table[name] = entry
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    out = RESULTS_DIR / f"lambda_path_p{args.p}_n{args.n}.json"
    runs = []
    for seed in range(args.seeds):
        runs.append(path_fits(args.p, args.s, args.n, seed))
        print(f"seed {seed}: {len(runs[-1]['fits']) + 1} radii fitted", flush=True)
    table = summarize(runs)
    print(f"{'strategy':<9} {'fits':>4} " + " ".join(f"{METRICS[m]:>14}" for m in METRICS))
    for name, entry in table.items():
        print(f"{name:<9} {entry['fits']:>4} " + " ".join(
            f"{entry[m]['mean']:6.2f} ± {entry[m]['se']:4.2f}" for m in METRICS))
    out.write_text(json.dumps({"settings": vars(args), "summary": table, "runs": runs},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

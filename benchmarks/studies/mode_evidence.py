"""Can a sampler weigh the fitted modes by their evidence at p = 20, within the CPU budget?

The pooled mixture weighs its components by their ELBOs, ``w_k ∝ exp(ELBO_k)``; the model's
own posterior weighs the modes by their evidence ``Z_k = ∫_{mode k} p(ω̃) p(X | ω(ω̃, λ_k))``,
and ``log Z_k − ELBO_k = KL(q_k ‖ posterior within mode k)`` differs between modes. This study
fits one dataset with the defaults and estimates every kept component's ``log Z_k`` two ways:

* **importance sampling** with the component itself as the proposal (``M`` draws): the
  estimate's lift over the ELBO and the effective sample size of its weights;
* **tempered SMC within each component** (``prodag.inference.smc``'s kernel, one population per
  component started from it, ``--particles`` particles, ``--steps`` Metropolis steps per
  temperature), run twice with different keys: how far the two runs' ``log Ẑ_k`` lie apart
  says whether such weights are the evidence or noise.

Or, with ``--reweigh 0,1,4``: seeds 0 and 1 of each dataset, the kept components weighted by
their ELBOs (the mixture) or by the importance-sampled ``Ẑ_k``: the seeds' max |ΔP| and Brier.

    PYTHONPATH=src python -m benchmarks.studies.mode_evidence [--dataset 4] [--seed 0]
        [--draws 1000] [--particles 64] [--steps 50] [--components 8] [--temperatures 1]
        [--tag TAG] [--reweigh DATASETS]

Writes ``benchmarks/results/mode_evidence_p20_dataset<d>_seed<s>[_<tag>].json`` (with
``--reweigh``: ``mode_evidence_reweigh_p20[_<tag>].json``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from .. import RESULTS_DIR


def importance_sampling(model, project, component, lam, data, noise, prior, key, m):
    """``(log Ẑ, ELBO, ESS, edge probabilities (p, p))`` of one component from ``m`` draws of
    itself as the proposal."""
    import jax
    import jax.numpy as jnp

    from prodag.inference import refinement
    from prodag.inference import noise_variance_of
    from prodag.models import variational

    params = jax.tree.map(jnp.asarray, component)
    draws = variational.sample(params.q, key, m)
    variance = noise_variance_of(params, jnp.asarray(noise))
    target = refinement.Target(data, jnp.full(m, lam, variance.dtype),
                               jnp.broadcast_to(variance, (m, variance.size)), *prior)
    n_weights = sum(value.size for value in params.q.loc.values())
    log_target = (refinement.log_target(model, project, draws, target)
                  - 0.5 * n_weights * np.log(2 * np.pi * prior[1] ** 2))
    scales = variational.stddev(params.q)
    log_q = sum(jnp.sum((-0.5 * jnp.square((draws[name] - params.q.loc[name]) / scales[name])
                         - jnp.log(scales[name])).reshape(m, -1), axis=1)
                for name in draws) - 0.5 * n_weights * np.log(2 * np.pi)
    log_w = np.asarray(log_target - log_q, float)
    w = np.exp(log_w - log_w.max())
    graphs = np.asarray(project(model.graph_of(draws), target.lams))
    return (float(np.logaddexp.reduce(log_w) - np.log(m)), float(log_w.mean()),
            float(w.sum() ** 2 / np.square(w).sum()), np.mean(graphs != 0, axis=0))


def smc_within_components(estimator, data, noise, key, particles, steps, n_components,
                          temperatures):
    """``log Ẑ (K,)`` and temperatures of a tempered SMC started from each component alone
    (at least ``temperatures`` of them)."""
    import jax
    import jax.numpy as jnp

    from prodag.inference import compiled, refinement, smc

    spec = estimator.spec_
    prior = (spec.prior_mean, float(spec.prior_std))
    proposals = [smc.proposal_of([(estimator.component_lams_[k], jax.tree.map(
        jnp.asarray, estimator.components_[k]))], jnp.float32, prior, widen=1.0)
        for k in range(n_components)]
    proposals = jax.tree.map(lambda *leaves: jnp.stack(leaves), *proposals)
    target = refinement.Target(data, None, jnp.asarray(noise[None], jnp.float32), *prior)
    kernel = compiled.smc_kernel(spec.config, steps, smc.ESS_FRACTION, temperatures)
    init = jax.jit(jax.vmap(lambda k, q: kernel.init(k, q, target, 1, particles)))
    step = jax.jit(jax.vmap(lambda k, s, q: kernel.step(k, s, q, target)))
    state, steps_run = init(jax.random.split(key, n_components), proposals), 0
    while not bool(jnp.all(state.beta >= 1.0)):
        steps_run += 1
        state, _ = step(jax.random.split(jax.random.fold_in(key, steps_run), n_components),
                        state, proposals)
    return np.asarray(state.log_evidence)[:, 0], steps_run


def fitted(dataset: int, seed: int):
    """A default fit of linear dataset ``dataset`` (p = 20) with ``seed``, its model, projector,
    prepared data, noise and prior, and the truth."""
    import jax.numpy as jnp

    from prodag import ProDAG, simulate
    from prodag.fit import prepare

    data = simulate.dataset(20, 40, 100, seed=dataset)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = ProDAG(seed=seed, progress=False).fit(data.X)
        prepared = prepare.preprocess(estimator, data.X, None, None, None)
    spec = estimator.spec_
    model = spec.config.model()
    return (estimator, model, spec.config.projector(),
            model.prepare_data(jnp.asarray(prepared.Z, jnp.float32), None), prepared.noise,
            (spec.prior_mean, float(spec.prior_std)), data.adjacency,
            time.perf_counter() - start)


def reweigh(datasets: list[int], draws: int) -> dict:
    """Seeds 0 and 1 of each dataset, their kept components weighted by the mixture's ELBO
    weights or by importance-sampled evidence: the seeds' max |ΔP| and each seed's Brier."""
    import jax

    results = {}
    for dataset in datasets:
        posteriors = {"mixture": [], "importance": []}
        briers = {"mixture": [], "importance": []}
        for seed in (0, 1):
            estimator, model, project, data, noise, prior, truth, _ = fitted(dataset, seed)
            stats = [importance_sampling(model, project, component, float(lam), data, noise,
                                         prior, jax.random.PRNGKey(1000 + i), draws)
                     for i, (component, lam) in enumerate(zip(estimator.components_,
                                                              estimator.component_lams_))]
            log_z = np.array([stat[0] for stat in stats])
            weights = {"mixture": estimator.mixture_weights_,
                       "importance": np.exp(log_z - np.logaddexp.reduce(log_z))}
            for name, w in weights.items():
                probabilities = np.tensordot(w, np.stack([stat[3] for stat in stats]), 1)
                posteriors[name].append(probabilities)
                off = ~np.eye(len(truth), dtype=bool)
                briers[name].append(float(np.sum((probabilities - truth)[off] ** 2)))
        off = ~np.eye(posteriors["mixture"][0].shape[0], dtype=bool)
        results[f"dataset {dataset}"] = {name: {
            "max_dP": float(np.abs(posteriors[name][0] - posteriors[name][1])[off].max()),
            "brier": briers[name]} for name in posteriors}
        row = results[f"dataset {dataset}"]
        print(f"dataset {dataset}: seeds' max |ΔP| mixture {row['mixture']['max_dP']:.3f}, "
              f"importance {row['importance']['max_dP']:.3f}; Brier mixture "
              f"{row['mixture']['brier'][0]:.2f}, {row['mixture']['brier'][1]:.2f}, importance "
              f"{row['importance']['brier'][0]:.2f}, {row['importance']['brier'][1]:.2f}")
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--particles", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--components", type=int, default=8)
    parser.add_argument("--tag", default=None, help="results file suffix")
    parser.add_argument("--reweigh", default=None, metavar="DATASETS",
                        help="instead: datasets (e.g. 0,1,4) whose seeds 0 and 1 are compared "
                             "with ELBO and importance-sampled weights")
    parser.add_argument("--temperatures", type=int, default=1,
                        help="at least this many temperatures (1: as the ESS allows)")
    args = parser.parse_args(argv)

    import jax

    if args.reweigh:
        datasets = [int(d) for d in args.reweigh.split(",")]
        results = reweigh(datasets, args.draws)
        out = RESULTS_DIR / ("mode_evidence_reweigh_p20" + (f"_{args.tag}" if args.tag else "")
                             + ".json")
        out.write_text(json.dumps({"settings": vars(args), "datasets": results}, indent=1))
        print(f"wrote {out}")
        return
    estimator, model, project, model_data, noise, prior, _, fit_seconds = fitted(args.dataset,
                                                                                 args.seed)
    k = min(args.components, len(estimator.components_))
    rows = [dict(zip(("is_log_z", "elbo", "is_ess"), importance_sampling(
        model, project, estimator.components_[i], float(estimator.component_lams_[i]),
        model_data, noise, prior, jax.random.PRNGKey(1000 + i), args.draws)[:3]),
        mixture_weight=float(estimator.mixture_weights_[i])) for i in range(k)]
    start = time.perf_counter()
    runs = [smc_within_components(estimator, model_data, noise,
                                  jax.random.PRNGKey(run), args.particles, args.steps, k,
                                  args.temperatures)
            for run in (0, 1)]
    smc_seconds = (time.perf_counter() - start) / 2
    for i, row in enumerate(rows):
        row.update(smc_log_z=[float(run[0][i]) for run in runs])
    spread = np.abs(runs[0][0] - runs[1][0])
    summary = {"fit_seconds": fit_seconds, "smc_seconds_per_run": smc_seconds,
               "temperatures": [run[1] for run in runs],
               "is_ess_max": max(row["is_ess"] for row in rows),
               "is_lift_over_elbo": [row["is_log_z"] - row["elbo"] for row in rows],
               "smc_rerun_spread_max": float(spread.max()),
               "smc_rerun_spread_median": float(np.median(spread))}
    print(f"dataset {args.dataset}, seed {args.seed}: {k} components, fit {fit_seconds:.1f} s")
    print("component  mixture w   ELBO     IS lift  IS ESS   SMC log Z (run 0, run 1)")
    for i, row in enumerate(rows):
        print(f"{i:9d}  {row['mixture_weight']:9.3f}  {row['elbo']:8.1f}  "
              f"{row['is_log_z'] - row['elbo']:7.1f}  {row['is_ess']:6.1f}   "
              f"{row['smc_log_z'][0]:8.1f}, {row['smc_log_z'][1]:8.1f}")
    print(f"SMC: {smc_seconds:.1f} s a run, temperatures {summary['temperatures']}, the two "
          f"runs' log Z apart by {summary['smc_rerun_spread_median']:.1f} (median), "
          f"{summary['smc_rerun_spread_max']:.1f} (max)")
    out = RESULTS_DIR / (f"mode_evidence_p20_dataset{args.dataset}_seed{args.seed}"
                         + (f"_{args.tag}" if args.tag else "") + ".json")
    out.write_text(json.dumps({"settings": vars(args), "summary": summary, "components": rows},
                              indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

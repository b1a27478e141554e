"""How far a linear ProDAG fit's edge probabilities are from its own model's exact posterior
at small p: the reference posterior of a long parallel-tempering run
(``benchmarks.reference_sampler``) on the SAME model as the fit at a fixed radius.

Benchmark (``python -m benchmarks.studies.reference``): simulated linear ER data; per dataset the
reference edge probabilities, a ProDAG fit at the same model (``lam``, ``noise_variance=1``),
``|ΔP|`` between them and both Brier scores against the true graph. The reference's edges are
counted as the fitted estimator counts its own (``counted_edges``: an entry of negligible
effect, ``prodag.posterior.negligible``, is no edge), so ``|ΔP|`` measures the sampler, not a
difference of definitions; ``mean_dP_any_weight`` keeps the gap to ``P(|W_jk| > 0)``. ``--modes SEED`` compares
the mixture weights of a fit with several restarts to the reference's mass on each component.
Prints a table and writes ``benchmarks/results/reference_p<ps>_n<n>_lam<λ>[_<tag>].json``
(``reference_modes_p<p>_n<n>_lam<λ>_seed<SEED>[_<tag>].json`` with ``--modes``).

Run: ``python -m benchmarks.studies.reference --p 4 --p 5 --datasets 20 --n 50 --lam 2``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

import jax
import jax.numpy as jnp
import numpy as np

from .. import RESULTS_DIR
from ..reference_sampler import (JOINT_SCALES, MOVE_PROBABILITIES, MOVES, NOISE_MODES, SITE_SCALES,
                                 Reference, Tempering, batch_means_error, counted_edges, graphs,
                                 replica_edge_probabilities, replica_standard_error, sample)
from ..suite.synthetic import parse_options


# ---- the benchmark ----------------------------------------------------------------------------


def _off(p: int) -> np.ndarray:
    return ~np.eye(p, dtype=bool)


def _brier(truth: np.ndarray, probabilities: np.ndarray) -> float:
    return float(((truth != 0) - probabilities)[_off(len(truth))].__pow__(2).sum())


def run_dataset(p: int, seed: int, n: int, lam: float, options: dict, tempering: Tempering,
                n_draws: int = 2000, noise="fixed", variants=None) -> dict | list[dict]:
    """Reference and ProDAG fit on simulated dataset ``seed`` (linear ER, ``s = p`` edges),
    with unit noise (``"fixed"``) or the learned ``"estimate"`` / ``"equal"``. With
    ``variants {name: options}``: one row per variant (its ``"variant"``), all against the
    same reference run."""
    from prodag.evaluation.simulate import dataset

    data = dataset(p, p, n, graph="er", sem="linear", seed=seed)
    noise_variance = 1.0 if noise == "fixed" else noise
    reference = sample(data.X, lam, noise_variance, tempering, seed=seed)
    if variants is None:
        return _compare(data, reference, p, seed, n, lam, options, n_draws, noise)
    return [{"variant": name, **_compare(data, reference, p, seed, n, lam, variant, n_draws,
                                         noise)} for name, variant in variants.items()]


def _compare(data, reference: Reference, p: int, seed: int, n: int, lam: float, options: dict,
             n_draws: int, noise: str) -> dict:
    """One ProDAG fit of ``data`` with ``options`` against the ``reference``: a result row."""
    from prodag import ProDAG
    from prodag.config.parameters import nest
    from prodag.evaluation.metrics import evaluate

    noise_variance = 1.0 if noise == "fixed" else noise
    start = time.perf_counter()
    settings = {"lam": lam, "noise_variance": noise_variance, "seed": 0, "progress": False,
                **options}
    est = ProDAG(**nest(settings)).fit(data.X)
    fit_seconds = time.perf_counter() - start
    fit_probabilities = est.edge_probabilities(n_samples=n_draws)
    fit_graphs = est.sample(n_draws)
    off = _off(p)
    # the reference's edges counted as the fit counts them (negligible effects dropped)
    reference_graphs = graphs(reference.W_tilde, lam)
    counted = counted_edges(reference_graphs, data.X, noise_variance)
    per_replica = replica_edge_probabilities(counted)
    probabilities = per_replica.mean(axis=0)
    mc_error = np.maximum(replica_standard_error(per_replica), batch_means_error(counted))
    gap = np.abs(fit_probabilities - probabilities)[off]
    any_weight_gap = np.abs(fit_probabilities - reference.edge_probabilities)[off]
    return {
        "p": p, "seed": seed, "n": n, "lam": lam, "noise": noise,
        "mean_dP": float(gap.mean()), "max_dP": float(gap.max()),
        "mean_dP_any_weight": float(any_weight_gap.mean()),
        "max_dP_any_weight": float(any_weight_gap.max()),
        "mc_error_mean": float(mc_error[off].mean()),
        "mc_error_max": float(mc_error[off].max()),
        "brier_reference": _brier(data.adjacency, probabilities),
        "brier_fit": _brier(data.adjacency, fit_probabilities),
        "reference_metrics": evaluate(data.adjacency, np.where(
            counted, reference_graphs, 0).reshape(-1, p, p)),
        "fit_metrics": evaluate(data.adjacency, fit_graphs),
        "acceptance_cold": dict(zip(MOVES, reference.acceptance[0].round(3).tolist())),
        "swap_rates": reference.swap_rate.round(3).tolist(),
        "reference_seconds": reference.seconds, "fit_seconds": fit_seconds,
        "fit_components": len(est.components_),
        "fit_populations": est.diagnostics_.get("populations"),
        "fit_mixture_weights": np.asarray(est.mixture_weights_).round(4).tolist(),
        "truth": data.adjacency.tolist(),
        "reference_probabilities": probabilities.round(4).tolist(),
        "reference_probabilities_any_weight": reference.edge_probabilities.round(4).tolist(),
        "reference_mc_error": mc_error.round(4).tolist(),
        "fit_probabilities": fit_probabilities.round(4).tolist(),
    }


def summarize(rows: list[dict]) -> list[dict]:
    """Per p, noise (and variant): means over datasets (and the largest ``max_dP``)."""
    summary = []

    def label(row):
        return row["p"], row.get("noise", "fixed"), row.get("variant", "")

    for p, noise, variant in sorted({label(row) for row in rows}):
        group = [row for row in rows if label(row) == (p, noise, variant)]
        entry = {"p": p, "noise": noise, **({"variant": variant} if variant else {}),
                 "datasets": len(group)}
        for key in ("mean_dP", "max_dP", "mc_error_mean", "mc_error_max", "brier_reference",
                    "brier_fit", "reference_seconds", "fit_seconds"):
            entry[key] = float(np.mean([row[key] for row in group]))
        entry["largest_max_dP"] = float(max(row["max_dP"] for row in group))
        summary.append(entry)
    return summary


def _codes(edges: np.ndarray) -> np.ndarray:
    """One integer per graph of ``edges (S, p, p)`` (bool): its off-diagonal entries as bits."""
    flat = edges[:, _off(edges.shape[-1])]
    return flat.astype(np.int64) @ (1 << np.arange(flat.shape[1], dtype=np.int64))


def compare_modes(p: int, seed: int, n: int, lam: float, restarts: int, options: dict,
                  tempering: Tempering, n_draws: int = 5000) -> dict:
    """Mixture weights of a fit with ``restarts`` starts against the reference's mass per
    component. Each reference DAG goes to the component that draws it most often (none if no
    component draws it); each component's order is that of its mean (the exact projection of
    ``loc``), and the reference's mass on DAGs consistent with it is reported too."""
    from prodag import ProDAG, ProjectedNormal
    from prodag.config.parameters import nest
    from prodag.evaluation.simulate import dataset
    from prodag.projection.exact import exact_positions

    data = dataset(p, p, n, graph="er", sem="linear", seed=seed)
    reference = sample(data.X, lam, 1.0, tempering, seed=seed)
    reference_edges = graphs(reference.W_tilde, lam).reshape(-1, p, p) != 0
    reference_codes = _codes(reference_edges)
    est = ProDAG(**nest({"lam": lam, "noise_variance": 1.0, "seed": 0, "progress": False,
                         "n_restarts": restarts, **options})).fit(data.X)
    counts, components = [], []
    for k, params in enumerate(est.components_):
        loc, scale = params.q.loc["W"], jax.nn.softplus(params.q.rho["W"])
        draws = ProjectedNormal(loc, scale, float(est.component_lams_[k]), method="exact")
        edges = np.asarray(draws.sample(jax.random.PRNGKey(k), (n_draws,))) != 0
        codes, count = np.unique(_codes(edges), return_counts=True)
        counts.append(dict(zip(codes.tolist(), (count / n_draws).tolist())))
        positions = np.asarray(exact_positions(jnp.square(jnp.asarray(loc))))
        forward = positions[:, None] < positions[None, :]
        components.append({"weight": float(est.mixture_weights_[k]),
                           "order": np.argsort(positions).tolist(),
                           "own_mass_consistent": float(np.mean(~(edges & ~forward).any((1, 2)))),
                           "reference_mass_consistent": float(np.mean(
                               ~(reference_edges & ~forward).any((1, 2)))),
                           "edge_probabilities": edges.mean(0).round(3).tolist()})
    q = np.array([[c.get(code, 0.0) for c in counts] for code in reference_codes.tolist()])
    assigned = np.where(q.max(axis=1) > 0, q.argmax(axis=1), -1)
    for k, component in enumerate(components):
        component["reference_mass_assigned"] = float(np.mean(assigned == k))
    unique, ref_count = np.unique(reference_codes, return_counts=True)
    ref_mass = dict(zip(unique.tolist(), (ref_count / len(reference_codes)).tolist()))
    mixture = {}
    for weight, c in zip(est.mixture_weights_, counts):
        for code, mass in c.items():
            mixture[code] = mixture.get(code, 0.0) + float(weight) * mass
    every = set(ref_mass) | set(mixture)
    total_variation = 0.5 * sum(abs(ref_mass.get(c, 0.0) - mixture.get(c, 0.0)) for c in every)
    top = sorted(ref_mass, key=ref_mass.get, reverse=True)[:8]
    off_pairs = [(int(j), int(k)) for j, k in zip(*np.nonzero(_off(p)))]
    top_dags = [{"edges": [off_pairs[i] for i in range(len(off_pairs)) if code >> i & 1],
                 "reference": ref_mass[code], "fit": mixture.get(code, 0.0),
                 "per_component": [c.get(code, 0.0) for c in counts]} for code in top]
    print(f"dataset {seed}: p = {p}, n = {n}, λ = {lam:g}; {len(components)} components kept "
          f"of {restarts} starts; unassigned reference mass {np.mean(assigned < 0):.3f}; "
          f"total variation between the DAG distributions {total_variation:.3f}")
    print(f"{'k':>3} {'weight':>8} {'ref mass':>9} {'order':>16} {'ref cons.':>10} "
          f"{'own cons.':>10}")
    for k, c in enumerate(components):
        print(f"{k:>3} {c['weight']:>8.3f} {c['reference_mass_assigned']:>9.3f} "
              f"{str(c['order']):>16} {c['reference_mass_consistent']:>10.3f} "
              f"{c['own_mass_consistent']:>10.3f}")
    print("top reference DAGs: reference mass, fit mass, per component")
    for dag in top_dags:
        print(f"  {dag['edges']}: {dag['reference']:.3f} {dag['fit']:.3f} "
              f"{[round(m, 3) for m in dag['per_component']]}")
    return {"seed": seed, "p": p, "truth": data.adjacency.tolist(), "components": components,
            "unassigned_reference_mass": float(np.mean(assigned < 0)),
            "total_variation": total_variation, "top_dags": top_dags,
            "reference_probabilities": reference.edge_probabilities.round(4).tolist(),
            "reference_mc_error": reference.mc_error.round(4).tolist()}


COLUMNS = ("p", "seed", "mean_dP", "max_dP", "mc_error_max", "brier_reference", "brier_fit",
           "reference_seconds", "fit_seconds")


def _line(row: dict, columns=COLUMNS) -> str:
    return "  ".join(f"{row[c]:>8.3f}" if isinstance(row[c], float) else f"{row[c]:>8}"
                     for c in columns)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, action="append", help="nodes (repeatable; default 5)")
    parser.add_argument("--datasets", type=int, default=10, help="datasets 0 … N-1 per p")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--lam", type=float, default=2.0, help="fixed radius (inf: none)")
    parser.add_argument("--noise", choices=tuple(NOISE_MODES), action="append",
                        help="unit noise variances (fixed, the default), or learned ones "
                             "(benchmarks.reference_sampler); repeatable")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:N=V,...",
                        help="a fit to compare, named, with its ProDAG parameters over "
                             "--option's (repeatable; e.g. 'defaults:', 'smc:sampler=smc')")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a ProDAG parameter for the fit (repeatable)")
    parser.add_argument("--steps", type=int, default=Tempering.n_steps)
    parser.add_argument("--replicas", type=int, default=Tempering.n_replicas)
    parser.add_argument("--temperatures", type=int, default=Tempering.n_temperatures)
    parser.add_argument("--modes", type=int, default=None, metavar="SEED",
                        help="instead: compare the mixture weights of a fit with --restarts "
                             "starts to the reference's mass per component on dataset SEED")
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--tag", default="", help="suffix of the result file's name")
    args = parser.parse_args(argv)
    ps = args.p or [5]
    options = parse_options(args.option)
    tempering = Tempering(n_replicas=args.replicas, n_temperatures=args.temperatures,
                          n_steps=args.steps, burn_in=args.steps // 10)
    noises = args.noise or ["fixed"]
    variants = {name: {**options, **parse_options([o for o in rest.split(",") if o])}
                for name, _, rest in (v.partition(":") for v in args.variant)} or None
    settings = {"n": args.n, "lam": args.lam, "noise": noises, "options": options,
                "variants": variants, "tempering": asdict(tempering),
                "moves": dict(zip(MOVES, MOVE_PROBABILITIES)), "site_scales": SITE_SCALES,
                "joint_scales": JOINT_SCALES}
    stem = f"p{'-'.join(map(str, ps))}_n{args.n}_lam{args.lam:g}" + (
        "" if noises == ["fixed"] else f"_noise-{'-'.join(noises)}")
    suffix = f"_{args.tag}" if args.tag else ""
    if args.modes is not None:
        result = compare_modes(ps[0], args.modes, args.n, args.lam, args.restarts, options,
                               tempering)
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"reference_modes_p{ps[0]}_n{args.n}_lam{args.lam:g}" \
                             f"_seed{args.modes}{suffix}.json"
        path.write_text(json.dumps({"settings": settings, **result}, indent=1))
        print(f"wrote {path}")
        return
    labels = ("noise", "variant") if variants else ("noise",)
    print("  ".join(f"{c:>8}" for c in labels + COLUMNS), flush=True)
    rows = []
    for p in ps:
        for noise in noises:
            for seed in range(args.datasets):
                new = run_dataset(p, seed, args.n, args.lam, options, tempering, noise=noise,
                                  variants=variants)
                rows.extend(new if variants else [new])
                for row in new if variants else [new]:
                    print(_line(row, labels + COLUMNS), flush=True)
    summary = summarize(rows)
    columns = labels + ("p", "datasets", "mean_dP", "max_dP", "largest_max_dP",
                        "mc_error_max", "brier_reference", "brier_fit", "fit_seconds")
    print("\nsummary (means over datasets)")
    print("  ".join(f"{c:>8}" for c in columns))
    for entry in summary:
        print(_line(entry, columns))
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"reference_{stem}{suffix}.json"
    path.write_text(json.dumps({"settings": settings, "summary": summary, "rows": rows},
                               indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Prior knowledge on the paper's linear benchmark: required, forbidden and tiered edges
against none.

Linear ER, p = 20, s = 40, n = 100, datasets 0 … seeds-1 (``prodag.simulate.dataset``). For
each dataset ProDAG (defaults, seed = dataset seed) is fitted three times:

* ``none``: no knowledge;
* ``edges``: 25% of the true edges required and 25% of the absent ordered pairs forbidden,
  drawn with ``numpy.random.default_rng(seed)``;
* ``tiers``: the true topological order cut into 4 tiers of 5 variables.

Each posterior (1000 samples) is scored with the four metrics, the share of samples that
break the knowledge (must be 0), and the expected SHD on the *open* pairs: node pairs {j, k}
about which the ``edges`` knowledge says nothing in either direction (the same pairs for all
three fits of a dataset). Prints mean ± standard error per variant and writes
``benchmarks/results/knowledge.json``.

Run: ``python -m benchmarks.studies.knowledge [--seeds 10]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR

P, S, N = 20, 40, 100
SHARE = 0.25
N_TIERS = 4
N_DRAWS = 1000


def knowledge_of(adjacency: np.ndarray, seed: int) -> dict[str, dict]:
    """``{variant: ProDAG keyword arguments}`` for the dataset with truth ``adjacency``."""
    rng = np.random.default_rng(seed)
    p = len(adjacency)
    true_edges = np.argwhere(adjacency != 0)
    absent = np.argwhere((adjacency == 0) & ~np.eye(p, dtype=bool))
    required = true_edges[rng.choice(len(true_edges), round(SHARE * len(true_edges)),
                                     replace=False)]
    forbidden = absent[rng.choice(len(absent), round(SHARE * len(absent)), replace=False)]
    order = topological_order(adjacency)
    tiers = [list(map(int, chunk)) for chunk in np.array_split(order, N_TIERS)]
    return {"none": {},
            "edges": {"required": [tuple(map(int, e)) for e in required],
                      "forbidden": [tuple(map(int, e)) for e in forbidden]},
            "tiers": {"tiers": tiers}}


def topological_order(adjacency: np.ndarray) -> list[int]:
    import networkx as nx

    return list(nx.topological_sort(nx.DiGraph(np.asarray(adjacency != 0, dtype=int))))


def run_one(seed: int) -> list[dict]:
    from prodag import ProDAG, metrics, simulate
    from prodag.inputs.knowledge import Knowledge

    data = simulate.dataset(P, S, N, seed=seed)
    variants = knowledge_of(data.adjacency, seed)
    decided = Knowledge.create(range(P), **variants["edges"])
    constrained = decided.forbidden_mask() | decided.required_mask()
    open_pairs = ~(constrained | constrained.T) & ~np.eye(P, dtype=bool)
    rows = []
    for variant, knowledge in variants.items():
        start = time.perf_counter()
        estimator = ProDAG(seed=seed, progress=False, **knowledge).fit(data.X)
        seconds = time.perf_counter() - start
        samples = estimator.sample(N_DRAWS)
        scores = metrics.evaluate(data.adjacency, samples)
        broken = 0.0
        if estimator.knowledge_ is not None:
            present = samples != 0
            broken = float(np.mean(
                np.any(present & estimator.knowledge_.forbidden_mask(), axis=(1, 2))
                | np.any(~present & estimator.knowledge_.required_mask(), axis=(1, 2))))
        rows.append({"variant": variant, "seed": seed, "seconds": seconds,
                     **{k: float(scores[k]) for k in METRICS},
                     "eshd_open": metrics.expected_shd(data.adjacency, samples,
                                                       pairs=open_pairs),
                     "broken": broken})
        print(f"seed {seed} {variant:<6} " + " ".join(
            f"{k}={rows[-1][k]:.2f}" for k in (*METRICS, "eshd_open", "broken"))
            + f" {seconds:.1f}s", flush=True)
    return rows


def summarize(rows: list[dict]) -> dict:
    table = {}
    for variant in dict.fromkeys(row["variant"] for row in rows):
        group = [row for row in rows if row["variant"] == variant]
        table[variant] = {}
        for key in (*METRICS, "eshd_open", "broken", "seconds"):
            values = np.array([row[key] for row in group])
            table[variant][key] = {"mean": float(values.mean()),
                                   "se": float(values.std(ddof=1) / np.sqrt(len(values)))}
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    rows = [row for seed in range(args.seeds) for row in run_one(seed)]
    table = summarize(rows)
    columns = (*METRICS, "eshd_open", "broken", "seconds")
    titles = {**METRICS, "eshd_open": "E-SHD open", "broken": "broken", "seconds": "fit s"}
    print(f"{'variant':<8} " + " ".join(f"{titles[k]:>14}" for k in columns))
    for variant, entry in table.items():
        print(f"{variant:<8} " + " ".join(
            f"{entry[k]['mean']:6.1f} ± {entry[k]['se']:4.1f}" for k in columns))
    out = RESULTS_DIR / "knowledge.json"
    out.write_text(json.dumps({"settings": {"p": P, "s": S, "n": N, "share": SHARE,
                                            "tiers": N_TIERS, "seeds": args.seeds},
                               "summary": table, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""A public real table fitted as the README says, twice and in other units: the real-data
criterion of the sampler issue (seeds 0 and 1 within 0.3 of each other; the table ×1000 + 5
within 0.1 of it).

The table: scikit-learn's diabetes data (442 patients, 10 baseline variables and the
disease-progression outcome one year later; ``load_diabetes(scaled=False)``, the columns in
their original units), fitted with ``ProDAG(standardize=True, seed=s)`` and the library's
defaults otherwise (``prodag fit data.csv --standardize --seed s``). Three fits: seed 0, seed
1, and seed 0 on every column × 1000 + 5. Reported: max and mean |ΔP| between the seed-0 fit
and each other fit (1000 draws each), the edges beyond 0.3, each fit's seconds and its
largest mixture weight.

    PYTHONPATH=src python -m benchmarks.studies.real_table [--option name=value] [--tag TAG]

Writes ``benchmarks/results/real_table_diabetes[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from prodag import ProDAG
from prodag.config.parameters import nest
from prodag.evaluation.metrics import edge_probabilities

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options

N_DRAWS = 1000
THRESHOLD = 0.3


def diabetes():
    """The table as a DataFrame (442 × 11), columns in their original units."""
    from sklearn.datasets import load_diabetes

    return load_diabetes(scaled=False, as_frame=True).frame


def fit(frame, seed: int, options: dict) -> tuple[np.ndarray, dict]:
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = ProDAG(standardize=True, seed=seed, progress=False,
                           **nest(options)).fit(frame)
    seconds = time.perf_counter() - began
    P = edge_probabilities(estimator.sample(N_DRAWS))
    return P, {"seconds": seconds, "largest_weight": float(estimator.mixture_weights_.max()),
               "lam": float(estimator.lam_), "expected_edges": float(P.sum()),
               "stages_s": estimator.fit_seconds_}


def compared(P: np.ndarray, Q: np.ndarray, columns: list[str]) -> dict:
    difference = np.abs(P - Q)
    beyond = [{"source": columns[j], "target": columns[k], "p": float(P[j, k]),
               "other": float(Q[j, k])}
              for j, k in zip(*np.nonzero(difference > THRESHOLD))]
    off_diagonal = difference[~np.eye(len(columns), dtype=bool)]
    return {"max_dP": float(difference.max()), "mean_dP": float(off_diagonal.mean()),
            "beyond": beyond}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--option", action="append", default=[],
                        help="an estimator setting, name=value (repeatable)")
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    options = parse_options(args.option)
    frame = diabetes()
    columns = list(frame.columns)
    runs = {"seed 0": (frame, 0), "seed 1": (frame, 1), "×1000 + 5, seed 0": (frame * 1000 + 5, 0)}
    fits = {}
    for name, (table, seed) in runs.items():
        fits[name] = fit(table, seed, options)
        print(f"{name}: {fits[name][1]['seconds']:.1f} s, largest mixture weight "
              f"{fits[name][1]['largest_weight']:.3f}, λ {fits[name][1]['lam']:.2f}, "
              f"expected edges {fits[name][1]['expected_edges']:.1f}", flush=True)
    reference = fits["seed 0"][0]
    rows = {}
    for name in ("seed 1", "×1000 + 5, seed 0"):
        rows[name] = compared(reference, fits[name][0], columns)
        shown = ", ".join(f"{e['source']}->{e['target']} {e['p']:.2f}/{e['other']:.2f}"
                          for e in rows[name]["beyond"][:6])
        print(f"seed 0 against {name}: max |ΔP| {rows[name]['max_dP']:.3f}, mean "
              f"{rows[name]['mean_dP']:.4f}; beyond {THRESHOLD}: {len(rows[name]['beyond'])}"
              + (f" ({shown})" if shown else ""))
    out = RESULTS_DIR / ("real_table_diabetes" + (f"_{args.tag}" if args.tag else "") + ".json")
    out.write_text(json.dumps({"options": options, "columns": columns,
                               "fits": {name: info for name, (_, info) in fits.items()},
                               "compared_with_seed_0": rows,
                               "edge_probabilities": {name: P.round(4).tolist()
                                                      for name, (P, _) in fits.items()}},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

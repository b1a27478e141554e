"""Refit rows of a committed synthetic result file and compare: a refactor must change no number.

    python -m benchmarks.suite.reproduce                      # the additive SEM's row, dataset 1
    python -m benchmarks.suite.reproduce --file synthetic_mlp_er10_n100_additive.json --seed 0 1

Each row is refitted with the settings the file records, through the suite's own runner, in
this process and with XLA's default optimisation (the benchmarks' compiler settings). Prints
the committed and the refitted metrics side by side and exits with status 1 when any differs
by more than ``--tolerance``. A change meant to move the numbers re-runs the benchmark and
commits its new file instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks import RESULTS_DIR
from benchmarks.suite import synthetic

METRICS = ("brier", "eshd", "ef1", "auroc")
DEFAULT_FILE = "synthetic_mlp_er10_n100_additive.json"


def recorded_settings(stored: dict) -> synthetic.SyntheticSettings:
    """The ``SyntheticSettings`` a result file's ``settings`` block describes."""
    arguments = ["--sem", stored["sem"], "--graph", stored["graph"],
                 "--exponent", str(stored["exponent"]), "--p", str(stored["p"]),
                 "--s", str(stored["s"]), "--noise", stored["noise"],
                 "--projection", stored["projection"], "--lam", str(stored["lam"])]
    if stored.get("noise_variance") is not None:
        arguments += ["--noise-variance", str(stored["noise_variance"])]
    for option in stored.get("option", []):
        arguments += ["--option", option]
    if stored.get("no_validation_set"):
        arguments.append("--no-validation-set")
    return synthetic.settings_from_args(synthetic.parse_args(arguments))


def compare(file: str, seeds: list[int], tolerance: float) -> list[dict]:
    """One line per (seed, metric): the committed value, today's, and whether they match."""
    stored = json.loads((RESULTS_DIR / file).read_text())
    settings = recorded_settings(stored["settings"])
    lines = []
    for seed in seeds:
        expected = next(row for row in stored["rows"] if row["seed"] == seed)
        row = synthetic.run_one(settings, n=expected["n"], seed=seed)
        lines += [{"seed": seed, "metric": metric, "committed": expected[metric],
                   "today": row[metric],
                   "same": abs(row[metric] - expected[metric]) <= tolerance}
                  for metric in METRICS]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=DEFAULT_FILE,
                        help="a synthetic result file in benchmarks/results/")
    parser.add_argument("--seed", type=int, nargs="+", default=[1], help="its datasets to refit")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    lines = compare(args.file, args.seed, args.tolerance)
    print(f"{args.file}\n\n| dataset | metric | committed | today | same |\n|---|---|---|---|---|")
    for line in lines:
        print(f"| {line['seed']} | {line['metric']} | {line['committed']:.6g} | "
              f"{line['today']:.6g} | {'yes' if line['same'] else 'NO'} |")
    return 0 if all(line["same"] for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())

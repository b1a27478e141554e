"""What the ``prodag`` command's compilation cache saves a fit, by the smallest compile time
of a program it keeps (``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``).

The command keeps JAX's compiled programs in a folder between runs
(``prodag.cli.application.compilation_cache_dir``), except those that call the CPU order
search through ``jax.pure_callback``, which JAX cannot store. For each threshold of
``--thresholds`` this study fills an empty cache folder with one ``prodag fit`` of another
dataset of the same size (``simulate.dataset(p, 2p, n, seed=1)``), then times ``prodag fit``
of dataset 0 with that cache and with the cache off, alternating, ``--rounds`` times: the
fit's own seconds (``summary.json``'s ``fit_seconds``), the command's wall seconds, and the
size of the cache folder.

    PYTHONPATH=src python -m benchmarks.studies.cli_cache --p 20
    PYTHONPATH=src python -m benchmarks.studies.cli_cache --p 100 --thresholds 0 --rounds 2

Prints a row per run and writes ``benchmarks/results/cli_cache_p<p>[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import RESULTS_DIR
from .scale import simulated


def write_dataset(p: int, n: int, seed: int, folder: Path) -> Path:
    """The scale study's dataset ``seed`` (``simulated``) as a CSV file in ``folder``."""
    import pandas as pd

    X = simulated(p, n, seed).X
    path = folder / f"p{p}_n{n}_dataset{seed}.csv"
    pd.DataFrame(X, columns=[f"V{k}" for k in range(p)]).to_csv(path, index=False)
    return path


def fit(csv: Path, out: Path, cache: Path | None, threshold: float) -> dict:
    """``prodag fit csv --out out`` in a new process, with the cache folder ``cache`` (None:
    off) keeping programs that took at least ``threshold`` seconds to compile."""
    environment = dict(os.environ, PRODAG_COMPILATION_CACHE=str(cache) if cache else "off",
                       JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=str(threshold))
    environment.pop("JAX_COMPILATION_CACHE_DIR", None)
    command = [sys.executable, "-m", "prodag.cli", "fit", str(csv), "--out", str(out),
               "--no-progress"]
    began = time.perf_counter()
    subprocess.run(command, env=environment, check=True, capture_output=True)
    wall = time.perf_counter() - began
    summary = json.loads((out / "summary.json").read_text())
    size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) if cache else 0
    return {"fit_seconds": summary["fit_seconds"], "wall_seconds": wall,
            "cache_mb": size / 2 ** 20}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.0, 0.5])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        timed, filler = (write_dataset(args.p, args.n, seed, scratch) for seed in (0, 1))
        caches = {threshold: scratch / f"cache_{threshold}" for threshold in args.thresholds}
        for threshold, cache in caches.items():
            row = fit(filler, scratch / "out", cache, threshold)
            rows.append({"threshold": threshold, "run": "fill (dataset 1)", **row})
            print(f"threshold {threshold}: filled with dataset 1 in {row['fit_seconds']:.1f} s, "
                  f"cache {row['cache_mb']:.2f} MB", flush=True)
        for round_ in range(args.rounds):
            for threshold, cache in [(None, None), *caches.items()]:
                row = fit(timed, scratch / "out", cache, threshold or 0.0)
                rows.append({"threshold": threshold, "run": f"dataset 0, round {round_}", **row})
                name = "cache off" if cache is None else f"threshold {threshold}"
                print(f"round {round_} {name:>14}: fit {row['fit_seconds']:6.1f} s, wall "
                      f"{row['wall_seconds']:6.1f} s, cache {row['cache_mb']:.2f} MB",
                      flush=True)
    means = {}
    for threshold in [None, *args.thresholds]:
        runs = [r for r in rows if r["threshold"] == threshold and r["run"].startswith("dataset 0")]
        means[str(threshold)] = {k: statistics.mean(r[k] for r in runs)
                                 for k in ("fit_seconds", "wall_seconds")}
        print(f"{'cache off' if threshold is None else f'threshold {threshold}':>14}: "
              f"mean fit {means[str(threshold)]['fit_seconds']:.1f} s, wall "
              f"{means[str(threshold)]['wall_seconds']:.1f} s")
    load = os.getloadavg()[0]
    path = RESULTS_DIR / f"cli_cache_p{args.p}{'_' + args.tag if args.tag else ''}.json"
    path.write_text(json.dumps({"p": args.p, "n": args.n, "load": load, "rows": rows,
                                "mean": means}, indent=1))
    print(f"load {load:.2f}; wrote {path}")


if __name__ == "__main__":
    main()

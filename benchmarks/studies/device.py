"""CPU against accelerator: the projection, a default fit and members per second.

One script for a machine with a GPU (it runs on a CPU alone too, printing the CPU rows):

* projection (``method="auto"``, λ = ∞, prior-like input) at p = 20, 100, 400 and L = 100,
  1000 on every backend: the median of ``--repeats`` compiled calls;
* a default linear fit (p = 20 and 100, s = 2p, n = 100, simulated), the second in the
  process (compiles cached), on the default backend, and on the CPU for ``--cpu-fit-p``;
  on a GPU machine the CPU rows come from a second process (``JAX_PLATFORMS=cpu``, so the
  projection takes its CPU kernel) that runs alongside;
* members per second: a batch of M one-radius members (p = 20, L = 100, 20 epochs, no
  early stopping) on every backend, for M = 1, 2, 4, ... ``--members``.

Every section stops starting new rows once ``--budget`` seconds have passed. Prints a table
per section and writes ``benchmarks/results/device_<device>.json`` (and a copy to ``--out``)
anew after each row, with the CPU process's rows so far, so a run cut short keeps its rows.

    PYTHONPATH=src python -m benchmarks.studies.device              # all sections
    PYTHONPATH=src python -m benchmarks.studies.device --quick      # small sizes, a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .. import RESULTS_DIR


def device_name() -> str:
    """This process's first device in words (its kind, e.g. 'NVIDIA H200')."""
    return getattr(jax.devices()[0], "device_kind", "") or jax.default_backend()


def timed(function, repeats: int) -> float:
    """Median seconds of ``repeats`` calls of ``function`` (after one that compiles)."""
    jax.block_until_ready(function())
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        jax.block_until_ready(function())
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def projection_rows(rows: list, sizes, samples, repeats, deadline) -> list[dict]:
    from prodag.projection import project

    backend = jax.default_backend()
    run = jax.jit(lambda W: project(W, jnp.inf))
    for p in sizes:
        for L in samples:
            if time.perf_counter() > deadline:
                return rows
            rng = np.random.default_rng(0)
            W = rng.normal(size=(L, p, p)).astype(np.float32)
            W[:, np.arange(p), np.arange(p)] = 0.0
            W = jax.device_put(W)
            seconds = timed(lambda: run(W), repeats)
            rows.append({"backend": backend, "p": p, "L": L, "ms": 1e3 * seconds})
            print(f"projection {backend:>4} p={p:<4} L={L:<5} {1e3 * seconds:9.2f} ms",
                  flush=True)
    return rows


def fit_rows(rows: list, sizes, deadline, repeats=2) -> list[dict]:
    from prodag import ProDAG, metrics, simulate

    backend = jax.default_backend()
    for p in sizes:
        if time.perf_counter() > deadline:
            return rows
        data = simulate.dataset(p, 2 * p, 100, seed=0)
        seconds = []
        for seed in (1, 0)[:repeats]:  # the first compiles
            began = time.perf_counter()
            estimator = ProDAG(seed=seed, progress=False).fit(data.X)
            seconds.append(time.perf_counter() - began)
        scores = metrics.evaluate(data.adjacency, estimator.sample(1000))
        rows.append({"backend": backend, "p": p, "first_s": seconds[0],
                     "second_s": seconds[-1] if len(seconds) > 1 else None,
                     "stages_s": estimator.fit_seconds_,
                     **{k: float(v) for k, v in scores.items()}})
        print(f"default fit {backend:>4} p={p:<4} first {seconds[0]:7.1f} s"
              + (f", second {seconds[1]:7.1f} s" if len(seconds) > 1 else "")
              + f"; Brier {scores['brier']:.2f}, E-SHD {scores['eshd']:.2f}, "
              f"AUROC {scores['auroc']:.1f}", flush=True)
        print("  stages of the last: " + "; ".join(
            f"{stage} {value:.1f} s" for stage, value in estimator.fit_seconds_.items()),
            flush=True)
    return rows


def member_rows(rows: list, counts, deadline, p=20, epochs=20) -> list[dict]:
    """A batch of M one-radius members (p = 20, L = 100, ``epochs`` epochs each), M in
    ``counts`` (the first is the unit): on a CPU one member at a time and all at once (vmap),
    on a GPU all at once."""
    from prodag import simulate
    from prodag.config.spec import ModelConfig, OptimiserOptions
    from prodag.inference import stack
    from prodag.inference.compiled import variational_inference

    data = simulate.dataset(p, 2 * p, 100, seed=0).X
    Z = (data - data.mean(0)) / data.std(0)
    config = ModelConfig.create("linear", 10, 1, "sigmoid", True, "auto", 0.0)
    backend = jax.default_backend()
    for batch in ([1, 0] if backend == "cpu" else [0]):
        options = OptimiserOptions(max_epochs=epochs, patience=10 ** 6, lr=0.03,
                                   member_batch=batch)
        engine = variational_inference(config.model(), config.projector(), options)
        start = engine.init_params(p, np.ones(1), jnp.float32)
        prepared = stack([engine.model.prepare_data(jnp.asarray(Z, jnp.float32))])
        one = None
        for M in counts:
            if time.perf_counter() > deadline:
                break
            members = engine.members([5.0] * M, np.ones(1), [0] * M, [100] * M, jnp.float32)
            keys = jax.random.split(jax.random.PRNGKey(0), M)
            engine.fit_members([start] * M, keys, members, prepared)  # compiles
            began = time.perf_counter()
            engine.fit_members([start] * M, keys, members, prepared)
            seconds = time.perf_counter() - began
            one = seconds if one is None else one
            rows.append({"backend": backend, "members": M, "member_batch": batch,
                         "seconds": seconds, "relative_to_one": seconds / one,
                         "members_per_second": M / seconds})
            print(f"members {backend:>4} batch={batch} M={M:<3} {seconds:7.2f} s "
                  f"({seconds / one:5.2f}x one member; {M / seconds:6.2f} members/s)",
                  flush=True)
    return rows


def doubling(most: int) -> list[int]:
    """1, 2, 4, ... up to ``most``."""
    return [2 ** k for k in range(most.bit_length()) if 2 ** k <= most]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--sections", nargs="+", default=["projection", "members", "fit"],
                        choices=["projection", "members", "fit"])
    parser.add_argument("--fit-p", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--cpu-fit-p", type=int, nargs="+", default=[20])
    parser.add_argument("--members", type=int, default=32)
    parser.add_argument("--fit-repeats", type=int, default=2, choices=(1, 2),
                        help="fits per size: 2 times the second (warm) one")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds after which no new row starts")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    parser.add_argument("--tag", default="", help="suffix of the results file's name")
    parser.add_argument("--search-unroll", type=int, default=None,
                        help="the pure-JAX search's loop unrolling (projection.search.LOOP_UNROLL)")
    parser.add_argument("--no-cpu", action="store_true",
                        help="on a GPU machine, no CPU rows (a second process makes them)")
    parser.add_argument("--json", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.fit_p, args.cpu_fit_p, args.members, args.repeats = [10], [10], 4, 2
    if args.search_unroll is not None:
        from prodag.projection import search
        search.LOOP_UNROLL = args.search_unroll
    deadline = time.perf_counter() + args.budget
    cpu_process = None
    if jax.default_backend() != "cpu" and not args.no_cpu:  # the CPU rows, alongside
        cpu_json = Path(tempfile.mkdtemp()) / "cpu.json"
        cpu_process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.studies.device", "--no-cpu", "--json", str(cpu_json),
             "--budget", str(args.budget), "--members", str(args.members),
             "--repeats", str(args.repeats), "--fit-p", *map(str, args.cpu_fit_p),
             "--sections", *args.sections,
             "--cpu-fit-p", *map(str, args.cpu_fit_p), *(["--quick"] if args.quick else [])],
            env={**os.environ, "JAX_PLATFORMS": "cpu"})
    result = {"devices": {jax.default_backend(): device_name()},
              "jax": jax.__version__, "machine": platform.processor() or platform.machine(),
              "settings": {k: (str(v) if isinstance(v, Path) else v)
                           for k, v in vars(args).items()}}
    sizes = ([20, 100] if args.quick else [20, 100, 400], [100, 1000])
    sections = {"projection": lambda rows: projection_rows(rows, *sizes, args.repeats, deadline),
                "members": lambda rows: member_rows(rows, doubling(args.members), deadline),
                "fit": lambda rows: fit_rows(rows, args.fit_p, deadline, args.fit_repeats)}
    for section in args.sections:
        sections[section](result.setdefault(section, SavedRows(
            lambda: save(result, args, cpu_process, wait=False))))
    save(result, args, cpu_process)


class SavedRows(list):
    """Rows that write the results file whenever one is added, so a run cut short keeps them."""

    def __init__(self, on_append):
        super().__init__()
        self.on_append = on_append

    def append(self, row) -> None:
        super().append(row)
        self.on_append()


def save(result: dict, args, cpu_process, wait: bool = True) -> None:
    """Write the rows so far, with the CPU half's rows so far (if any); ``wait``: once the
    CPU half has ended."""
    if args.json is not None:  # the CPU half of a GPU machine's run
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        return
    result = {**result}
    if cpu_process is not None:
        if wait:
            cpu_process.wait()
        cpu_json = Path(cpu_process.args[cpu_process.args.index("--json") + 1])
        try:
            cpu = json.loads(cpu_json.read_text())
        except (OSError, ValueError):  # not written yet, or caught mid-write
            cpu = {"devices": {}}
        result["devices"] = {**result["devices"], **cpu["devices"]}
        for section in ("projection", "members", "fit"):
            result[section] = [*result.get(section, []), *cpu.get(section, [])]
    name = re.sub(r"[^A-Za-z0-9]+", "-", device_name()).strip("-").lower()
    text = json.dumps(result, indent=1) + "\n"
    suffix = "".join(f"_{part}" for part in (args.quick and "quick", args.tag) if part)
    out = RESULTS_DIR / f"device_{name}{suffix}.json"
    out.write_text(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / out.name).write_text(text)
    if wait and (cpu_process is not None or jax.default_backend() == "cpu"):
        print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Compile settings for a GPU, against each other: XLA's command buffers (CUDA graphs) for
loops, and the pure-JAX search's loop unrolling (``prodag.projection.search.LOOP_UNROLL``).

On a GPU a fit is bound by latency: every trip of a compiled loop (the search's sweeps and
node visits inside every projection, inside every Adam step) costs kernel launches and a
round trip to the host for the loop's condition. Command buffers that include ``WHILE`` and
``CONDITIONAL`` keep whole loops on the device; unrolling makes fewer, longer trips. Each
variant runs in its own process (``XLA_FLAGS`` are read once per process) and measures the
projection (p = 20 and 100, L = 100) and a batch of one-radius members (p = 20, M = 1 and 32,
``benchmarks.studies.device.member_rows``). The variant with the fastest 32 members is the
best; with ``--fit-p``, ``benchmarks.studies.device``'s default fits then run under it (and
under the default settings, for comparison, while ``--budget`` lasts). Every variant's
answers are checked against the default's: the same orders from the projection.

    PYTHONPATH=src python -m benchmarks.studies.device_variants --fit-p 20 100

Prints a table and writes ``benchmarks/results/device_variants_<device>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .. import RESULTS_DIR

COMMAND_BUFFERS = ("--xla_gpu_enable_command_buffer="
                   "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,CONDITIONAL,WHILE")
VARIANTS = {
    "default": ("", 1),
    "command-buffers": (COMMAND_BUFFERS, 1),
    "unroll-5": ("", 5),
    "command-buffers-and-unroll-5": (COMMAND_BUFFERS, 5),
}
"""Name: (XLA flags added, the search's loop unrolling)."""


def worker(unroll: int, counts: list[int], repeats: int) -> dict:
    """This process's rows: the projection's milliseconds and the members' seconds."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from prodag.projection import project, search

    from .device import device_name, member_rows, timed

    search.LOOP_UNROLL = unroll
    run = jax.jit(lambda W: project(W, jnp.inf))
    projection, orders = {}, {}
    for p in (20, 100):
        rng = np.random.default_rng(0)
        W = rng.normal(size=(100, p, p)).astype(np.float32)
        W[:, np.arange(p), np.arange(p)] = 0.0
        W = jax.device_put(W)
        projection[p] = 1e3 * timed(lambda: run(W), repeats)
        orders[p] = np.asarray(run(W) != 0).tolist()  # the support: equal across variants
    members = member_rows([], counts, time.perf_counter() + 1e6)
    return {"device": device_name(), "projection_ms": projection, "support": orders,
            "members_s": {row["members"]: row["seconds"] for row in members}}


def run_variant(name: str, counts: list[int], repeats: int, timeout: float) -> dict:
    """One variant in a process of its own: its rows, or why it has none."""
    flags, unroll = VARIANTS[name]
    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()}
    command = [sys.executable, "-m", "benchmarks.studies.device_variants", "--worker",
               str(unroll), "--counts", *map(str, counts), "--repeats", str(repeats)]
    began = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return {**json.loads(lines[-1]), "process_s": time.perf_counter() - began}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per variant")
    parser.add_argument("--fit-p", type=int, nargs="*", default=[])
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds after which no new fit starts")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.counts, args.repeats)), flush=True)
        return
    deadline = time.perf_counter() + args.budget
    rows = {}
    for name in args.variants:
        rows[name] = run_variant(name, args.counts, args.repeats, args.timeout)
        print(line_of(name, rows[name], rows.get("default")), flush=True)
    measured = {name: row for name, row in rows.items() if "error" not in row}
    most = str(max(args.counts))
    best = min(measured, key=lambda name: measured[name]["members_s"].get(most, float("inf")),
               default="default")
    print(f"best: {best}", flush=True)
    result = {"variants": {name: {"xla_flags": VARIANTS[name][0], "unroll": VARIANTS[name][1],
                                  **row} for name, row in rows.items()},
              "best": best, "settings": {k: str(v) for k, v in vars(args).items()}}
    device = next((row["device"] for row in measured.values()), "unknown")
    out = save(result, device, args.out)
    for name in dict.fromkeys([best, "default"]):
        if args.fit_p and time.perf_counter() < deadline:
            flags, unroll = VARIANTS[name]
            env = {**os.environ,
                   "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()}
            subprocess.run([sys.executable, "-m", "benchmarks.studies.device", "--sections",
                            "fit", "--no-cpu", "--fit-p", *map(str, args.fit_p),
                            "--search-unroll", str(unroll), "--tag", name,
                            "--budget", str(max(deadline - time.perf_counter(), 1.0)),
                            *(["--out", str(args.out)] if args.out else [])], env=env)
    print(f"wrote {out}")


def line_of(name: str, row: dict, default: dict | None) -> str:
    """One variant's row of the printed table."""
    if "error" in row:
        return f"{name:<26} failed: {row['error']}"
    same = ("" if default is None or "error" in default else
            "; same supports as the default" if row["support"] == default["support"] else
            "; SUPPORTS DIFFER from the default")
    projection = ", ".join(f"p={p} {ms:.2f} ms" for p, ms in row["projection_ms"].items())
    members = ", ".join(f"M={m} {s:.3f} s" for m, s in row["members_s"].items())
    return f"{name:<26} projection {projection}; members {members}{same}"


def save(result: dict, device: str, also: Path | None) -> Path:
    """Write the JSON (without the supports) under ``RESULTS_DIR`` and to ``also``."""
    import re

    for row in result["variants"].values():
        row.pop("support", None)
    name = re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower()
    out = RESULTS_DIR / f"device_variants_{name}.json"
    text = json.dumps(result, indent=1) + "\n"
    out.write_text(text)
    if also is not None:
        also.mkdir(parents=True, exist_ok=True)
        (also / out.name).write_text(text)
    return out


if __name__ == "__main__":
    main()

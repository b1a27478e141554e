"""XLA's CPU compile settings for the fit's compiled programs: what each costs to compile and
to run.

A fit compiles its training loop (``prodag.inference.kernels.run_epochs``) once per number of
members and its scoring program (``negative_elbos``) once per padded count, so a cold fit
with several batch sizes spends a large share of its time compiling (the Sachs demo: 41 s of
131 s on two cores). ``xla_backend_optimization_level`` sets how hard LLVM optimises the CPU
code, and ``xla_cpu_use_fusion_emitters`` whether XLA's newer fusion code generators are
used. This study compiles both programs under each variant of ``VARIANTS`` (a fresh
``jax.jit`` each time, the variants taken in turn, ``--repeats`` rounds) and runs the loop for
``--epochs`` epochs: the seconds to lower and compile, the seconds per epoch afterwards
(median of the rounds), and how far each variant's parameters after those epochs lie from
the default's (the numbers may differ at the last bits where the code reorders arithmetic).

    PYTHONPATH=src python -m benchmarks.studies.compile_options
    PYTHONPATH=src python -m benchmarks.studies.compile_options --case 11:180:linear --variants default level2

Prints a row per case and variant and writes ``benchmarks/results/compile_options[_tag].json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from prodag import simulate
from prodag.config.spec import ModelConfig, OptimiserOptions
from prodag.inference import stack
from prodag.inference.compiled import variational_inference
from prodag.inference.kernels import negative_elbos, run_epochs

from .. import RESULTS_DIR

CASES = ("11:72:linear", "11:180:linear", "20:24:linear", "100:4:linear", "11:24:additive")
"""``p:members:sem``: the Sachs demo's two batch sizes, a default fit at p = 20 (2 chains ×
12 radii), p = 100 and the additive SEM."""


VARIANTS = {
    "default": {},
    "level2": {"xla_backend_optimization_level": 2},
    "no-fusion-emitters": {"xla_cpu_use_fusion_emitters": False},
    "level2-no-fusion-emitters": {"xla_backend_optimization_level": 2,
                                  "xla_cpu_use_fusion_emitters": False},
}
"""Name: the compiler options (``jax.jit(..., compiler_options=...)``); ``default``: XLA's."""


def programs(case: str, compiler_options: dict):
    """The engine's training loop and scoring program for ``case``, compiled with
    ``compiler_options``, with their arguments."""
    p, n_members, sem = case.split(":")
    p, n_members = int(p), int(n_members)
    X = simulate.dataset(p, 2 * p, 500, seed=0).X
    Z = (X - X.mean(0)) / X.std(0)
    config = ModelConfig.create(sem, 10, 1, "sigmoid", True, "auto", 0.1)
    options = OptimiserOptions(n_samples=100, patience=10 ** 6)
    engine = variational_inference(config.model(), config.projector(), options)
    noise = np.ones(p)
    start = engine.init_params(p, noise, jnp.float32)
    data = stack([engine.model.prepare_data(jnp.asarray(Z, jnp.float32))])
    members = engine.members(np.linspace(1.0, 2.0 * p, n_members), noise, [0] * n_members,
                             [len(Z)] * n_members, jnp.float32)
    keys = jax.random.split(jax.random.PRNGKey(0), n_members)
    state = engine.kernels.init(stack([start] * n_members), keys, options.max_epochs)
    compiler_options = compiler_options or None
    loop = jax.jit(functools.partial(run_epochs, engine.kernels.loss, engine.kernels.optimizer,
                                     options),
                   compiler_options=compiler_options)
    scores = jax.jit(functools.partial(negative_elbos, engine.kernels.loss, 0),
                     compiler_options=compiler_options)
    score_keys = jax.vmap(lambda key: jax.random.split(key, 10))(keys)
    return loop, (state, members, data), scores, (state.params, score_keys, members, data)


def measure(case: str, variant: str, epochs: int) -> dict:
    """One round of ``case`` under ``variant``: compile seconds of both programs, seconds per
    epoch, and the parameters after ``epochs`` epochs."""
    loop, (state, members, data), scores, score_args = programs(case, VARIANTS[variant])
    with jax.default_matmul_precision("highest"):
        began = time.perf_counter()
        compiled = loop.lower(state, members, data, jnp.asarray(1)).compile()
        loop_compile = time.perf_counter() - began
        began = time.perf_counter()
        scorer = scores.lower(*score_args).compile()
        score_compile = time.perf_counter() - began
        state = compiled(state, members, data, jnp.asarray(1))
        jax.block_until_ready(state)
        began = time.perf_counter()
        state = compiled(state, members, data, jnp.asarray(1 + epochs))
        jax.block_until_ready(state)
        per_epoch = (time.perf_counter() - began) / epochs
        began = time.perf_counter()
        jax.block_until_ready(scorer(*score_args))
        score_seconds = time.perf_counter() - began
    return {"loop_compile": loop_compile, "score_compile": score_compile,
            "per_epoch": per_epoch, "score_seconds": score_seconds,
            "params": np.concatenate([np.ravel(x) for x in jax.tree.leaves(state.params)])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", nargs="+", default=list(CASES), help="p:members:sem")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'case':>16} {'variant':>26} {'loop compile':>12} {'score compile':>13} "
          f"{'s/epoch':>8} {'scoring':>8} {'max |Δ|':>8}", flush=True)
    for case in args.case:
        rounds = {variant: [] for variant in args.variants}
        for _ in range(args.repeats):
            for variant in args.variants:
                rounds[variant].append(measure(case, variant, args.epochs))
        reference = rounds["default"][0]["params"] if "default" in rounds else None
        for variant, measured in rounds.items():
            row = {"case": case, "variant": variant, "compiler_options": VARIANTS[variant],
                   "repeats": args.repeats, "epochs": args.epochs}
            for name in ("loop_compile", "score_compile", "per_epoch", "score_seconds"):
                row[name] = statistics.median(m[name] for m in measured)
            row["max_abs_difference_vs_default"] = (
                None if reference is None else
                float(np.max(np.abs(measured[0]["params"] - reference))))
            rows.append(row)
            difference = ("-" if row["max_abs_difference_vs_default"] is None
                          else f"{row['max_abs_difference_vs_default']:.1e}")
            print(f"{case:>16} {variant:>26} {row['loop_compile']:11.2f}s "
                  f"{row['score_compile']:12.2f}s {row['per_epoch']:7.3f}s "
                  f"{row['score_seconds']:7.3f}s {difference:>8}", flush=True)
    name = "compile_options" + (f"_{args.tag}" if args.tag else "") + ".json"
    (RESULTS_DIR / name).write_text(json.dumps(
        {"command": "python -m benchmarks.studies.compile_options", "args": vars(args),
         "backend": jax.default_backend(), "rows": rows}, indent=1))
    print(f"wrote {RESULTS_DIR / name}")


if __name__ == "__main__":
    main()

"""How the library compiles its JAX programs with XLA (imports JAX only when one is compiled);
the kernels compiled with numba use ``prodag.numba_jit``."""

from __future__ import annotations

import os

CPU_COMPILER_OPTIONS = {"xla_backend_optimization_level": 2,
                        "xla_cpu_use_fusion_emitters": False}
"""XLA's options for the library's programs on the CPU backend: LLVM at optimisation level 2
(XLA's default is 3) and the older fusion code generators. The training loop and the
scoring program compile three to four times faster and run as fast
(``benchmarks/studies/compile_options.py``, ``docs/findings.md``); a cold fit compiles one
program per batch size, so that is seconds per fit. An option that ``XLA_FLAGS`` set is left
to them."""


def power_of_two(n: int) -> int:
    """The smallest power of two that holds ``n`` (1 for ``n ≤ 1``): sizes padded to it reuse
    one compiled program for every count up to it."""
    return 1 << max(n - 1, 0).bit_length()


def program_options(options: dict | None = None) -> dict | None:
    """The XLA compiler options of one of the library's programs: ``options`` (they win), and
    on the CPU backend ``CPU_COMPILER_OPTIONS`` except those ``XLA_FLAGS`` set."""
    import jax

    options = dict(options or {})
    if jax.default_backend() == "cpu":
        flags = os.environ.get("XLA_FLAGS", "")
        for name, value in CPU_COMPILER_OPTIONS.items():
            if name not in flags:
                options.setdefault(name, value)
    return options or None


def exact_jit(function, compiler_options: dict | None = None, **options):
    """``jax.jit(function, **options)`` with ``program_options(compiler_options)``, traced with
    full float32 matrix products. An accelerator's default precision (TF32 on recent NVIDIA
    GPUs) rounds the products' inputs to 10 bits of mantissa: enough to move a likelihood
    built from Gram matrices and with it the fit; on a CPU the products are exact either way."""
    import functools

    import jax

    compiled = jax.jit(function, compiler_options=program_options(compiler_options), **options)

    @functools.wraps(function)
    def run(*args, **kwargs):
        with jax.default_matmul_precision("highest"):
            return compiled(*args, **kwargs)

    return run

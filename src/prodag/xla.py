"""How the library compiles its JAX programs (imports JAX only when one is compiled)."""

from __future__ import annotations


def exact_jit(function, **options):
    """``jax.jit(function, **options)``, traced with full float32 matrix products. An
    accelerator's default precision (TF32 on recent NVIDIA GPUs) rounds the products'
    inputs to 10 bits of mantissa: enough to move a likelihood built from Gram matrices and
    with it the fit; on a CPU the products are exact either way."""
    import functools

    import jax

    compiled = jax.jit(function, **options)

    @functools.wraps(function)
    def run(*args, **kwargs):
        with jax.default_matmul_precision("highest"):
            return compiled(*args, **kwargs)

    return run

"""numba where it is installed, shared by the compiled kernels (``prodag.order_search``,
``prodag.projection.search_kernel``): ``numba`` is the module, or None without it, and
``njit`` compiles a function (cached on disk, releasing the GIL) or, without numba, returns it
unchanged to run as plain Python."""

from __future__ import annotations

try:
    import numba
except ImportError:  # callers fall back to plain Python or to JAX
    numba = None


def njit(function):
    """``function`` compiled by numba (``cache=True, nogil=True``), or itself without numba."""
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


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

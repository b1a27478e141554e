"""numba where it is installed, shared by the kernels compiled with numba
(``prodag.inference.parent_selection``, ``prodag.projection.search_kernel`` and
``search_kernel_sparse``, called through ``host_search``): ``numba`` is the module, or None
without it, and ``njit`` compiles a function (cached on disk, releasing the GIL) or, without
numba, returns it unchanged to run as plain Python. JAX's programs compile
through ``prodag.xla`` instead."""

from __future__ import annotations

try:
    import numba
except ImportError:  # callers fall back to plain Python or to JAX
    numba = None


def njit(function):
    """``function`` compiled by numba (``cache=True, nogil=True``), or itself without numba."""
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


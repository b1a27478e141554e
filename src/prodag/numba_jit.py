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


def _lowest_bit_python(word):
    """The index of the lowest set bit of a nonzero ``word``."""
    word = int(word)
    return (word & -word).bit_length() - 1


if numba is not None:
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def lowest_bit(typingctx, word):
        """The index of the lowest set bit of a nonzero ``uint64`` ``word`` (one instruction:
        LLVM's count of trailing zeros), for the kernels that walk bit sets of places."""
        if word != types.uint64:
            return None

        def codegen(context, builder, signature, args):
            return builder.cttz(args[0], cgutils.true_bit)

        return types.uint64(types.uint64), codegen
else:
    lowest_bit = _lowest_bit_python

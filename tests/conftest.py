"""Test-session settings for JAX, set before JAX is imported (the test modules import it).

* On an accelerator, matrix products are full float32 (its default, TF32 on recent NVIDIA
  GPUs, rounds them beyond the oracles' tolerances; the library's compiled kernels ask for
  full precision themselves, ``prodag.xla``), and no process allocates the accelerator's
  memory up front (the parallel workers share it).
* On the CPU backend, XLA compiles the tests' programs with its cheapest optimisation: the tests' fits are tiny
  (a few variables, a few epochs), so their time goes into compiling the training loop, not
  running it, and LLVM's expensive passes do not pay for themselves there. For the same
  reason the CPU backend's fusion emitters are off and its code generation runs in one
  piece (docs/findings.md). An ``XLA_FLAGS`` of the caller's is kept and wins.
* One persistent compilation cache for the whole run: the parallel workers and the command
  line's subprocesses each start a fresh process, and most of them compile the same small
  fits; with a shared cache each program is compiled once per run. The folder is made by
  the first process (the one that starts the workers) and removed when it exits; a
  ``JAX_COMPILATION_CACHE_DIR`` of the caller's is used as it is and kept.
* The refinement's step loop compiles with the same fast flags as the rest: the library asks
  for XLA's full optimisation there (``refinement.FULLY_OPTIMISED``), which pays for itself
  over hundreds of steps of a thousand draws but not in the suite's tiny fits (at p = 3, 7 s
  to compile a default fit's refinement against 2 s with the fast flags).
* The suite's own fits refine by at most ``SUITE_REFINE_STEPS`` default steps: below p = 20
  the default grows to ``MAX_AUTO_REFINE_STEPS`` (6000 at p ≤ 5), and even the p = 20
  default's 375 (``AUTO_REFINE_STEPS``) took a third of the suite's time (81 default fits,
  about 2 s each at p = 5 on two cores). One block of ``refinement.STEPS_PER_CALL`` (100)
  steps still runs every default fit through the refinement; the tests that need the
  refinement to converge ask for their steps themselves. The tests of
  the rule ask for the library's cap (``library_refinement_cap``), and the command-line
  tests that run in a subprocess get it as it is.
* The suite's fits keep their stopped members in the batch to the end of a stage: the
  library moves the running members to a smaller batch as others stop
  (``engine.compacted_size``), which saves arithmetic at scale but compiles the training loop
  once more for every smaller size, and in the suite's tiny fits the compiling is the cost
  (docs/findings.md, 2026-11-30). A stopped member's state is final either way (the loop
  leaves it be), so the fits are the same up to XLA's rounding of a batch of another shape.
  The tests of the shrinking batch ask for it (``shrinking_batches``); subprocesses keep the
  library's rule.
"""

import atexit
import os
import shutil
import tempfile

import pytest

SUITE_REFINE_STEPS = 100
"""The suite's cap on a fit's default refinement steps (module docstring): one block of
``prodag.inference.refinement.STEPS_PER_CALL``."""

FAST_COMPILE = ("--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
                "--xla_cpu_use_fusion_emitters=false --xla_cpu_parallel_codegen_split_count=1")



def _runs_on_cpu() -> bool:
    """Whether JAX will run on the CPU: ``JAX_PLATFORMS`` says so, or no GPU and no CUDA
    plugin is present (asked without starting JAX, whose flags must be set first)."""
    import glob
    from importlib.util import find_spec

    platforms = os.environ.get("JAX_PLATFORMS", "")
    if platforms:
        return platforms.split(",")[0].strip() == "cpu"
    plugin = any(find_spec(name) is not None
                 for name in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin"))
    return not (plugin and (glob.glob("/dev/nvidia[0-9]*") or shutil.which("nvidia-smi")))


if _runs_on_cpu():  # the flags are the CPU backend's; elsewhere they are not needed
    os.environ["XLA_FLAGS"] = f"{FAST_COMPILE} {os.environ.get('XLA_FLAGS', '')}".strip()
else:  # the tests' oracles are float32-exact: no TF32 products in their eager calls either;
    # the parallel workers share the accelerator: none may take most of its memory up front
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="prodag-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
# cache every program, however quick to compile: the tests' programs are all small
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
# numba compiles the order-search kernels at LLVM level 1 here: about a quarter less compile
# time per kernel (dense 12 → 9 s, neighbour lists 8.3 → 6.7 s on an empty cache), the same
# arithmetic (no fast-math at any level) and the same speed on the tests' small problems
os.environ.setdefault("NUMBA_OPT", "1")


@pytest.fixture(scope="session", autouse=True)
def whole_batches():
    """The suite's fits keep every member in its batch to the end (module docstring); yields
    the library's ``compacted_size``."""
    from prodag.inference import engine

    library = engine.compacted_size
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "compacted_size", lambda n_running, batch_size: batch_size)
        yield library


@pytest.fixture
def shrinking_batches(whole_batches, monkeypatch):
    """The library's shrinking batches for one test (``whole_batches`` keeps them whole)."""
    from prodag.inference import engine

    monkeypatch.setattr(engine, "compacted_size", whole_batches)


@pytest.fixture(scope="session", autouse=True)
def library_refinement_cap():
    """The library's ``MAX_AUTO_REFINE_STEPS``, while the suite's fits use
    ``SUITE_REFINE_STEPS`` as the cap and, on the CPU, the fast compile flags for the
    refinement too (module docstring)."""
    from prodag.config import spec
    from prodag.inference import refinement

    library = spec.MAX_AUTO_REFINE_STEPS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spec, "MAX_AUTO_REFINE_STEPS", SUITE_REFINE_STEPS)
        if _runs_on_cpu():
            patch.setattr(refinement, "FULLY_OPTIMISED", {})
        yield library

"""Test-session settings: XLA compiles the tests' programs with its cheapest optimisation.

The tests' fits are tiny (a few variables, a few epochs), so their time goes into compiling
the training loop, not running it; LLVM's expensive passes do not pay for themselves there.
Set before JAX is imported (the test modules import it); an ``XLA_FLAGS`` of the caller's is
kept and wins.
"""

import os

FAST_COMPILE = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"

os.environ["XLA_FLAGS"] = f"{FAST_COMPILE} {os.environ.get('XLA_FLAGS', '')}".strip()

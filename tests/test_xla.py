"""``prodag.xla``: the compiler options of the library's programs."""

import jax
import jax.numpy as jnp
import numpy as np

from prodag import xla


def test_the_cpu_options_apply_except_where_xla_flags_or_the_caller_set_them(monkeypatch):
    """On the CPU backend every program gets ``CPU_COMPILER_OPTIONS``; an option named in
    ``XLA_FLAGS`` is left to them, and a caller's own options win; elsewhere only the
    caller's apply."""
    on_cpu = jax.default_backend() == "cpu"
    monkeypatch.setenv("XLA_FLAGS", "")
    assert xla.program_options() == (xla.CPU_COMPILER_OPTIONS if on_cpu else None)
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    assert "xla_backend_optimization_level" not in (xla.program_options() or {})
    mine = {"xla_backend_optimization_level": 3}
    assert xla.program_options(mine)["xla_backend_optimization_level"] == 3
    monkeypatch.setenv("XLA_FLAGS", "")
    assert xla.program_options(mine)["xla_backend_optimization_level"] == 3
    if on_cpu:
        assert (xla.program_options(mine)["xla_cpu_use_fusion_emitters"]
                == xla.CPU_COMPILER_OPTIONS["xla_cpu_use_fusion_emitters"])


def test_a_program_compiled_with_the_cpu_options_computes_what_xla_defaults_compute(
        monkeypatch):
    """The options change how the code is generated, not what it computes: a reduction, a
    matrix product and a loop agree with the same program compiled without them."""
    def program(x):
        y = jnp.tanh(x @ x.T) + jnp.cumsum(x, axis=1)
        return jax.lax.fori_loop(0, 5, lambda _, z: z * 0.5 + jnp.sin(z), y).sum(axis=0)

    x = np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32)
    monkeypatch.setenv("XLA_FLAGS", "")
    ours = xla.exact_jit(program)(x)
    theirs = jax.jit(program)(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)

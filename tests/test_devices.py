"""Members of a batched fit laid out over several devices (two CPU devices forced by
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` in a subprocess, since the flag must
be set before JAX starts): the same fits as on one device."""

import json
import os
import subprocess
import sys

SCRIPT = """
import json
from functools import partial
import jax, jax.numpy as jnp, numpy as np
from prodag.config.spec import OptimiserOptions
from prodag.inference import stack
from prodag.inference.compiled import jit_refinement, variational_inference
from prodag.models import LinearSEM
from prodag.projection import project
rng = np.random.default_rng(0)
X = rng.standard_normal((60, 3))
X[:, 1] += 0.8 * X[:, 0]
engine = variational_inference(LinearSEM(), partial(project, method="exact"),
                               OptimiserOptions(n_samples=8, max_epochs=15, patience=3,
                                                steps_per_epoch=3, member_batch=0))
noise = np.ones(3, np.float32)
start = engine.init_params(3, noise)
members = engine.members([np.inf, 2.0, 0.5], noise, [0] * 3, [60] * 3, jnp.float32)
data = stack([LinearSEM().prepare_data(jnp.asarray(X, jnp.float32))])
fits = engine.fit_members([start] * 3, jax.random.split(jax.random.PRNGKey(0), 3), members, data)
from prodag.inference.refinement import Target, build_kernel, refine
kernel = jit_refinement(build_kernel(LinearSEM(), partial(project, method="exact")))
refined = {}
for n in (6, 5):  # 6 split evenly; 5 padded to 6 with a copy of the last draw
    W = jnp.asarray(0.5 * rng.standard_normal((n, 3, 3)), jnp.float32)
    target = Target(LinearSEM().prepare_data(jnp.asarray(X, jnp.float32)),
                    jnp.full(n, 2.0, jnp.float32), jnp.ones((n, 1), jnp.float32), 0.0, 1.0)
    out = refine(kernel, {"W": W}, target, jax.random.PRNGKey(1), 30)
    refined[n] = {"W": out.weights_tilde["W"].tolist(), "lams": out.lams.tolist(),
                  "acceptance": out.acceptance.tolist()}
print(json.dumps({"devices": jax.local_device_count(),
                  "epochs": [len(f.history) for f in fits],
                  "objectives": [f.objective for f in fits], "refined": refined}))
"""


def _run(*device_counts: int) -> list[dict]:
    """The script's output with each of ``device_counts`` forced CPU devices, the processes
    run side by side (each is mostly one thread importing and compiling)."""
    processes = [subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "JAX_PLATFORMS": "cpu",
                        "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
                                     f"--xla_force_host_platform_device_count={devices}"})
        for devices in device_counts]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def test_three_members_over_two_devices_fit_as_on_one():
    """Three members (padded to four) split over two devices: each keeps its own epochs and
    its objective agrees with the one-device fit within float rounding."""
    one, two = _run(1, 2)
    assert one["devices"] == 1 and two["devices"] == 2
    assert two["epochs"] == one["epochs"] and len(set(one["epochs"])) > 1
    for a, b in zip(one["objectives"], two["objectives"]):
        assert abs(a - b) <= 1e-4 * abs(a)
    # refinement's draws split over the devices: six draws move as on one device; five are
    # padded to six and come back five, their acceptance a share of real moves only
    import numpy as np

    np.testing.assert_allclose(two["refined"]["6"]["W"], one["refined"]["6"]["W"], rtol=1e-4,
                               atol=1e-5)
    assert two["refined"]["6"]["acceptance"] == one["refined"]["6"]["acceptance"]
    assert np.shape(two["refined"]["5"]["W"]) == (5, 3, 3) and len(two["refined"]["5"]["lams"]) == 5
    assert all(0.0 <= a <= 1.0 for a in two["refined"]["5"]["acceptance"])

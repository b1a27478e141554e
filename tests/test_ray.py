"""Benchmark fits as Ray tasks (``prodag bench --ray``): a two-fit grid on a local Ray
instance with two workers gives the rows of a run in this process."""

import pytest

ray = pytest.importorskip("ray")

import benchmarks.suite as suite  # noqa: E402
from benchmarks.suite import jobs, synthetic  # noqa: E402

SETTINGS = synthetic.SyntheticSettings(
    p=4, s=3, options={"max_epochs": 20, "n_lambdas": 2, "n_restarts": 1, "n_samples": 20})


def _without_seconds(rows):
    return [{key: value for key, value in row.items() if key != "seconds"} for row in rows]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # Ray starts its processes
def test_a_grid_on_a_local_ray_instance_gives_the_rows_of_a_local_run(monkeypatch):
    monkeypatch.setattr(suite, "peer_fitters", lambda *a, **k: {})
    runner = suite.synthetic_runner(SETTINGS, n_grid=(30,))
    local = runner(seeds=[0, 1])
    executor = jobs.RayExecutor(num_cpus=2)
    try:
        assert ray.cluster_resources()["CPU"] == 2
        remote = runner(seeds=[0, 1], executor=executor)
    finally:
        executor.shutdown()
    assert [(row["method"], row["seed"]) for row in remote] == [("ProDAG", 0), ("ProDAG", 1)]
    assert _without_seconds(remote) == _without_seconds(local)
    assert local[0] != local[1]

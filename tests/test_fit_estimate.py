"""The time estimate of a fit (``prodag.resources.fit_seconds``, ``prodag.fit.plan.n_fits``) and
its announcement by ``prodag fit``: the cost model grows as it must with the settings, the
count of fits is the count a fit runs, and a large fit is announced in its first seconds."""

import os
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from prodag import ProDAG, TrainingOptions, estimator as estimator_module
from prodag.config.spec import resolve
from prodag.fit.plan import n_fits
from prodag.progress import Progress
from prodag.resources import (REFINE_STEP_FLOOR, TYPICAL_EPOCHS, fit_seconds, format_duration,
                              refine_seconds)

SOURCE = Path(__file__).resolve().parents[1] / "src"


def test_the_estimate_grows_with_p_samples_fits_and_epochs():
    base = dict(p=50, n_samples=100, n_fits=10, max_epochs=1000, steps_per_epoch=10)
    seconds = fit_seconds(**base)
    assert fit_seconds(**{**base, "p": 100}) > 2 * seconds  # at least linear in p
    assert fit_seconds(**{**base, "n_fits": 20}) == pytest.approx(2 * seconds)
    assert fit_seconds(**{**base, "n_samples": 50}) == pytest.approx(seconds / 2)
    assert fit_seconds(**{**base, "max_epochs": TYPICAL_EPOCHS // 2}) < seconds
    assert fit_seconds(**{**base, "max_epochs": 10 * TYPICAL_EPOCHS}) == seconds


def test_on_candidate_parents_a_step_costs_its_slots_not_p_squared_matrices():
    """A screened step's draws grow about as ``p^1.3`` (the timed slots), a dense step's as
    ``p^2.45``: at p = 500 the screened estimate is the smaller by far, and so is the
    refinement's."""
    base = dict(n_samples=50, n_fits=34, max_epochs=1000, steps_per_epoch=10)
    screened = [fit_seconds(p, **base, screened=True) for p in (100, 1000)]
    dense = [fit_seconds(p, **base) for p in (100, 1000)]
    assert 10 < screened[1] / screened[0] < 40 and dense[1] / dense[0] > 200
    assert fit_seconds(500, **base, screened=True) < fit_seconds(500, **base) / 10
    assert refine_seconds(500, 1000, 10, screened=True) < refine_seconds(500, 1000, 10) / 5


def test_the_count_of_fits_doubles_with_chains_and_grows_with_the_path():
    one = ProDAG(n_chains=1, lam=2.0, training=TrainingOptions(n_restarts=3))

    def count(estimator):
        return n_fits(resolve(estimator, None, 4), False)

    assert count(ProDAG(n_chains=2, lam=2.0, training=TrainingOptions(n_restarts=3))) == \
        2 * count(one) == 6
    assert count(ProDAG(n_chains=1, training=TrainingOptions(n_lambdas=10, n_restarts=3))) > \
        count(ProDAG(n_chains=1, training=TrainingOptions(n_lambdas=5, n_restarts=3)))


class _Counter(Progress):
    """``prodag.progress.Progress``, disabled, keeping the count of the fits it is told of."""

    made = []

    def __init__(self, total, enabled=True):
        super().__init__(total, enabled=False)
        _Counter.made.append(self)


def test_the_count_of_fits_is_what_a_fit_runs(monkeypatch):
    """The plan's count (``n_fits``, the progress bar's total) against the fits that finish,
    along a λ path with its polished radii and two chains."""
    monkeypatch.setattr(estimator_module, "Progress", _Counter)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:, 1] += X[:, 0]
    estimator = ProDAG(training=TrainingOptions(n_lambdas=1, n_restarts=2), n_chains=2,
                       max_epochs=1, n_samples=2, seed=0).fit(X)
    bar = _Counter.made[-1]
    assert bar.done == bar.total == n_fits(estimator.spec_, False)
    assert {"data starts (order search)", "pooling the fits"} <= set(estimator.fit_seconds_)
    assert all(seconds >= 0 for seconds in estimator.fit_seconds_.values())
    epochs = estimator.fit_epochs_  # one epoch a fit (max_epochs=1), each counted once
    assert sum(len(stage["per_fit"]) for stage in epochs.values()) == bar.total
    assert all(stage["per_fit"] == [1] * len(stage["per_fit"])
               and stage["computed"] >= len(stage["per_fit"]) for stage in epochs.values())


def test_the_refinement_estimate_grows_with_steps_and_p_from_a_floor():
    assert refine_seconds(20, 1000, 2000) == pytest.approx(2 * refine_seconds(20, 1000, 1000))
    assert refine_seconds(100, 1000, 500) > 10 * refine_seconds(20, 1000, 500)
    assert refine_seconds(2, 1000, 100) == pytest.approx(100 * REFINE_STEP_FLOOR)
    assert refine_seconds(20, 1000, 0) == 0


def test_many_refinement_steps_are_announced_with_their_option_before_the_fit(tmp_path,
                                                                            monkeypatch):
    """``--refine-steps 10000000`` on 5 variables: over an hour of refinement after a fit of
    seconds, announced before it starts (the fit itself is not run)."""
    from cli_support import invoke

    from prodag.cli import fit as fit_command

    def stop(*args, **kwargs):
        raise RuntimeError("the fit started")

    monkeypatch.setattr(fit_command, "fit_posterior", stop)
    rng = np.random.default_rng(0)
    np.savetxt(tmp_path / "d.csv", rng.normal(size=(50, 5)), delimiter=",",
               header="a,b,c,d,e", comments="", fmt="%.4f")
    result = invoke("fit", tmp_path / "d.csv", "--refine-steps", 10_000_000, "--out",
                    tmp_path / "out", "--no-progress")
    announced = result.output.split("Fitting")[0]
    assert "This fit may take about" in announced
    assert "10000000 refinement steps moving 1000 draws" in announced
    assert "fewer --refine-steps" in announced
    default = invoke("fit", tmp_path / "d.csv", "--out", tmp_path / "out", "--no-progress")
    assert "may take" not in default.output.split("Fitting")[0]  # 6000 steps: seconds


def test_durations_are_said_in_minutes_hours_or_days():
    assert format_duration(30) == "about 1 minute"
    assert format_duration(600) == "about 10 minutes"
    assert format_duration(5 * 3600) == "about 5 hours"
    assert format_duration(5 * 86400) == "about 5 days"


def test_a_300_by_100_fit_is_announced_in_its_first_seconds(tmp_path):
    """``prodag fit`` on 300 columns x 100 rows prints its time estimate before fitting; the
    process is stopped once the line is read (the fit itself is not run)."""
    rng = np.random.default_rng(0)
    header = ",".join(f"v{j}" for j in range(300))
    np.savetxt(tmp_path / "wide.csv", rng.normal(size=(100, 300)), delimiter=",",
               header=header, comments="", fmt="%.4f")
    env = {**os.environ, "PYTHONPATH": str(SOURCE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "prodag.cli", "fit", "wide.csv", "--out",
                                "out", "--no-progress"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    began, lines = time.monotonic(), []
    try:
        for line in process.stdout:
            lines.append(line)
            if "may take" in line or "Fitting" in line:
                break
    finally:
        process.kill()
        process.wait()
    assert any("may take about" in line for line in lines), "".join(lines)
    assert time.monotonic() - began < 60
    assert not (tmp_path / "out").exists()


def test_unplanned_fits_add_to_the_progress_bars_total():
    """``fitting.member_fitter``: a batch the plan did not count (the radii below the λ grid)
    grows the bar's total by its fits; a planned batch leaves it."""
    from prodag.inference import fitting
    from prodag.inference.radius_selection import MemberSpec

    class Engine:  # a stand-in: the batch's bookkeeping, no fitting
        def members(self, lams, *_):
            return lams

        def fit_members(self, starts, keys, members, data, progress, screen):
            return list(members)

    rows = fitting.Rows(np.zeros((4, 2)), None, [{"w": np.zeros(1)}], {"x": np.zeros(1)})
    with Progress(5, enabled=False) as progress:
        fit = fitting.member_fitter(Engine(), [rows], np.ones(2), progress)
        specs = [MemberSpec(0, lam, 0, jax.random.PRNGKey(0)) for lam in (1.0, 0.5)]
        fit(specs, "planned")
        assert progress.total == 5
        assert fit(specs, "below", unplanned=True) == [1.0, 0.5] and progress.total == 7

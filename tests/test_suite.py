"""The benchmark suite's bookkeeping (benchmarks.suite): merging re-runs with old rows,
resuming interrupted runs, the synthetic runner's settings, and the package's imports."""

import json
from pathlib import Path

import numpy as np
import pytest

import benchmarks.suite as suite
from benchmarks.suite import jobs, synthetic
from benchmarks.suite.checkpoint import Checkpoint

BENCHMARKS = Path(suite.__file__).resolve().parents[1]  # benchmarks/ (suite is its package)


def _row(method, seed, value=1.0):
    return {"method": method, "seed": seed, "seconds": value, "brier": value, "eshd": value,
            "ef1": value, "auroc": value}


def test_the_report_reads_each_experiment_from_its_own_file_only(tmp_path):
    """A variant kept under another name (``linear-100_steps5.json``) and a quick run are not
    tables of the report; the experiment's own file is."""
    from benchmarks.suite import report

    def write(name, rows, quick=False):
        (tmp_path / name).write_text(json.dumps(
            {"experiment": "linear-100", "quick": quick, "rows": rows}))

    write("linear-100.json", [_row("ProDAG", 0, 1.0)])
    write("linear-100_steps5.json", [_row("ProDAG", 0, 2.0)])
    write("linear-100-quick.json", [_row("ProDAG", 0, 3.0)], quick=True)
    records = report.load_records(tmp_path)
    assert [(r["experiment"], r["rows"][0]["brier"]) for r in records] == [("linear-100", 1.0)]


def test_kept_rows_keep_only_the_methods_not_run_again(tmp_path):
    old = [{"method": "ProDAG", "seed": 0, "brier": 9.0},
           {"method": "DAGMA", "seed": 0, "brier": 8.0},
           {"method": "DiBS", "seed": 0, "brier": 7.0}]
    path = tmp_path / "experiment.json"
    path.write_text(json.dumps({"rows": old}))
    new = [{"method": "ProDAG", "seed": 0, "brier": 5.0}]
    assert suite.kept_rows(path, new) == old[1:]
    assert suite.kept_rows(tmp_path / "missing.json", new) == []


def test_checkpoint_saves_rows_and_offers_them_only_when_resuming(tmp_path):
    path = tmp_path / "toy.partial.json"
    rows = [_row("ProDAG", 0), _row("DAGMA", 0), _row("ProDAG", 1)]
    Checkpoint(path).save(rows)
    assert json.loads(path.read_text()) == rows
    assert Checkpoint(path).done("ProDAG", seed=0) == []
    resumed = Checkpoint(path, resume=True)
    assert resumed.done("ProDAG", seed=0) == rows[:1]
    assert resumed.done("DAGMA", seed=1) == []
    resumed.remove()
    assert not path.exists()
    Checkpoint().save(rows)  # no path: keeps nothing
    assert Checkpoint(tmp_path / "missing.json", resume=True).resumed == []


def _toy_jobs(seeds, fitted):
    def fitter(method, seed):
        def fit():
            fitted.append((method, seed))
            return np.zeros((1, 2, 2)), 1.0
        return fit

    return [job for seed in seeds for job in jobs.jobs_of(
        {method: fitter(method, seed) for method in ("ProDAG", "DAGMA")}, {"seed": seed},
        lambda samples: [{"brier": 1.0, "eshd": 1.0, "ef1": 1.0, "auroc": 1.0}])]


def test_resume_reuses_the_checkpointed_fits_and_runs_the_rest(tmp_path, monkeypatch):
    fitted = []

    def runner(seeds, quick=False, methods=None, checkpoint=None, executor=None):
        return jobs.execute(_toy_jobs(seeds, fitted), checkpoint, executor)

    experiment = suite.Experiment("toy", "toy", runner, seeds=3, sweep=None)
    monkeypatch.setitem(suite.EXPERIMENTS, "toy", experiment)
    monkeypatch.setattr(suite, "write_results", lambda out, experiment, rows, *a, **k:
                        (out / "toy.json").write_text(json.dumps({"rows": rows})))
    interrupted = [_row("ProDAG", 0, 9.0), _row("DAGMA", 0, 8.0), _row("ProDAG", 1, 7.0)]
    (tmp_path / "toy.partial.json").write_text(json.dumps(interrupted))

    rows = suite.run(["toy"], out=tmp_path, resume=True)["toy"]

    assert fitted == [("DAGMA", 1), ("ProDAG", 2), ("DAGMA", 2)]
    assert rows[:3] == interrupted
    assert [(row["method"], row["seed"]) for row in rows[3:]] == fitted
    assert not (tmp_path / "toy.partial.json").exists()


def test_without_resume_the_checkpoint_is_ignored(tmp_path, monkeypatch):
    fitted = []

    def runner(seeds, quick=False, methods=None, checkpoint=None, executor=None):
        return jobs.execute(_toy_jobs(seeds, fitted), checkpoint, executor)

    monkeypatch.setitem(suite.EXPERIMENTS, "toy", suite.Experiment("toy", "toy", runner,
                                                                   seeds=1, sweep=None))
    monkeypatch.setattr(suite, "write_results", lambda *a, **k: None)
    (tmp_path / "toy.partial.json").write_text(json.dumps([_row("ProDAG", 0)]))
    suite.run(["toy"], out=tmp_path)
    assert fitted == [("ProDAG", 0), ("DAGMA", 0)]


def test_each_dataset_is_scored_against_its_own_graph(monkeypatch):
    """Jobs run after the loop that builds them: each must keep its own data and truth."""
    monkeypatch.setattr(synthetic, "posterior",
                        lambda settings, data, seed: (data.adjacency[None], 1.0))
    monkeypatch.setattr(suite, "peer_fitters", lambda *a, **k: {})
    runner = suite.synthetic_runner(synthetic.SyntheticSettings(p=6, s=6), n_grid=(20, 30))
    rows = runner(seeds=[0, 1, 2])
    assert [(row["n"], row["seed"]) for row in rows] == [
        (n, seed) for n in (20, 30) for seed in (0, 1, 2)]
    assert all(row["eshd"] == 0.0 and row["auroc"] == 100.0 for row in rows)


def test_variants_add_prodag_rows_fitted_with_their_own_options(monkeypatch, tmp_path):
    calls = []

    def posterior(settings, data, seed):
        calls.append(settings)
        return data.adjacency[None], 1.0

    monkeypatch.setattr(synthetic, "posterior", posterior)
    monkeypatch.setattr(suite, "peer_fitters", lambda *a, **k: {})
    settings = synthetic.SyntheticSettings(p=3, s=2, sem="mlp")
    runner = suite.synthetic_runner(settings, n_grid=(20,),
                                    variants={"ProDAG (2 units)": {"hidden_units": 2}})
    checkpoint = Checkpoint(tmp_path / "toy.partial.json")
    rows = runner(seeds=[0], checkpoint=checkpoint)

    assert [row["method"] for row in rows] == ["ProDAG", "ProDAG (2 units)"]
    assert rows[0] == {"method": "ProDAG", "n": 20, "seed": 0, "seconds": 1.0, "brier": 0.0,
                       "eshd": 0.0, "ef1": 100.0, "auroc": 100.0, "ece": 0.0, "dags": 1.0}
    assert json.loads(checkpoint.path.read_text()) == rows
    assert calls[0] == settings
    assert calls[1] == settings.with_options(hidden_units=2)
    assert [row["method"] for row in runner(seeds=[0], methods=["prodag (2 units)"])] == [
        "ProDAG (2 units)"]
    runner(seeds=[0], quick=True, methods=["ProDAG"])
    assert calls[-1].options == {"max_epochs": 100}


def test_synthetic_settings_match_the_command_line_and_reject_unknown_names():
    args = synthetic.parse_args(["--sem", "mlp", "--lam", "inf", "--option", "prune=0.1",
                                 "--option", "select_by=validation", "--no-validation-set"])
    settings = synthetic.settings_from_args(args)
    assert settings == synthetic.SyntheticSettings(
        sem="mlp", lam=float("inf"), options={"prune": 0.1, "select_by": "validation"},
        validation_set=False)
    assert settings.estimator_options() == {
        "sem": "mlp", "projection": "auto", "progress": False, "lam": float("inf"),
        "prune": 0.1, "select_by": "validation"}  # the library's noise model unless given
    paper = synthetic.settings_from_args(synthetic.parse_args(["--noise-variance", "1"]))
    assert paper.estimator_options()["noise_variance"] == 1.0
    assert synthetic.settings_from_args(synthetic.parse_args([])) == (
        synthetic.SyntheticSettings())
    with pytest.raises(ValueError, match="sem must be one of"):
        synthetic.SyntheticSettings(sem="gp")
    with pytest.raises(ValueError, match="projection must be one of"):
        synthetic.SyntheticSettings(projection="fast")


def test_experiments_keep_the_interface_the_cli_uses():
    assert suite.RESULTS_DIR == BENCHMARKS / "results"
    assert {"linear-20-n100", "sachs", "munin"} <= set(suite.EXPERIMENTS)
    assert all(isinstance(e.description, str) for e in suite.EXPERIMENTS.values())
    assert suite.EXPERIMENTS["nonlinear-10-n100"].settings == {
        "p": 10, "s": 20, "sem": "mlp", "n_grid": (100,),
        "variants": {"ProDAG (2 units, no bias)": {"hidden_units": 2, "bias": False},
                     "ProDAG (additive)": {"sem": "additive"}}}


def test_a_sweep_with_one_value_is_drawn_as_bars():
    def rows(ns):
        return [{"method": m, "n": n, "seed": s, "brier": 1.0 + s, "eshd": 2.0, "ef1": 3.0,
                 "auroc": 4.0} for m in ("ProDAG", "DAGMA") for n in ns for s in (0, 1)]

    experiment = suite.Experiment("toy", "toy", runner=None)
    single = suite.figure(experiment, rows([100]))
    swept = suite.figure(experiment, rows([10, 100]))
    assert all(ax.patches for ax in single.axes)  # bars on every metric
    assert not any(ax.patches for ax in swept.axes)
    assert single._suptitle.get_text() == "toy"
    assert suite.figure(experiment, rows([100]), "other")._suptitle.get_text() == "other"


def test_a_sachs_split_keeps_each_row_with_its_targets():
    from benchmarks.suite import sachs

    X = np.arange(40.0).reshape(20, 2)
    targets = np.zeros((20, 2), dtype=bool)
    targets[X[:, 0] % 4 == 0, 1] = True          # rows whose first value is a multiple of 4
    split = sachs.Split(X, 3, targets)
    assert len(split.X_val) == 2 and len(split.X) == 18
    for rows, mask in ((split.X, split.targets), (split.X_val, split.targets_val)):
        np.testing.assert_array_equal(mask[:, 1], rows[:, 0] % 4 == 0)
        assert not mask[:, 0].any()

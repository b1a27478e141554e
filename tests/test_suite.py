"""The benchmark suite's bookkeeping (benchmarks/suite.py): merging re-runs with old rows,
resuming interrupted runs."""

import importlib.util
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
_SPEC = importlib.util.spec_from_file_location("suite", BENCHMARKS / "suite.py")
suite = importlib.util.module_from_spec(_SPEC)
sys.modules["suite"] = suite  # its dataclasses look their module up while being defined
_SPEC.loader.exec_module(suite)


def test_kept_rows_keep_only_the_methods_not_run_again(tmp_path):
    old = [{"method": "ProDAG", "seed": 0, "brier": 9.0},
           {"method": "DAGMA", "seed": 0, "brier": 8.0},
           {"method": "DiBS", "seed": 0, "brier": 7.0}]
    path = tmp_path / "experiment.json"
    path.write_text(json.dumps({"rows": old}))
    new = [{"method": "ProDAG", "seed": 0, "brier": 5.0}]
    assert suite.kept_rows(path, new) == old[1:]
    assert suite.kept_rows(tmp_path / "missing.json", new) == []


def test_resume_reuses_the_checkpointed_fits_and_runs_the_rest(tmp_path, monkeypatch):
    fitted = []

    def runner(seeds, quick=False, methods=None):
        rows = []
        for seed in seeds:
            for method in ("ProDAG", "DAGMA"):
                if done := suite.resumed_rows(method, seed=seed):
                    rows += done
                    continue
                fitted.append((method, seed))
                rows.append({"method": method, "seed": seed, "seconds": 1.0, "brier": 1.0,
                             "eshd": 2.0, "ef1": 3.0, "auroc": 4.0})
                suite.checkpoint(rows)
        return rows

    experiment = suite.Experiment("toy", "toy", runner, seeds=3, sweep=None)
    monkeypatch.setitem(suite.EXPERIMENTS, "toy", experiment)
    monkeypatch.setattr(suite, "write_results", lambda out, experiment, rows, *a, **k:
                        (out / "toy.json").write_text(json.dumps({"rows": rows})))
    interrupted = [{"method": "ProDAG", "seed": 0, "seconds": 9.0, "brier": 9.0, "eshd": 9.0,
                    "ef1": 9.0, "auroc": 9.0},
                   {"method": "DAGMA", "seed": 0, "seconds": 8.0, "brier": 8.0, "eshd": 8.0,
                    "ef1": 8.0, "auroc": 8.0},
                   {"method": "ProDAG", "seed": 1, "seconds": 7.0, "brier": 7.0, "eshd": 7.0,
                    "ef1": 7.0, "auroc": 7.0}]
    (tmp_path / "toy.partial.json").write_text(json.dumps(interrupted))

    rows = suite.run(["toy"], out=tmp_path, resume=True)["toy"]

    assert fitted == [("DAGMA", 1), ("ProDAG", 2), ("DAGMA", 2)]
    assert rows[:3] == interrupted
    assert not (tmp_path / "toy.partial.json").exists()
    assert suite.resumed_rows("ProDAG", seed=0) == []  # nothing leaks into the next run


def test_without_resume_the_checkpoint_is_ignored(tmp_path, monkeypatch):
    runs = []

    def runner(seeds, quick=False, methods=None):
        runs.append(suite.resumed_rows("ProDAG", seed=0))
        return [{"method": "ProDAG", "seed": 0, "seconds": 1.0, "brier": 1.0, "eshd": 1.0,
                 "ef1": 1.0, "auroc": 1.0}]

    monkeypatch.setitem(suite.EXPERIMENTS, "toy", suite.Experiment("toy", "toy", runner,
                                                                   seeds=1, sweep=None))
    monkeypatch.setattr(suite, "write_results", lambda *a, **k: None)
    (tmp_path / "toy.partial.json").write_text(json.dumps([{"method": "ProDAG", "seed": 0}]))
    suite.run(["toy"], out=tmp_path)
    assert runs == [[]]


def test_variants_add_prodag_rows_fitted_with_their_own_options(tmp_path, monkeypatch):
    import synthetic

    calls = []

    def run_one(args, options, n, seed):
        calls.append(options)
        return {"seconds": 1.0, "brier": 1.0, "eshd": 2.0, "ef1": 3.0, "auroc": 4.0}

    monkeypatch.setattr(synthetic, "run_one", run_one)
    monkeypatch.setattr(suite, "peer_fitters", lambda *a, **k: {})
    monkeypatch.setattr(suite, "checkpoint", lambda rows: None)
    runner = suite.synthetic_runner(p=3, s=2, sem="mlp", n_grid=(20,),
                                    variants={"ProDAG (2 units)": {"hidden_units": 2}})
    rows = runner(seeds=[0])

    assert [row["method"] for row in rows] == ["ProDAG", "ProDAG (2 units)"]
    assert "hidden_units" not in calls[0] and calls[1]["hidden_units"] == 2
    assert {k: v for k, v in calls[1].items() if k != "hidden_units"} == calls[0]
    assert [row["method"] for row in runner(seeds=[0], methods=["prodag (2 units)"])] == [
        "ProDAG (2 units)"]


def test_a_sweep_with_one_value_is_drawn_as_bars():
    def rows(ns):
        return [{"method": m, "n": n, "seed": s, "brier": 1.0 + s, "eshd": 2.0, "ef1": 3.0,
                 "auroc": 4.0} for m in ("ProDAG", "DAGMA") for n in ns for s in (0, 1)]

    experiment = suite.Experiment("toy", "toy", runner=None)
    single = suite.figure(experiment, rows([100]))
    swept = suite.figure(experiment, rows([10, 100]))
    assert all(ax.patches for ax in single.axes)  # bars on every metric
    assert not any(ax.patches for ax in swept.axes)

"""Every script in ``examples/`` runs, on tiny settings (``PRODAG_EXAMPLES_QUICK=1``), and
computes what it says it does."""

import runpy
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
METRIC_NAMES = {"brier", "eshd", "ef1", "auroc"}


@pytest.fixture
def run_example(monkeypatch, tmp_path):
    """Run ``examples/<name>.py`` as a script with ``argv``; returns its globals."""
    monkeypatch.setenv("PRODAG_EXAMPLES_QUICK", "1")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def run(name, *argv):
        monkeypatch.setattr(sys, "argv", [name, *map(str, argv)])
        return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")

    return run


def test_every_example_is_tested_and_says_how_to_run_it():
    names = {path.stem for path in EXAMPLES.glob("*.py")}
    tested = {"own_csv", "sachs", "interventions", "prior_knowledge", "nonlinear"}
    assert names == tested
    for name in names:
        assert f"python examples/{name}.py" in (EXAMPLES / f"{name}.py").read_text()


def test_own_csv_reads_the_file_it_is_given_and_writes_its_probabilities(run_example,
                                                                          tmp_path):
    import pandas as pd

    from prodag import simulate

    path = tmp_path / "mine.csv"
    columns = [f"gene{j}" for j in range(10)]  # 10 columns: the other examples' compiled fits
    pd.DataFrame(simulate.dataset(p=10, s=15, n=60, seed=3).X, columns=columns).to_csv(
        path, index=False)
    names = run_example("own_csv", path)
    written = pd.read_csv(names["folder"] / "edge_probabilities.csv", index_col=0)
    assert list(written.columns) == columns and list(written.index) == columns
    assert ((written.values >= 0) & (written.values <= 1)).all()
    assert np.diag(written.values).sum() == 0


def test_the_sachs_example_scores_against_both_consensus_graphs(run_example):
    names = run_example("sachs")
    assert names["samples"].shape == (1000, 11, 11)
    assert set(names["scores"]) == {"18-edge consensus graph", "17-edge consensus DAG"}
    for row in names["scores"].values():
        assert set(row) == METRIC_NAMES


def test_the_interventions_example_fits_with_and_without_targets(run_example):
    names = run_example("interventions")
    assert names["data"].interventions.any(axis=1).sum() == 50
    assert set(names["scores"]) == {"with the targets", "as observational"}


def test_the_prior_knowledge_example_breaks_no_knowledge(run_example):
    names = run_example("prior_knowledge")
    assert names["broken"] == 0
    assert names["required"].sum() == 1 and names["forbidden"].sum() >= 2


def test_the_nonlinear_example_fits_both_sems(run_example):
    names = run_example("nonlinear")
    assert set(names["scores"]) == {"additive", "linear"}
    assert all(set(row) == METRIC_NAMES for row in names["scores"].values())

"""``prodag evaluate``: its scores, the same for a results folder and its posterior.npz, and
one ``Error:`` line (exit 2) for every file that is not a prodag posterior."""

import json

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, fitted, invoke  # noqa: F401 (fixture)

from prodag import ProDAG, metrics
from prodag.cli.files import read_graph

VARIABLES = ["a", "b", "c"]


def scores(tmp_path, posterior, truth, *options):
    result = invoke("evaluate", posterior, "--truth", truth, "--json", tmp_path / "m.json",
                    *options)
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "m.json").read_text()), result.output


def test_evaluate_reports_the_metrics_of_a_samples_file(tmp_path):
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(50, 3, 3)) * (rng.random((50, 3, 3)) < 0.4)
    samples[:, np.arange(3), np.arange(3)] = 0
    np.savez(tmp_path / "samples.npz", samples=samples, variables=np.array(VARIABLES))
    pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"]}).to_csv(tmp_path / "g.csv",
                                                                      index=False)
    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    written, output = scores(tmp_path, tmp_path, tmp_path / "g.csv")
    assert written["n_graphs"] == 50
    assert written["brier"] == pytest.approx(metrics.brier(truth, samples))
    assert written["eshd"] == pytest.approx(metrics.expected_shd(truth, samples))
    assert written["ef1"] == pytest.approx(metrics.expected_f1(truth, samples))
    assert written["auroc"] == pytest.approx(metrics.auroc(truth, samples))
    assert f"{written['brier']:.2f}" in output


def test_a_results_folder_and_its_posterior_score_the_same(fitted, tmp_path):
    folder, _ = fitted
    by_folder, _ = scores(tmp_path, folder / "out", folder / "graph.csv")
    by_posterior, _ = scores(tmp_path, folder / "out" / "posterior.npz", folder / "graph.csv",
                             "--n-draws", 60)
    for key in metrics.METRICS:
        assert by_folder[key] == by_posterior[key], key


def test_evaluate_draws_a_saved_posterior_with_a_given_seed(fitted, tmp_path):
    folder, _ = fitted
    written, _ = scores(tmp_path, folder / "out" / "posterior.npz", folder / "graph.csv",
                        "--n-draws", 40, "--seed", 5)
    samples = ProDAG.load(folder / "out" / "posterior.npz").sample(40, seed=5)
    truth = read_graph(folder / "graph.csv", ["x0", "x1", "x2", "x3"])
    assert written["eshd"] == pytest.approx(metrics.expected_shd(truth, samples))


@pytest.fixture
def truth_file(tmp_path):
    pd.DataFrame({"source": ["x0"], "target": ["x1"]}).to_csv(tmp_path / "g.csv", index=False)
    return tmp_path / "g.csv"


def evaluate_error(path, truth_file, *fragments):
    assert_one_line_error(invoke("evaluate", path, "--truth", truth_file), *fragments)


def test_a_truncated_posterior_is_one_error_line(fitted, tmp_path, truth_file):
    folder, _ = fitted
    content = (folder / "out" / "posterior.npz").read_bytes()
    (tmp_path / "posterior.npz").write_bytes(content[: len(content) // 2])
    evaluate_error(tmp_path / "posterior.npz", truth_file, "posterior.npz", "truncated")


def test_a_npy_file_is_one_error_line(tmp_path, truth_file):
    np.save(tmp_path / "graphs.npy", np.zeros((3, 2, 2)))
    evaluate_error(tmp_path / "graphs.npy", truth_file, "graphs.npy", ".npy")


def test_a_csv_file_is_one_error_line(tmp_path, truth_file):
    evaluate_error(truth_file, truth_file, "g.csv", "not an .npz archive")
    assert "pickle" not in invoke("evaluate", truth_file, "--truth", truth_file).output


def test_an_empty_file_is_one_error_line(tmp_path, truth_file):
    (tmp_path / "posterior.npz").write_bytes(b"")
    evaluate_error(tmp_path / "posterior.npz", truth_file, "posterior.npz", "empty")


def test_an_npz_that_is_no_prodag_model_is_one_error_line(tmp_path, truth_file):
    np.savez(tmp_path / "other.npz", weights=np.zeros((2, 2)))
    evaluate_error(tmp_path / "other.npz", truth_file)


def test_a_folder_without_samples_is_named(tmp_path, truth_file):
    (tmp_path / "empty").mkdir()
    evaluate_error(tmp_path / "empty", truth_file, "directory", "samples.npz")

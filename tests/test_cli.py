"""The ``prodag`` command: files it writes, numbers it prints, and one-line errors (exit 2)."""

import json
import os

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from prodag import metrics
from prodag.cli import app, parse_lam, print_edges, ranked_edges, read_graph

runner = CliRunner()
VARIABLES = ["a", "b", "c"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(error_lines) == 1, result.output
    for fragment in fragments:
        assert fragment in error_lines[0]


def test_help_lists_every_command_and_documents_defaults():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("fit", "demo", "simulate", "evaluate", "bench"):
        assert command in result.output
    fit_help = invoke("fit", "--help").output
    for option in ("--sem", "--lam", "--n-samples", "--max-epochs", "--seed", "--projection",
                   "--standardize", "--log-transform", "--threshold", "--no-progress"):
        assert option in fit_help
    assert "default: auto" in fit_help and "default: 1000" in fit_help


@pytest.mark.parametrize("text, expected", [("auto", None), ("inf", np.inf), ("2.5", 2.5),
                                            (" INF ", np.inf)])
def test_parse_lam(text, expected):
    assert parse_lam(text) == expected


@pytest.mark.parametrize("text", ["0", "-1", "big"])
def test_parse_lam_rejects_nonpositive_and_words(text):
    with pytest.raises(ValueError, match="--lam"):
        parse_lam(text)


def test_read_graph_from_edge_list_and_from_adjacency(tmp_path):
    pd.DataFrame({"source": ["a", "c"], "target": ["b", "b"]}).to_csv(tmp_path / "e.csv",
                                                                      index=False)
    expected = np.zeros((3, 3))
    expected[0, 1] = expected[2, 1] = 1
    np.testing.assert_array_equal(read_graph(tmp_path / "e.csv", VARIABLES), expected)
    # Adjacency in another variable order is re-ordered to the data's.
    order = ["c", "a", "b"]
    frame = pd.DataFrame(expected, index=VARIABLES, columns=VARIABLES).loc[order, order] * 0.7
    frame.to_csv(tmp_path / "adj.csv")
    np.testing.assert_array_equal(read_graph(tmp_path / "adj.csv", VARIABLES), expected)


def test_simulate_writes_data_and_a_graph_that_match_the_simulator(tmp_path):
    from prodag import simulate

    result = invoke("simulate", "--p", 6, "--edges", 5, "--n", 30, "--seed", 3,
                    "--out", tmp_path)
    assert result.exit_code == 0, result.output
    expected = simulate.dataset(6, 5, 30, seed=3)
    data = pd.read_csv(tmp_path / "data.csv")
    np.testing.assert_allclose(data.to_numpy(), expected.X)
    graph = read_graph(tmp_path / "graph.csv", list(data.columns))
    np.testing.assert_array_equal(graph, expected.adjacency)
    weights = pd.read_csv(tmp_path / "weights.csv", index_col=0).to_numpy()
    np.testing.assert_allclose(weights, expected.weights)


def _write_samples(path, samples):
    np.savez(path, samples=samples, variables=np.array(VARIABLES))


def test_evaluate_reports_the_metrics_of_a_samples_file(tmp_path):
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(50, 3, 3)) * (rng.random((50, 3, 3)) < 0.4)
    samples[:, np.arange(3), np.arange(3)] = 0
    _write_samples(tmp_path / "samples.npz", samples)
    pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"]}).to_csv(tmp_path / "g.csv",
                                                                      index=False)
    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    result = invoke("evaluate", tmp_path, "--truth", tmp_path / "g.csv",
                    "--json", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "m.json").read_text())
    assert written["n_graphs"] == 50
    assert written["brier"] == pytest.approx(metrics.brier(truth, samples))
    assert written["eshd"] == pytest.approx(metrics.expected_shd(truth, samples))
    assert written["ef1"] == pytest.approx(metrics.expected_f1(truth, samples))
    assert written["auroc"] == pytest.approx(metrics.auroc(truth, samples))
    assert f"{written['brier']:.2f}" in result.output


def test_bad_inputs_give_one_red_line_and_exit_code_2(tmp_path):
    assert_one_line_error(invoke("fit", tmp_path / "missing.csv"), "No such file",
                          "missing.csv")
    (tmp_path / "text.csv").write_text("a,b\n1,x\n2,y\n3,z\n")
    assert_one_line_error(invoke("fit", tmp_path / "text.csv"), "'b'")
    pd.DataFrame({"a": [1.0, -2.0, 3.0], "b": [1.0, 2.0, 4.0]}).to_csv(tmp_path / "neg.csv",
                                                                      index=False)
    assert_one_line_error(invoke("fit", tmp_path / "neg.csv", "--log-transform"),
                          "--log-transform", "a")
    assert_one_line_error(invoke("fit", tmp_path / "neg.csv", "--lam", "-3"), "--lam")
    _write_samples(tmp_path / "samples.npz", np.zeros((2, 3, 3)))
    pd.DataFrame({"source": ["a"], "target": ["zz"]}).to_csv(tmp_path / "g.csv", index=False)
    assert_one_line_error(invoke("evaluate", tmp_path / "samples.npz", "--truth",
                                 tmp_path / "g.csv"), "zz")
    assert_one_line_error(invoke("bench", "no-such-experiment"), "no-such-experiment")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """One tiny fit through the command line, shared by the tests below."""
    folder = tmp_path_factory.mktemp("fit")
    assert invoke("simulate", "--p", 4, "--edges", 3, "--n", 200, "--seed", 1,
                  "--out", folder).exit_code == 0
    result = invoke("fit", folder / "data.csv", "--out", folder / "out", "--lam", "inf",
                    "--max-epochs", 15, "--n-samples", 8, "--n-draws", 60, "--threshold", 0.3,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_fit_writes_consistent_probabilities_samples_and_summary(fitted):
    import networkx as nx

    folder, output = fitted
    out = folder / "out"
    for name in ("edge_probabilities.csv", "samples.npz", "posterior.npz", "heatmap.png",
                 "graph.png", "summary.json"):
        assert (out / name).stat().st_size > 0, name
    probs = pd.read_csv(out / "edge_probabilities.csv", index_col=0)
    assert list(probs.index) == list(probs.columns) == ["x0", "x1", "x2", "x3"]
    with np.load(out / "samples.npz") as archive:
        samples, variables = archive["samples"], list(archive["variables"])
    assert samples.shape == (60, 4, 4) and variables == list(probs.index)
    assert all(nx.is_directed_acyclic_graph(nx.DiGraph(s != 0)) for s in samples)
    np.testing.assert_allclose(probs.to_numpy(), (samples != 0).mean(axis=0))
    summary = json.loads((out / "summary.json").read_text())
    listed = {(e["source"], e["target"]) for e in summary["edges"]}
    above = {(variables[j], variables[k]) for j, k in zip(*np.nonzero(probs.to_numpy() >= 0.3))}
    assert listed == above and summary["n"] == 200 and summary["lam_used"] is None
    if listed:
        best = max(summary["edges"], key=lambda e: e["probability"])
        assert f"{best['source']} -> {best['target']}" in output


def test_the_edge_table_falls_back_to_the_most_probable_edges_when_none_reaches_the_threshold(
        capsys):
    # 10 samples over 3 variables: a -> b in 4, c -> b in 2, nothing else.
    samples = np.zeros((10, 3, 3))
    samples[:4, 0, 1] = 0.7
    samples[4:6, 2, 1] = -0.2
    probs = (samples != 0).mean(axis=0)
    ranked = ranked_edges(probs, VARIABLES, samples)

    print_edges(ranked, threshold=0.5, top=20)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "No edge has posterior probability >= 0.5; the 2 most probable:"
    assert "a -> b" in lines[2] and "0.400" in lines[2] and "0.700" in lines[2]
    assert "c -> b" in lines[3] and len(lines) == 4  # zero-probability pairs are left out

    print_edges(ranked, threshold=0.3, top=20)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "1 edge(s) with posterior probability >= 0.3:" and len(lines) == 3

    print_edges(ranked_edges(np.zeros((3, 3)), VARIABLES, np.zeros((5, 3, 3))), 0.5, 20)
    assert "no sampled graph has any edge" in capsys.readouterr().out


def test_evaluate_reads_a_saved_posterior(fitted, tmp_path):
    from prodag import ProDAG

    folder, _ = fitted
    result = invoke("evaluate", folder / "out" / "posterior.npz", "--truth",
                    folder / "graph.csv", "--n-draws", 40, "--seed", 5,
                    "--json", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    samples = ProDAG.load(folder / "out" / "posterior.npz").sample(40, seed=5)
    truth = read_graph(folder / "graph.csv", ["x0", "x1", "x2", "x3"])
    written = json.loads((tmp_path / "m.json").read_text())
    assert written["eshd"] == pytest.approx(metrics.expected_shd(truth, samples))


def test_demo_scores_its_own_samples_against_both_consensus_graphs(tmp_path):
    from prodag import datasets

    result = invoke("demo", "--out", tmp_path, "--lam", 2, "--max-epochs", 3, "--n-samples", 4,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "metrics.json").read_text())
    with np.load(tmp_path / "samples.npz") as archive:
        samples = archive["samples"]
    sachs = datasets.load_sachs()
    for key, truth in (("graph_18_edges", sachs.graph), ("graph_17_edges_dag", sachs.graph_dag)):
        expected = metrics.evaluate(truth, samples)
        assert written[key] == pytest.approx(expected)
    assert written["paper_18_edges"] == {"brier": 16.0, "eshd": 18.0, "ef1": 24.0, "auroc": 60.0}
    assert "paper, ProDAG (18-edge)" in result.output and written["lam_used"] == 2.0
    assert (tmp_path / "heatmap.png").stat().st_size > 10_000


def test_bench_lists_the_paper_experiments():
    result = invoke("bench", "--list")
    assert result.exit_code == 0, result.output
    for name in ("sachs", "munin", "linear-20-n100", "linear-er-100", "nonlinear-10-n100",
                 "nonlinear-er-10", "scale-free-3", "heteroscedastic-20"):
        assert name in result.output


def test_fit_passes_the_network_options_to_the_mlp(tmp_path):
    from prodag import ProDAG

    assert invoke("simulate", "--p", 3, "--edges", 2, "--n", 60, "--sem", "mlp",
                  "--out", tmp_path).exit_code == 0
    result = invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "out", "--sem", "mlp",
                    "--hidden-units", 2, "--no-bias", "--lam", "inf", "--max-epochs", 2,
                    "--n-samples", 4, "--n-draws", 20, "--no-progress")
    assert result.exit_code == 0, result.output
    model = ProDAG.load(tmp_path / "out" / "posterior.npz")
    assert (model.hidden_units, model.bias) == (2, False)
    assert model.params_["q"]["loc"]["W1"].shape == (3, 3, 2)
    assert not any(name.startswith("b") for name in model.params_["q"]["loc"])
    options = json.loads((tmp_path / "out" / "summary.json").read_text())["options"]
    assert (options["hidden_units"], options["bias"]) == (2, False)


def test_compilation_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    from prodag.cli import compilation_cache_dir

    monkeypatch.delenv("PRODAG_COMPILATION_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compilation_cache_dir() == tmp_path / "prodag" / "jax"
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", str(tmp_path / "mine"))
    assert compilation_cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", "OFF")
    assert compilation_cache_dir() is None


def test_the_console_script_turns_the_compilation_cache_on_unless_told_otherwise(monkeypatch,
                                                                                 tmp_path):
    from prodag import cli

    monkeypatch.setattr(cli, "app", lambda: None)
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.delenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", raising=False)
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", str(tmp_path / "cache"))
    cli.main()
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "cache")

    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/the/users/own")
    cli.main()
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == "/the/users/own"

    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR")
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", "off")
    cli.main()
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ

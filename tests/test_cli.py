"""The ``prodag`` command: options and help, files it writes, numbers it prints."""

import inspect
import json
import os
import re

import numpy as np
import pandas as pd
import pytest
import typer
from cli_support import assert_one_line_error, fitted, invoke  # noqa: F401 (fixture)

from prodag import ProDAG
from prodag.cli import app
from prodag.cli.files import read_graph
from prodag.cli.helpformat import PANELS
from prodag.cli.options import parse_lam, parse_noise_variance
from prodag.config import spec
from prodag.cli.tables import print_edges, ranked_edges
from prodag.io.samples_file import entries_of

VARIABLES = ["a", "b", "c"]


def command_params(name):
    return {param.name: param for param in typer.main.get_command(app).commands[name].params}


def test_help_lists_every_command_and_documents_defaults():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("fit", "demo", "simulate", "evaluate", "bench"):
        assert command in result.output
    fit_help = " ".join(invoke("fit", "--help").output.split())
    for option in ("--sem", "--lam", "--n-samples", "--max-epochs", "--seed", "--projection",
                   "--standardize", "--log-transform", "--threshold", "--no-progress",
                   "--sep", "--no-header"):
        assert option in fit_help
    assert "default: auto" in fit_help and "default: 1000" in fit_help


def test_fit_defaults_are_the_python_apis():
    from prodag import NetworkOptions, TrainingOptions

    api = {name: p.default for name, p in inspect.signature(ProDAG).parameters.items()}
    api.update(vars(TrainingOptions()), **vars(NetworkOptions()))
    api["intervention_kind"] = inspect.signature(ProDAG.fit).parameters[
        "intervention_kind"].default
    params = command_params("fit")
    shared = {"sem": "sem", "select_by": "select_by", "restarts": "n_restarts",
              "hidden_units": "hidden_units", "bias": "bias", "n_samples": "n_samples",
              "max_epochs": "max_epochs", "seed": "seed", "projection": "projection",
              "standardize": "standardize", "prune": "prune", "progress": "progress",
              "intervention_kind": "intervention_kind"}
    for option, name in shared.items():
        default = params[option].default
        assert getattr(default, "value", default) == api[name], option
    assert params["standardize"].default is False
    assert parse_lam(params["lam"].default) == api["lam"]
    assert parse_noise_variance(params["noise_variance"].default) == api["noise_variance"]


@pytest.mark.parametrize("text, expected", [("equal", "equal"), (" Estimate ", "estimate"),
                                            ("2.5", 2.5), ("1", 1.0)])
def test_parse_noise_variance(text, expected):
    assert parse_noise_variance(text) == expected


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "guess"])
def test_parse_noise_variance_rejects_bad_values(text):
    with pytest.raises(ValueError, match="--noise-variance"):
        parse_noise_variance(text)


@pytest.mark.parametrize("noise", [None, "equal"])
def test_the_command_line_and_the_api_give_the_same_posterior(fitted, tmp_path, noise):
    """The same file, seed and settings through ``prodag fit`` and ``ProDAG(...).fit``: with
    every other option at its default, and with a learned shared noise variance."""
    folder, _ = fitted
    options = ["--lam", 2.0, "--max-epochs", 5, "--n-samples", 8, "--seed", 4]
    if noise is not None:
        options += ["--noise-variance", noise]
    result = invoke("fit", folder / "data.csv", "--out", tmp_path / "cli", "--no-progress",
                    "--n-draws", 1000, *options)
    assert result.exit_code == 0, result.output
    from_cli = pd.read_csv(tmp_path / "cli" / "edge_probabilities.csv", index_col=0)
    settings = {} if noise is None else {"noise_variance": noise}
    api = ProDAG(lam=2.0, max_epochs=5, n_samples=8, seed=4, progress=False,
                 **settings).fit(pd.read_csv(folder / "data.csv"))
    np.testing.assert_array_equal(from_cli.to_numpy(), api.edge_probabilities(1000))
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert summary["options"]["noise_variance"] == api.noise_variance
    # the default refinement, resolved for p: its steps and how it went
    steps = spec.resolved_refine_steps(api, api.n_features_in_)
    assert summary["options"]["refine_steps"] == api.spec_.refine_steps == steps
    assert summary["refinement"]["steps"] == steps and summary["refinement"]["chosen"] == "auto"
    assert summary["refinement"]["acceptance"] == api.diagnostics_["refinement"]["acceptance"]


def test_choices_fail_at_parse_time_and_are_listed_in_help():
    result = invoke("fit", "no-such-file.csv", "--projection", "exatc")
    assert result.exit_code == 2 and "exatc" in result.output
    assert "No such file" not in result.output  # refused before the file is looked at
    fit_help = invoke("fit", "--help").output
    assert "linear|mlp" in fit_help and "auto|exact|search|path" in fit_help
    assert "elbo|validation" in fit_help
    simulate_help = invoke("simulate", "--help").output
    assert "er|sf" in simulate_help and "gaussian|exponential|gumbel|heteroscedastic" in \
        simulate_help


def test_fit_help_is_readable_on_an_80_column_terminal():
    output = invoke("fit", "--help", env={"COLUMNS": "80"}, terminal_width=80).output
    assert max(len(line) for line in output.splitlines()) <= 80
    lines = [line for line in output.splitlines() if "Scale every variable" in line]
    assert len(lines) == 1
    assert 80 - lines[0].index("Scale every variable") >= 40  # the description column's width


def test_help_texts_say_what_each_command_does():
    for command in ("simulate", "evaluate"):
        seed_help = command_params(command)["seed"].help
        assert "validation split" not in seed_help and "fit," not in seed_help, command
    demo_help = " ".join(invoke("demo", "--help").output.split())
    assert "--select-by" not in demo_help and "summary.json" not in demo_help
    assert "metrics.json" in demo_help
    assert "API" in invoke("fit", "--help").output  # the standardise default is the API's


def sections(text):
    """``{title: [option names]}`` of a plain-text ``--help``."""
    found, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            title = line[:-1]
            found[title] = []
        elif title and re.match(r"^  --", line):
            found[title].append(line.split()[0])
    return found


def test_fit_help_groups_its_options_in_panels():
    listed = sections(invoke("fit", "--help", terminal_width=80).output)
    assert [title for title in listed if title.endswith(" options")] == \
        [f"{panel} options" for panel in PANELS] + ["Other options"]
    assert {"--sep", "--encoding", "--interventions", "--standardize"} <= \
        set(listed["Data options"])
    assert {"--sem", "--noise-variance"} <= set(listed["Model options"])
    assert {"--lam", "--chains", "--max-epochs"} <= set(listed["Fitting options"])
    assert {"--tiers", "--forbid"} <= set(listed["Knowledge options"])
    assert {"--out", "--n-draws", "--threshold"} <= set(listed["Output options"])
    assert listed["Other options"] == ["--help"]


def test_a_command_without_panels_lists_plain_options():
    assert "Options" in sections(invoke("evaluate", "--help", terminal_width=80).output)


def test_prodag_help_lists_each_command_whole():
    output = invoke("--help", terminal_width=80).output
    text = " ".join(output.split("Commands:")[1].split())
    for command in app.registered_commands:
        first = command.callback.__doc__.strip().split("\n\n")[0]
        assert " ".join(first.split()) in text, first
    assert "..." not in text  # click cuts a summary at the terminal's width with "..."


@pytest.mark.parametrize("text, expected", [("auto", "auto"), ("inf", np.inf), ("2.5", 2.5),
                                            (" INF ", np.inf)])
def test_parse_lam(text, expected):
    assert parse_lam(text) == expected


@pytest.mark.parametrize("text", ["0", "-1", "big"])
def test_parse_lam_rejects_nonpositive_and_words(text):
    with pytest.raises(ValueError, match="--lam"):
        parse_lam(text)


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


def test_bad_options_give_one_red_line_and_exit_code_2(tmp_path):
    (tmp_path / "text.csv").write_text("a,b\n1,x\n2,y\n3,z\n")
    assert_one_line_error(invoke("fit", tmp_path / "text.csv"), "'b'")
    pd.DataFrame({"a": [1.0, -2.0, 3.0], "b": [1.0, 2.0, 4.0]}).to_csv(tmp_path / "neg.csv",
                                                                      index=False)
    assert_one_line_error(invoke("fit", tmp_path / "neg.csv", "--log-transform"),
                          "--log-transform", "a")
    assert_one_line_error(invoke("fit", tmp_path / "neg.csv", "--lam", "-3"), "--lam")
    assert_one_line_error(invoke("fit", tmp_path / "neg.csv", "--noise-variance", "big"),
                          "--noise-variance")
    assert_one_line_error(invoke("bench", "no-such-experiment"), "no-such-experiment")


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
    assert summary["options"]["standardize"] is False
    weights = summary["mixture_weights"]
    assert len(weights) >= 1 and sum(weights) == pytest.approx(1.0)
    assert ("mixes" in output) == (len(weights) > 1)
    report = summary["sortability"]
    assert set(report) == {"expected_edges", "varsortability", "varsortability_data_units",
                           "r2_sortability"}
    assert report["expected_edges"] == pytest.approx(probs.to_numpy().sum(), abs=1.5)
    assert f"Orientation: {report['varsortability']:.2f} of the expected edges" in output
    if listed:
        best = max(summary["edges"], key=lambda e: e["probability"])
        assert f"{best['source']} -> {best['target']}" in output


def test_fit_prints_the_radius_it_used(fitted):
    _, output = fitted
    assert any("lam = inf (no l1 constraint)" in line for line in output.splitlines())


def test_the_edge_table_falls_back_to_the_most_probable_edges_when_none_reaches_the_threshold(
        capsys):
    # 10 samples over 3 variables: a -> b in 4, c -> b in 2, nothing else.
    samples = np.zeros((10, 3, 3))
    samples[:4, 0, 1] = 0.7
    samples[4:6, 2, 1] = -0.2
    probs = (samples != 0).mean(axis=0)
    ranked = ranked_edges(probs, VARIABLES, entries_of([samples]))

    print_edges(ranked, threshold=0.5, top=20)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "No edge has posterior probability >= 0.5; the 2 most probable:"
    assert "a -> b" in lines[2] and "0.400" in lines[2] and "0.700" in lines[2]
    assert "c -> b" in lines[3] and len(lines) == 4  # zero-probability pairs are left out

    print_edges(ranked, threshold=0.3, top=20)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "1 edge(s) with posterior probability >= 0.3:" and len(lines) == 3

    nothing = entries_of([np.zeros((5, 3, 3))])
    print_edges(ranked_edges(np.zeros((3, 3)), VARIABLES, nothing), 0.5, 20)
    assert "no sampled graph has any edge" in capsys.readouterr().out


def test_demo_scores_its_own_samples_against_both_consensus_graphs(tmp_path):
    from prodag import datasets, metrics

    result = invoke("demo", "--out", tmp_path, "--lam", 2, "--max-epochs", 3, "--n-samples", 4,
                    "--chains", 2, "--refine-steps", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert written["chains"]["n_chains"] == 2 and "2 independent chains" in result.output
    assert ProDAG.load(tmp_path / "posterior.npz").bootstrap  # the demo bags its chains
    with np.load(tmp_path / "samples.npz") as archive:
        samples = archive["samples"]
    sachs = datasets.load_sachs()
    for key, truth in (("graph_18_edges", sachs.graph), ("graph_17_edges_dag", sachs.graph_dag)):
        expected = metrics.evaluate(truth, samples)
        assert written[key] == pytest.approx(expected)
    assert written["paper_18_edges"] == {"brier": 16.0, "eshd": 18.0, "ef1": 24.0, "auroc": 60.0}
    assert "paper, ProDAG (18-edge)" in result.output and written["lam_used"] == 2.0
    assert "lam = 2" in result.output
    empty_row = next(line for line in result.output.splitlines()
                     if line.startswith("empty graph vs 18-edge graph")).split()
    assert empty_row[-4:] == ["18.00", "18.00", "0.0", "50.0"]  # Brier = E-SHD = true edges
    assert "scores Brier and E-SHD 18, the number of true edges" in result.output
    assert "summary.json" not in result.output.replace("metrics.json", "")
    assert (tmp_path / "heatmap.png").stat().st_size > 10_000
    intervened = int(sachs.interventions.any(axis=1).sum())
    assert written["interventions"] is True and 0 < intervened < 7466
    assert f"with the known targets of {intervened} intervened cells" in result.output
    assert written["conditions"] is True and "one intercept per experimental condition" in \
        result.output


def built_estimators(monkeypatch, command) -> list:
    """The estimators that ``command`` (a CLI module) builds, collected instead of fitted:
    its ``fit_posterior`` builds the estimator and stops the command."""
    from prodag.cli.results import _estimator

    built = []

    def build_only(frame, interventions=None, conditions=None, **settings):
        built.append(_estimator(settings)[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "fit_posterior", build_only)
    return built


def test_the_demo_refines_its_bagged_draws_by_default(tmp_path, monkeypatch):
    from prodag.cli import demo as demo_command

    built = built_estimators(monkeypatch, demo_command)
    invoke("demo", "--out", tmp_path / "default")
    invoke("demo", "--out", tmp_path / "none", "--refine-steps", 0, "--restarts", 5)
    assert built[0].training.refine_steps == demo_command.DEMO_REFINE_STEPS > 0
    assert built[0].bootstrap and built[0].n_chains == demo_command.DEMO_CHAINS
    assert built[0].n_samples == demo_command.DEMO_SAMPLES != ProDAG().n_samples
    assert built[0].training.n_restarts == demo_command.DEMO_RESTARTS
    assert built[1].training.refine_steps == 0 and built[1].training.n_restarts == 5


def test_demo_can_treat_every_cell_as_observational_with_the_additive_sem(tmp_path):
    result = invoke("demo", "--out", tmp_path, "--lam", 2, "--max-epochs", 2, "--n-samples", 4,
                    "--no-interventions", "--no-conditions", "--sem", "additive",
                    "--chains", 1, "--no-bootstrap", "--refine-steps", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert written["interventions"] is False and written["conditions"] is False
    assert "every cell as observational" in result.output
    assert written["sem"] == "additive" and "Fitting an additive ProDAG posterior" in \
        result.output
    assert set(ProDAG.load(tmp_path / "posterior.npz").params_.q.loc) == {"W", "V", "b"}
    assert invoke("demo", "--out", tmp_path, "--sem", "mlp").exit_code == 2


def test_fit_passes_the_network_options_to_the_mlp(tmp_path):
    assert invoke("simulate", "--p", 3, "--edges", 2, "--n", 60, "--sem", "mlp",
                  "--out", tmp_path).exit_code == 0
    result = invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "out", "--sem", "mlp",
                    "--hidden-units", 2, "--no-bias", "--lam", "inf", "--max-epochs", 2,
                    "--n-samples", 4, "--n-draws", 20, "--no-progress")
    assert result.exit_code == 0, result.output
    model = ProDAG.load(tmp_path / "out" / "posterior.npz")
    assert (model.network.hidden_units, model.network.bias) == (2, False)
    assert model.params_.q.loc["W1"].shape == (3, 3, 2)
    assert not any(name.startswith("b") for name in model.params_.q.loc)
    options = json.loads((tmp_path / "out" / "summary.json").read_text())["options"]
    assert (options["hidden_units"], options["bias"]) == (2, False)


def test_fit_with_the_additive_sem_and_student_t_noise_matches_the_api(tmp_path):
    assert invoke("simulate", "--p", 3, "--edges", 2, "--n", 60, "--sem", "mlp",
                  "--out", tmp_path).exit_code == 0
    result = invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "out", "--sem",
                    "additive", "--likelihood", "student", "--lam", 2.0, "--max-epochs", 3,
                    "--n-samples", 8, "--seed", 1, "--n-draws", 1000, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "additive" in result.output
    api = ProDAG(sem="additive", likelihood="student", lam=2.0, max_epochs=3, n_samples=8,
                 seed=1, progress=False).fit(pd.read_csv(tmp_path / "data.csv"))
    from_cli = pd.read_csv(tmp_path / "out" / "edge_probabilities.csv", index_col=0)
    np.testing.assert_array_equal(from_cli.to_numpy(), api.edge_probabilities(1000))
    loaded = ProDAG.load(tmp_path / "out" / "posterior.npz")
    assert set(loaded.params_.q.loc) == {"W", "V", "b"} and loaded.likelihood == "student"


def test_simulate_offers_only_the_simulated_sems():
    result = invoke("simulate", "--p", 3, "--edges", 2, "--n", 10, "--sem", "additive")
    assert result.exit_code == 2 and "additive" in result.output


def test_compilation_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    from prodag.cli.application import compilation_cache_dir

    monkeypatch.delenv("PRODAG_COMPILATION_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compilation_cache_dir() == tmp_path / "prodag" / "jax"
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", str(tmp_path / "mine"))
    assert compilation_cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", "OFF")
    assert compilation_cache_dir() is None


def test_the_console_script_turns_the_compilation_cache_on_unless_told_otherwise(monkeypatch,
                                                                                 tmp_path):
    from prodag.cli import application

    monkeypatch.setattr(application, "make_app", lambda commands: lambda prog_name: None)
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.delenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", raising=False)
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", str(tmp_path / "cache"))
    application.main()
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "cache")

    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/the/users/own")
    application.main()
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == "/the/users/own"

    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR")
    monkeypatch.setenv("PRODAG_COMPILATION_CACHE", "off")
    application.main()
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ


def test_fit_takes_knowledge_files_and_marks_required_edges(tmp_path):
    """The files reach the fit and the output marks the required edge. (No refinement: that
    the refined draws keep the knowledge is test_knowledge.py's.)"""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.standard_normal((120, 3)), columns=VARIABLES)
    frame["b"] += 0.8 * frame["a"]
    frame.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"source": ["c"], "target": ["a"]}).to_csv(tmp_path / "require.csv",
                                                           index=False)
    pd.DataFrame({"source": ["a"], "target": ["b"]}).to_csv(tmp_path / "forbid.csv",
                                                           index=False)
    pd.DataFrame({"variable": ["b", "c"], "tier": [1, 2]}).to_csv(tmp_path / "tiers.csv",
                                                                  index=False)
    result = invoke("fit", tmp_path / "data.csv", "--require", tmp_path / "require.csv",
                    "--forbid", tmp_path / "forbid.csv", "--tiers", tmp_path / "tiers.csv",
                    "--lam", "2", "--max-epochs", "10", "--n-samples", "8", "--chains", "1",
                    "--refine-steps", "0", "--seed", "0", "--no-progress", "--out",
                    tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "c -> a" in result.output and "(required)" in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["knowledge"] == {"forbidden": [["a", "b"]], "required": [["c", "a"]],
                                    "tiers": [["b"], ["c"]]}
    required = [edge for edge in summary["edges"] if edge["required"]]
    assert [(e["source"], e["target"], e["probability"]) for e in required] == [("c", "a", 1.0)]
    samples = np.load(tmp_path / "out" / "samples.npz")["samples"]
    assert np.all(samples[:, 0, 1] == 0) and np.all(samples[:, 2, 1] == 0)


def test_contradictory_knowledge_is_a_one_line_error(tmp_path):
    pd.DataFrame(np.ones((10, 3)) + np.arange(30).reshape(10, 3) ** 1.5,
                 columns=VARIABLES).to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"source": ["a", "b"], "target": ["b", "a"]}).to_csv(
        tmp_path / "require.csv", index=False)
    result = invoke("fit", tmp_path / "data.csv", "--require", tmp_path / "require.csv",
                    "--out", tmp_path / "out")
    assert_one_line_error(result, "cycle", "a -> b", "b -> a")


def test_simulated_interventions_round_trip_through_the_target_column(tmp_path):
    assert invoke("simulate", "--p", 4, "--edges", 3, "--n", 60, "--interventions", 2,
                  "--rows-per-target", 10, "--seed", 0, "--out", tmp_path).exit_code == 0
    table = pd.read_csv(tmp_path / "data.csv", keep_default_na=False)
    assert len(table) == 80 and list(table.columns)[-1] == "target"
    assert (table["target"] == "").sum() == 60 and table["target"].nunique() == 3
    result = invoke("fit", tmp_path / "data.csv", "--interventions", "target", "--lam", "2",
                    "--max-epochs", "2", "--n-samples", "8", "--chains", "1",
                    "--refine-steps", "0", "--seed", "0", "--no-progress", "--out",
                    tmp_path / "out")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["p"] == 4 and summary["interventional_rows"] == 20
    mask = pd.DataFrame(np.zeros((80, 4), int), columns=["x0", "x1", "x2", "x3"])
    mask.to_csv(tmp_path / "mask.csv", index=False)
    as_file = invoke("fit", tmp_path / "data.csv", "--interventions", tmp_path / "mask.csv",
                     "--out", tmp_path / "out2")
    assert_one_line_error(as_file, "target")  # the text column is not a variable


def test_a_data_warning_is_one_warning_line(tmp_path):
    from prodag import simulate

    data = simulate.dataset(p=4, s=3, n=100, seed=0)
    pd.DataFrame(data.X * 1e6, columns=list("abcd")).to_csv(tmp_path / "data.csv", index=False)
    result = invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "out", "--lam", 1,
                    "--noise-variance", 1, "--max-epochs", 2, "--n-samples", 4, "--n-draws", 20,
                    "--chains", 1, "--refine-steps", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "noise variance is fixed" in line]
    assert len(lines) == 1 and lines[0].startswith("Warning: the noise variance is fixed at 1")
    assert "NoiseScaleWarning" not in result.output and "--noise-variance equal" in lines[0]


def test_fit_reads_the_conditions_column_as_the_api_takes_conditions(tmp_path):
    from prodag import ProDAG, TrainingOptions
    from prodag.evaluation.metrics import edge_probabilities

    rng = np.random.default_rng(0)
    a = rng.standard_normal(90)
    frame = pd.DataFrame({"a": a, "b": 0.9 * a + 0.4 * rng.standard_normal(90)})
    frame.loc[60:, "b"] = rng.standard_normal(30) + 3.0
    frame["condition"] = np.repeat(["base", "stim", "drug"], 30)
    frame["target"] = [""] * 60 + ["b"] * 30
    frame.to_csv(tmp_path / "data.csv", index=False)
    result = invoke("fit", tmp_path / "data.csv", "--interventions", "target", "--conditions",
                    "condition", "--intervention-kind", "activity", "--lam", "2",
                    "--max-epochs", "5", "--n-samples", "8", "--chains", "1",
                    "--refine-steps", "0", "--seed", "0", "--no-progress", "--out",
                    tmp_path / "out")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["p"] == 2 and summary["conditions"] == ["base", "stim", "drug"]
    written = pd.read_csv(tmp_path / "out" / "edge_probabilities.csv", index_col=0)
    api = ProDAG(lam=2.0, max_epochs=5, n_samples=8, n_chains=1, seed=0, progress=False,
                 training=TrainingOptions(refine_steps=0)).fit(
        frame[["a", "b"]], interventions=frame["target"], conditions=frame["condition"],
        intervention_kind="activity")
    np.testing.assert_allclose(written.to_numpy(), edge_probabilities(api.sample(1000)),
                               atol=1e-12)
    missing = invoke("fit", tmp_path / "data.csv", "--conditions", "batch", "--out",
                     tmp_path / "out2")
    assert_one_line_error(missing, "--conditions batch", "not a column")


def test_version_prints_the_package_version():
    import prodag

    result = invoke("--version")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"prodag {prodag.__version__}"


def test_the_commands_use_no_deprecated_typer_parameters():
    import warnings

    import typer

    from prodag.cli import app

    with warnings.catch_warnings(record=True) as caught:  # options are read when built
        warnings.simplefilter("always")
        typer.main.get_command(app)
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning)], \
        [str(w.message) for w in caught]


def test_the_console_script_builds_only_the_command_it_is_asked_for():
    from typer.testing import CliRunner

    from prodag.cli.application import COMMANDS, make_app, requested_commands

    assert requested_commands(["effects", "out", "--cause", "a"]) == ("effects",)
    assert requested_commands(["--help"]) == requested_commands([]) == COMMANDS
    assert requested_commands(["fitt", "data.csv"]) == COMMANDS  # typer names the typo
    lean = CliRunner().invoke(make_app(("simulate",)), ["simulate", "--help"])
    assert lean.exit_code == 0 and "Usage: prodag simulate" in lean.output


def test_refine_steps_reach_the_estimator(tmp_path, monkeypatch):
    from prodag.cli import fit as fit_command

    built = built_estimators(monkeypatch, fit_command)
    pd.DataFrame(np.random.default_rng(0).normal(size=(20, 3)), columns=list("abc")).to_csv(
        tmp_path / "data.csv", index=False)
    invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "out", "--refine-steps", 300,
           "--bootstrap", "--no-progress")
    assert built[0].training.refine_steps == 300 and built[0].bootstrap
    assert_one_line_error(invoke("fit", tmp_path / "data.csv", "--refine-steps", -1),
                          "refine-steps")
    invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "smc", "--sampler", "smc",
           "--no-progress")
    assert built[1].training.sampler == "smc" and built[0].training.sampler == "mixture"


def test_a_long_mixture_prints_its_largest_weights_and_sums_the_rest():
    from types import SimpleNamespace

    from prodag.cli.results import SHOWN_WEIGHTS, describe_mixture

    weights = np.r_[np.full(SHOWN_WEIGHTS, 0.1), np.full(4, 0.05)]
    line = describe_mixture(SimpleNamespace(mixture_weights_=weights, n_restarts_=3))
    assert line.count("0.10") == SHOWN_WEIGHTS and "0.05" not in line
    assert f"mixes {SHOWN_WEIGHTS + 4} fits" in line and "and 4 more of 0.20 in all" in line

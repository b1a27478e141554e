"""``prodag effects``: one pair's summary and the table of every pair equal the API's on the
same posterior, for a linear and an MLP results folder; bad input is one ``Error:`` line."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, fitted, invoke  # noqa: F401 (fixture)

from prodag import NetworkOptions, ProDAG

N_DRAWS = 60  # the fixture's --n-draws: the graphs of samples.npz


def test_a_pair_is_summarised_as_the_api_does(fitted, tmp_path):
    folder, _ = fitted
    estimator = ProDAG.load(folder / "out" / "posterior.npz")
    cause, effect = estimator.columns_[0], estimator.columns_[2]
    result = invoke("effects", folder / "out", "--cause", cause, "--effect", effect,
                    "--out", tmp_path / "pair.json")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "pair.json").read_text())
    expected = estimator.effect(cause, effect, n=N_DRAWS)
    assert written["n"] == N_DRAWS
    for key in ("mean", "sd", "lower", "upper", "p_nonzero", "p_positive"):
        assert written[key] == pytest.approx(getattr(expected, key), rel=1e-5, abs=1e-6)
    by_index = invoke("effects", folder / "out", "--cause", 0, "--effect", 2)
    assert by_index.exit_code == 0 and f"{expected.mean:.4g}" in by_index.output


def test_the_table_holds_every_ordered_pair(fitted, tmp_path):
    folder, _ = fitted
    estimator = ProDAG.load(folder / "out" / "posterior.npz")
    result = invoke("effects", folder / "out", "--out", tmp_path / "all.csv",
                    "--min-probability", 0)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "all.csv")
    p = len(estimator.columns_)
    assert len(table) == p * (p - 1) and (tmp_path / "all.png").is_file()
    means = estimator.total_effects(N_DRAWS).mean(axis=0)
    names = estimator.columns_
    for row in table.to_dict(orient="records"):
        j, k = names.index(row["cause"]), names.index(row["effect"])
        assert row["mean"] == pytest.approx(means[j, k], abs=1e-6)


def test_an_mlp_results_folder_works(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.normal(size=80)
    frame = pd.DataFrame({"a": a, "b": np.tanh(2 * a) + 0.3 * rng.normal(size=80),
                          "c": rng.normal(size=80)})
    estimator = ProDAG(sem="mlp", network=NetworkOptions(hidden_units=2), lam=math.inf,
                       max_epochs=2, n_samples=4, seed=0, progress=False).fit(frame)
    folder = tmp_path / "mlp"
    folder.mkdir()
    estimator.save(folder / "posterior.npz")
    pair = invoke("effects", folder, "--cause", "a", "--effect", "b", "--n-draws", 20,
                  "--out", tmp_path / "pair.json")
    assert pair.exit_code == 0, pair.output
    written = json.loads((tmp_path / "pair.json").read_text())
    assert written["mean"] == pytest.approx(estimator.effect("a", "b", n=20).mean, rel=1e-5,
                                            abs=1e-7)
    table = invoke("effects", folder, "--n-draws", 20)
    assert table.exit_code == 0, table.output
    assert len(pd.read_csv(folder / "effects.csv")) == 6


@pytest.mark.parametrize("options, fragment", [
    (["--cause", "nope", "--effect", "x1"], "unknown variable 'nope'"),
    (["--cause", "x1"], "--effect"),
    (["--cause", "x1", "--effect", "x1"], "same variable"),
    (["--level", "1.5"], "--level"),
])
def test_bad_input_is_one_error_line(fitted, options, fragment):
    folder, _ = fitted
    assert_one_line_error(invoke("effects", folder / "out", *options), fragment)


def test_a_folder_without_a_posterior_is_one_error_line(tmp_path):
    assert_one_line_error(invoke("effects", tmp_path), "posterior.npz")


def test_fit_points_to_the_effects_command(fitted):
    assert "prodag effects" in fitted[1]


def test_a_pair_from_a_linear_folder_imports_no_jax(fitted):
    """The console script answers a linear folder's pair from samples.npz without JAX or
    numba (what makes it quick), and says what the API says on the same draws."""
    import subprocess
    import sys

    folder, _ = fitted
    estimator = ProDAG.load(folder / "out" / "posterior.npz")
    script = ("import sys\nfrom prodag.cli import application\n"
              f"sys.argv = ['prodag', 'effects', {str(folder / 'out')!r}, '--cause', 'x0', "
              "'--effect', 'x2']\n"
              "try:\n    application.main()\nexcept SystemExit as stop:\n"
              "    assert not stop.code, stop.code\n"
              "print('loaded:', sorted({m.split('.')[0] for m in sys.modules} & "
              "{'jax', 'numba', 'optax'}))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "loaded: []" in result.stdout, result.stdout
    expected = estimator.effect("x0", "x2", n=N_DRAWS)
    assert f"mean {expected.mean:.4g}" in result.stdout, result.stdout

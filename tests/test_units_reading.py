"""Results in the units people read: standardised units for a standardised fit, the same
tables whatever one column's unit, and rankings that do not follow the columns' units."""

import copy
import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, fitted, invoke  # noqa: F401 (fixture)

from prodag import ProDAG, effects
from prodag.cli.tables import ranked_edges
from prodag.inputs import units
from prodag.io.samples_file import entries_of

NAMES = ["a", "b", "c"]
SD = np.array([2.0, 0.5, 10.0])
TO_GRAMS = np.array([1.0, 1000.0, 1.0])  # column b in grams instead of kilograms


def _draws(seed=0, n=200):
    rng = np.random.default_rng(seed)
    W = np.zeros((n, 3, 3))
    W[:, 0, 1] = rng.normal(0.3, 0.05, n) * (rng.random(n) < 0.9)
    W[:, 1, 2] = rng.normal(-8.0, 1.0, n) * (rng.random(n) < 0.6)
    W[:, 0, 2] = rng.normal(0.2, 0.05, n) * (rng.random(n) < 0.7)
    return W


def _in_grams(values):  # data-unit weights or effects when column b is in grams
    return values * TO_GRAMS[None, None, :] / TO_GRAMS[None, :, None]


def test_standardised_values_are_value_times_cause_sd_over_effect_sd():
    W = _draws()
    np.testing.assert_allclose(units.standardized(W, SD)[:, 1, 2], W[:, 1, 2] * 0.5 / 10.0)
    np.testing.assert_allclose(units.standardized(_in_grams(W), SD * TO_GRAMS),
                               units.standardized(W, SD))
    assert units.in_units(W, None, "data") is W


def test_standardised_units_need_the_column_sds_and_a_known_name():
    with pytest.raises(ValueError, match="standardize=True"):
        units.check_units("standardized", None)
    with pytest.raises(ValueError, match="'data' or 'standardized'"):
        units.check_units("sd", SD)
    assert units.default_units(SD) == "standardized" and units.default_units(None) == "data"


def test_the_standardised_edge_table_is_the_same_with_a_column_in_grams():
    W = _draws()
    probs = np.mean(W != 0, axis=0)
    table = ranked_edges(probs, NAMES, entries_of([W]), sd=SD)
    grams = ranked_edges(probs, NAMES, entries_of([_in_grams(W)]), sd=SD * TO_GRAMS)
    pd.testing.assert_frame_equal(table, grams)
    raw = ranked_edges(probs, NAMES, entries_of([_in_grams(W)]))
    assert not np.allclose(raw["mean_weight"], table["mean_weight"])  # data units differ


def test_effects_are_ranked_by_the_standardised_effect_in_either_units():
    W = _draws()
    draws, paths = effects.linear_total_effects(W), effects.directed_paths(W)
    by_sd = effects.effect_table(draws, paths, NAMES, sd=SD, units="standardized")
    in_data = effects.effect_table(draws, paths, NAMES, sd=SD, units="data")
    grams = effects.effect_table(effects.linear_total_effects(_in_grams(W)), paths, NAMES,
                                 sd=SD * TO_GRAMS, units="standardized")
    order = list(zip(by_sd["cause"], by_sd["effect"]))
    assert order == list(zip(in_data["cause"], in_data["effect"]))
    assert order == list(zip(grams["cause"], grams["effect"]))
    pd.testing.assert_frame_equal(by_sd, grams)
    # in data units b -> c (mean about -8 * 0.6) is largest; per sd it is -0.24, below a -> b
    assert order[0] == ("a", "b") and set(by_sd["units"]) == {"standardized"}
    unranked = effects.effect_table(draws, paths, NAMES)
    assert (unranked["cause"][0], unranked["effect"][0]) == ("b", "c")


@pytest.fixture(scope="module")
def standardised_fit():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 3))
    X[:, 1] += 0.9 * X[:, 0]
    X[:, 2] = 1000 * (X[:, 2] - 0.7 * X[:, 1])
    est = ProDAG(lam=2.0, max_epochs=15, n_samples=8, n_chains=1, seed=0, progress=False,
                 standardize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


def test_the_api_reports_standardised_units_on_request(standardised_fit):
    est = standardised_fit
    data = est.total_effects(100)
    np.testing.assert_allclose(est.total_effects(100, units="standardized"),
                               units.standardized(data, est.scale_))
    summary = est.effect(0, 2, n=100, units="standardized")
    assert summary.mean == pytest.approx(units.standardized(data, est.scale_)[:, 0, 2].mean())
    assert summary.units == "standardized" and "standard deviation" in str(summary)
    graph = est.to_networkx(0.0, n_samples=100, units="standardized")
    plain = est.to_networkx(0.0, n_samples=100)
    for j, k in graph.edges:
        ratio = est.scale_[est.columns_.index(j)] / est.scale_[est.columns_.index(k)]
        assert graph.edges[j, k]["weight"] == pytest.approx(plain.edges[j, k]["weight"] * ratio)


def test_standardised_units_of_a_fit_on_raw_columns_are_refused(standardised_fit):
    est = copy.copy(standardised_fit)  # as if fitted on raw columns: their sds are not known
    est.posterior_ = est.posterior_._replace(spec=replace(est.spec_, standardize=False))
    with pytest.raises(ValueError, match="standardize=True"):
        est.total_effects(10, units="standardized")


def test_the_command_line_prints_standardised_units_after_standardize(fitted, tmp_path,
                                                                     monkeypatch):
    from prodag.cli import effects as effects_command

    drawn = []
    plot = effects_command.plot_effects
    monkeypatch.setattr(effects_command, "plot_effects",
                        lambda means, *args, **options: drawn.append((means, options))
                        or plot(means, *args, **options))
    folder, _ = fitted
    refused = invoke("fit", folder / "data.csv", "--out", tmp_path / "no", "--units",
                     "standardized", "--no-progress")
    assert_one_line_error(refused, "--units", "--standardize")
    assert not (tmp_path / "no").exists()
    assert_one_line_error(invoke("effects", folder / "out", "--units", "standardized"),
                          "--units", "--standardize")  # that folder's fit was not standardised
    out = tmp_path / "out"
    result = invoke("fit", folder / "data.csv", "--out", out, "--lam", 2, "--standardize",
                    "--max-epochs", 5, "--n-samples", 8, "--n-draws", 60, "--chains", 1,
                    "--threshold", 0.0, "--seed", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "weights in standardised units" in result.output
    summary = json.loads((out / "summary.json").read_text())
    est = ProDAG.load(out / "posterior.npz")
    with np.load(out / "samples.npz") as archive:
        samples = archive["samples"]
    expected = ranked_edges(np.mean(samples != 0, axis=0), summary["variables"],
                            entries_of([samples]), sd=est.scale_)
    assert summary["options"]["units"] == "standardized" and summary["edges"]
    for edge in summary["edges"]:
        row = expected[(expected.source == edge["source"]) & (expected.target == edge["target"])]
        assert edge["mean_weight"] == pytest.approx(float(row["mean_weight"].iloc[0]))

    table = invoke("effects", out, "--min-probability", 0)
    assert table.exit_code == 0 and "(standardised: sds of the effect" in table.output
    standardised = pd.read_csv(out / "effects.csv")
    assert set(standardised["units"]) == {"standardized"}
    data = invoke("effects", out, "--units", "data", "--out", tmp_path / "data.csv")
    assert data.exit_code == 0 and "in data units" in data.output
    in_data = pd.read_csv(tmp_path / "data.csv")
    assert list(in_data["cause"] + in_data["effect"]) == \
        list(standardised["cause"] + standardised["effect"])  # one ranking in both units
    ratio = [est.scale_[est.columns_.index(c)] / est.scale_[est.columns_.index(e)]
             for c, e in zip(in_data["cause"], in_data["effect"])]
    np.testing.assert_allclose(in_data["mean"] * ratio, standardised["mean"], atol=1e-12)
    # the heatmap's colours are standardised effects, whichever units the table is in
    assert len(drawn) == 2 and all(options["standardised"] for _, options in drawn)
    np.testing.assert_allclose(drawn[0][0], drawn[1][0])
    pair = standardised.iloc[0]
    j, k = est.columns_.index(pair["cause"]), est.columns_.index(pair["effect"])
    assert drawn[1][0][j, k] == pytest.approx(pair["mean"])
    p = len(est.columns_)
    image = effects_command.plot_effects(drawn[0][0], np.ones((p, p)), est.columns_, 0.5,
                                         standardised=True).axes[0].images[0]
    off = ~np.eye(p, dtype=bool)
    assert image.get_clim()[1] == pytest.approx(np.abs(drawn[0][0][off]).max())

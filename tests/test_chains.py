"""Chains, their diagnostic and the evidence weights of the pooled posterior."""

import json
import warnings
from dataclasses import replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from cli_support import fitted as fitted_cli  # noqa: F401 (fixture)

from prodag import ProDAG, TrainingOptions
from prodag.config.spec import ModelConfig
from prodag.inference import compiled, draws
from prodag.inference import Params
from prodag.models.variational import VariationalParams, inverse_softplus
from prodag.posterior import chains
from prodag.posterior.mixture import evidence_weights

NAMES = ["a", "b", "c"]


def _component(loc: np.ndarray, sigma: float = 0.05) -> Params:
    loc = jnp.asarray(loc, jnp.float32)
    return Params(VariationalParams({"W": loc},
                                    {"W": jnp.full_like(loc, inverse_softplus(sigma))}))


def _chain_edges(components):
    """Each chain's edge probabilities when chain ``c`` holds ``components[c]``."""
    draw = compiled.sampler(ModelConfig())

    def count(k, key, m):
        return draws.edge_counts(draw, components[k], key, m, np.inf, lambda w, g: g)

    return chains.chain_probabilities(count, np.zeros(len(components)),
                                      np.arange(len(components)), len(components), 50,
                                      jax.random.PRNGKey(0))


def test_edge_counts_batch_by_batch_are_those_of_the_mixtures_draws():
    """``mixture_edge_probabilities`` from per-batch counts equals the mean over the draws
    ``sample_mixture`` makes with the same key (250 draws: batches of 100 and a short one),
    with a rule dropping entries applied per batch as it is per draw."""
    from prodag.posterior.mixture import mixture_edge_probabilities, sample_mixture

    rng = np.random.default_rng(0)
    components = [_component(rng.normal(size=(3, 3)), 0.5) for _ in range(2)]
    draw = compiled.sampler(ModelConfig())

    def drop_small(weights, graphs):
        return np.where(np.abs(graphs) > 0.3, graphs, 0.0)

    def sample(k, key, m):
        weights, graphs = draws.sample(draw, components[k], key, m, 3.0)
        return weights, drop_small(weights, graphs)

    def count(k, key, m):
        return draws.edge_counts(draw, components[k], key, m, 3.0, drop_small)

    key, mix = jax.random.PRNGKey(3), np.array([0.3, 0.7])
    for picked in ([0], [0, 1]):
        graphs = sample_mixture(sample, picked, mix[:len(picked)] / mix[:len(picked)].sum(),
                                key, 250)[1]
        found = mixture_edge_probabilities(count, picked, mix[:len(picked)]
                                           / mix[:len(picked)].sum(), key, 250)
        np.testing.assert_array_equal(found, np.mean(graphs != 0, axis=0))
        assert 0 < found.sum() < 6


def test_chains_in_different_modes_are_flagged_with_their_edges():
    forward = np.zeros((3, 3))
    forward[0, 1] = 2.0  # a -> b
    backward = forward.T.copy()  # b -> a
    probabilities = _chain_edges([_component(forward), _component(backward)])
    diagnostics = chains.diagnose(probabilities, [-1.0, -2.0], NAMES)
    flagged = {(e["source"], e["target"]) for e in diagnostics["disagreeing_edges"]}
    assert flagged == {("a", "b"), ("b", "a")}
    assert diagnostics["max_difference"] > 0.9
    edge = next(e for e in diagnostics["disagreeing_edges"] if e["source"] == "a")
    assert edge["probabilities"][0] > 0.9 > 0.1 > edge["probabilities"][1]
    with pytest.warns(chains.ChainDisagreementWarning, match="a -> b"):
        chains.warn_disagreement(diagnostics)


def test_chains_in_one_mode_are_not_flagged():
    forward = np.zeros((3, 3))
    forward[0, 1], forward[1, 2] = 2.0, -1.5
    probabilities = _chain_edges([_component(forward), _component(forward + 0.01)])
    diagnostics = chains.diagnose(probabilities, [-1.0, -1.0], NAMES)
    assert diagnostics["disagreeing_edges"] == []
    assert diagnostics["max_difference"] < 0.1


class _Scored(NamedTuple):
    objective: float


def test_contenders_drop_fits_far_below_the_best_but_keep_each_chains_best():
    runs = [chains.Chain([(1.0, _Scored(1.00)), (1.0, _Scored(1.50))], None),
            chains.Chain([(2.0, _Scored(1.70)), (2.0, _Scored(1.80))], None)]
    fits, chain_of = chains.contenders(runs, n_rows=100)  # evidence -100, -150, -170, -180
    assert [fit.objective for _, fit in fits] == [1.00, 1.70]
    assert chain_of.tolist() == [0, 1]


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4))
    X[:, 1] += 0.8 * X[:, 0]
    X[:, 3] += 0.8 * X[:, 2] - 0.6 * X[:, 1]
    est = ProDAG(lam=3.0, max_epochs=40, n_samples=20, n_chains=2, seed=0, progress=False,
                 training=TrainingOptions(n_restarts=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", chains.ChainDisagreementWarning)
        est.fit(X)
    return est, X


def _rescored(est, X, key, components):
    engine = compiled.variational(est.spec_.config, est.spec_.optimiser, 0.0, 1.0, True)
    Z = (X - est.mean_) / est.scale_
    data = engine.model.prepare_data(jnp.asarray(Z, jnp.float32), None)
    noise = np.full(1, 1.0)
    fits = [(lam, _Fit(jax.tree.map(jnp.asarray, c))) for lam, c in components]
    return chains.rescore(engine, fits, data, len(X), noise, key)


class _Fit(NamedTuple):
    params: Params


def test_identical_components_share_the_mass_equally(fitted):
    est, X = fitted
    component = (est.lam_, est.params_)
    objectives = _rescored(est, X, jax.random.PRNGKey(3), [component] * 3)
    assert np.allclose(evidence_weights(objectives, len(X)), 1 / 3, atol=1e-6)


def test_weights_are_stable_under_a_change_of_key(fitted):
    est, X = fitted
    components = list(zip(est.component_lams_, est.components_))
    weights = [evidence_weights(_rescored(est, X, jax.random.PRNGKey(k), components), len(X))
               for k in (11, 12)]
    assert np.max(np.abs(weights[0] - weights[1])) < 0.1


def test_a_fit_reports_its_chains(fitted):
    est, _ = fitted
    diagnostics = est.diagnostics_
    assert diagnostics["n_chains"] == 2 and len(diagnostics["chain_elbos"]) == 2
    assert 0.0 <= diagnostics["mean_difference"] <= diagnostics["max_difference"] <= 1.0
    assert np.isclose(est.mixture_weights_.sum(), 1.0)


def test_the_command_line_reports_the_chains(fitted_cli):
    folder, output = fitted_cli
    summary = json.loads((folder / "out" / "summary.json").read_text())
    chains_report = summary["chains"]
    assert chains_report["n_chains"] == 2 and len(chains_report["chain_elbos"]) == 2
    assert "2 independent chains" in output
    flagged = chains_report["disagreeing_edges"]
    assert ("disagree by more than" in output) == bool(flagged)


def test_bagged_chains_share_the_mass_equally_whatever_their_evidence():
    from prodag.posterior.mixture import bagged_components

    # chain 0: two equal fits; chain 1: one fit far better than its other (and than chain 0)
    kept, weights = bagged_components([3.0, 3.0, 1.0, 2.0], [0, 0, 1, 1], n_rows=100)
    assert kept == [2, 0, 1]
    np.testing.assert_allclose(weights, [0.5, 0.25, 0.25], atol=1e-9)


def test_each_bagged_chain_fits_its_own_resample():
    from prodag.fit.plan import resample
    from prodag.fit.prepare import Prepared

    Z = np.arange(40.0).reshape(20, 2)
    prepared = Prepared(Z, None, None, np.ones(1), ["a", "b"], Z.mean(0), np.ones(2), None,
                        None, None, 7, "do")
    first, again, other = (resample(prepared, 7, c)[0] for c in (0, 0, 1))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert set(map(tuple, first)) <= set(map(tuple, Z)) and len(first) == len(Z)


def _one_edge_apart(shares):
    return {"n_chains": 2, "max_difference": 0.986, "mean_difference": 0.1, "threshold": 0.3,
            "disagreeing_edges": [{"source": "a", "target": "b",
                                   "probabilities": [0.997, 0.011]}],
            "chain_elbos": [-1.0, -2.0], "chain_weights": shares}


def test_the_warning_says_which_chain_the_pooled_posterior_follows():
    with pytest.warns(chains.ChainDisagreementWarning) as caught:
        chains.warn_disagreement(_one_edge_apart([0.98, 0.02]))
    text = str(caught[0].message)
    assert "chain 1's fits hold 0.98 of its weight, so it mostly follows chain 1" in text
    assert "P = 0.98 in the pooled posterior" in text  # 0.98 * 0.997 + 0.02 * 0.011
    assert "averages" not in text and "refine-steps" in text and "--bootstrap" in text
    assert "--tiers" in text
    with pytest.warns(chains.ChainDisagreementWarning) as caught:
        chains.warn_disagreement(_one_edge_apart([0.45, 0.55]))
    text = str(caught[0].message)
    assert "chain 2 0.55, chain 1 0.45 of its weight, so it splits" in text
    assert "mostly follows" not in text and "Refinement" not in text
    refined = _one_edge_apart([0.98, 0.02])
    refined["disagreeing_edges"][0]["posterior"] = 0.41
    with pytest.warns(chains.ChainDisagreementWarning) as caught:
        chains.warn_disagreement(refined)
    text = str(caught[0].message)
    assert "P = 0.98 in the pooled posterior" in text
    assert "in the final posterior a -> b has P = 0.41" in text


def test_a_fit_reports_each_chains_share_of_the_pooled_weight(fitted):
    est, _ = fitted
    shares = np.array(est.diagnostics_["chain_weights"])
    assert shares.shape == (2,) and np.all(shares >= 0) and np.isclose(shares.sum(), 1.0)
    assert chains.flagged_edges(est.posterior_) == est.diagnostics_["disagreeing_edges"]
    bagged = est.posterior_._replace(spec=replace(est.spec_, bootstrap=True),
                                     diagnostics=_one_edge_apart([0.5, 0.5]))
    assert chains.flagged_edges(bagged) == []  # bagged chains differ by design


def test_chain_weights_sum_each_chains_components():
    shares = chains.chain_weights(np.array([0.5, 0.3, 0.2]), np.array([1, 0, 1]), 3)
    assert np.allclose(shares, [0.3, 0.7, 0.0])


def test_disagreeing_edges_are_marked_in_every_output_and_warned_about_once(
        fitted_cli, tmp_path, monkeypatch):
    import pandas as pd

    from cli_support import invoke

    folder, _ = fitted_cli
    names = list(pd.read_csv(folder / "data.csv").columns)
    real_diagnose = chains.diagnose

    def apart_on_one_edge(probabilities, chain_elbos, columns, threshold=0.3, **options):
        probabilities = probabilities.copy()
        probabilities[:, 0, 1] = [1.0, 0.0]  # the chains' modes differ on x0 -> x1
        return real_diagnose(probabilities, chain_elbos, columns, threshold, **options)

    monkeypatch.setattr(chains, "diagnose", apart_on_one_edge)
    result = invoke("fit", folder / "data.csv", "--out", tmp_path / "out", "--lam", "inf",
                    "--max-epochs", 5, "--n-samples", 8, "--n-draws", 60, "--threshold", 0.0,
                    "--seed", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    assert result.output.count("disagree by more than 0.3") == 1, result.output
    assert "disagree by more than 0.3" in result.stderr
    assert "disagreeing_edges.csv" in result.stdout
    table = pd.read_csv(tmp_path / "out" / "disagreeing_edges.csv")
    row = table[(table["source"] == names[0]) & (table["target"] == names[1])].iloc[0]
    assert (row["chain_1"], row["chain_2"], row["difference"]) == (1.0, 0.0, 1.0)
    assert 0.0 <= row["probability"] <= 1.0
    flagged = json.loads((tmp_path / "out" / "summary.json").read_text())["chains"]
    assert len(table) == len(flagged["disagreeing_edges"])
    # the refined posterior's own probability of the edge, said in the warning too
    edge = next(e for e in flagged["disagreeing_edges"]
                if (e["source"], e["target"]) == (names[0], names[1]))
    assert abs(edge["posterior"] - row["probability"]) < 0.3  # 1000 draws against 60
    assert f"in the final posterior {names[0]} -> {names[1]} has P =" in result.stderr

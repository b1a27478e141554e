"""Chains, their diagnostic and the evidence weights of the pooled posterior."""

import json
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from cli_support import fitted as fitted_cli  # noqa: F401 (fixture)

from prodag import ProDAG, TrainingOptions, chains, fitting
from prodag.inference import Params
from prodag.mixture import evidence_weights
from prodag.parameters import optimiser_options
from prodag.variational import VariationalParams, inverse_softplus

NAMES = ["a", "b", "c"]


def _component(loc: np.ndarray, sigma: float = 0.05) -> Params:
    loc = jnp.asarray(loc, jnp.float32)
    return Params(VariationalParams({"W": loc},
                                    {"W": jnp.full_like(loc, inverse_softplus(sigma))}))


def _chain_edges(components):
    """Each chain's edge probabilities when chain ``c`` holds ``components[c]``."""
    sampler = fitting.sampler(fitting.ModelConfig())

    def sample(k, key, m):
        return sampler.sample(components[k], key, m, np.inf)

    return chains.chain_probabilities(sample, np.zeros(len(components)),
                                      np.arange(len(components)), len(components), 50,
                                      jax.random.PRNGKey(0))


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
    engine = fitting.engine(est._config(), optimiser_options(est), 0.0, 1.0, True)
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
    assert ("disagree" in output) == bool(flagged)


def test_bagged_chains_share_the_mass_equally_whatever_their_evidence():
    from prodag.mixture import bagged_components

    # chain 0: two equal fits; chain 1: one fit far better than its other (and than chain 0)
    kept, weights = bagged_components([3.0, 3.0, 1.0, 2.0], [0, 0, 1, 1], n_rows=100)
    assert kept == [2, 0, 1]
    np.testing.assert_allclose(weights, [0.5, 0.25, 0.25], atol=1e-9)


def test_each_bagged_chain_fits_its_own_resample():
    from prodag.procedure import Prepared, resample

    Z = np.arange(40.0).reshape(20, 2)
    prepared = Prepared(Z, None, None, np.ones(1), ["a", "b"], Z.mean(0), np.ones(2), None,
                        None, None, 7)
    first, again, other = (resample(prepared, 7, c)[0] for c in (0, 0, 1))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert set(map(tuple, first)) <= set(map(tuple, Z)) and len(first) == len(Z)

"""The mixture posterior (prodag.posterior.mixture): evidence weights, sampling, and a fitted
mixture that saves and loads exactly."""

import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions
from prodag.posterior import mixture


def test_identical_components_share_the_mass_equally():
    kept, weights = mixture.kept_components([1.25, 1.25, 1.25], n_rows=100)
    np.testing.assert_allclose(weights, [1 / 3] * 3)
    assert kept == [0, 1, 2]


def test_weights_follow_the_evidence_and_a_far_worse_component_is_dropped():
    # per-row objectives 0.01 apart at n = 100: one nat; 0.5 apart: 50 nats
    kept, weights = mixture.kept_components([2.01, 2.0, 2.5], n_rows=100)
    assert kept == [1, 0]
    np.testing.assert_allclose(weights, [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))])
    assert mixture.evidence_weights([2.0, 2.5], 100)[1] == pytest.approx(np.exp(-50))


def test_sampling_draws_each_component_in_proportion_and_one_component_as_it_is():
    import jax

    def sample(params, key, m):
        graphs = np.full((m, 2, 2), float(params))
        return {"W": graphs}, graphs

    key = jax.random.PRNGKey(0)
    weights, graphs = mixture.sample_mixture(sample, [1.0, 2.0], np.array([0.25, 0.75]), key,
                                             4000)
    assert np.mean(graphs[:, 0, 0] == 2.0) == pytest.approx(0.75, abs=0.03)
    np.testing.assert_array_equal(weights["W"], graphs)
    single = mixture.sample_mixture(sample, [5.0], np.array([1.0]), key, 3)[1]
    assert np.all(single == 5.0)


@pytest.fixture(scope="module")
def mixed_fit():
    """Three starts at a fixed radius on data whose direction the ELBO cannot settle; no
    refinement (its default 6000 steps at p = 3 were most of the cost, and its draws would
    stand in for the mixture's: the refined posterior's save and load is
    ``test_refinement``'s), so the mixture itself is what is sampled and saved. One chain:
    its three starts are the components."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(60)
    frame = pd.DataFrame({"a": x, "b": 0.7 * x + rng.standard_normal(60),
                          "c": rng.standard_normal(60)})
    return ProDAG(lam=2.0, training=TrainingOptions(n_restarts=3, refine_steps=0), seed=0,
                  n_chains=1, progress=False,
                  n_samples=20).fit(frame)


def test_a_fit_keeps_its_starts_as_weighted_components(mixed_fit):
    weights = mixed_fit.mixture_weights_
    assert len(mixed_fit.components_) == len(weights) >= 1
    assert weights.sum() == pytest.approx(1.0) and np.all(weights >= mixture.NEGLIGIBLE)
    assert np.all(np.diff(weights) <= 1e-12)  # best first
    assert mixed_fit.params_ is mixed_fit.components_[0]


def test_save_and_load_round_trip_the_mixture_exactly(mixed_fit, tmp_path):
    mixed_fit.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.mixture_weights_, mixed_fit.mixture_weights_)
    for mine, theirs in zip(mixed_fit.components_, loaded.components_):
        np.testing.assert_array_equal(mine.q.loc["W"], theirs.q.loc["W"])
        np.testing.assert_array_equal(mine.q.rho["W"], theirs.q.rho["W"])
    np.testing.assert_array_equal(loaded.component_lams_, mixed_fit.component_lams_)
    np.testing.assert_array_equal(loaded.sample(200), mixed_fit.sample(200))


def test_mixing_the_radii_keeps_fits_of_several_radii_weighted_by_their_evidence():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(40)
    frame = pd.DataFrame({"a": x, "b": 0.5 * x + rng.standard_normal(40),
                          "c": rng.standard_normal(40)})
    # no refinement: the samples checked below are the mixture's own draws, each at its
    # component's radius (refined draws would cost most of the test and say nothing of it)
    est = ProDAG(training=TrainingOptions(n_lambdas=4, refine_steps=0), n_chains=1, seed=0,
                 progress=False, n_samples=20, max_epochs=30).fit(frame)
    assert est.lam_ == est.component_lams_[0]  # the largest weight first
    assert np.all(np.diff(est.mixture_weights_) <= 0)
    assert set(est.component_lams_) <= set(est.lambda_path_["lambdas"])
    assert len(set(est.component_lams_)) >= 2
    graphs = est.sample(400)
    for lam in set(est.component_lams_):  # no sample exceeds the largest radius
        assert np.abs(graphs).sum(axis=(1, 2)).max() <= max(est.component_lams_) * (1 + 1e-5)

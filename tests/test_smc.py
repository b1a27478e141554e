"""Tempered SMC over ``ω̃`` (``prodag.inference.smc``, ``TrainingOptions(sampler="smc")``).

Oracle: on three nodes the model's exact edge probabilities come from importance sampling
(``oracles.three_node_oracle``). The SMC starts from a proposal concentrated on the
WRONG mode (the reversed chain); its draws must reach the oracle within the Monte Carlo
errors, while the proposal itself (what an unweighted sampler would keep) must lie outside
them, so the comparison can fail.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from blackjax.smc.resampling import systematic
from scipy.special import logsumexp
from scipy.stats import norm

from oracles import chain_data, three_node_oracle
from prodag import ProDAG, TrainingOptions
from prodag.fit import tempering
from prodag.graph import is_dag
from prodag.inference import compiled, refinement, smc
from prodag.inference import Params
from prodag.models import make_model
from prodag.models.variational import VariationalParams, inverse_softplus
from prodag.posterior import negligible, populations
from prodag.projection import make_projector

DTYPE = jax.dtypes.canonicalize_dtype(np.float64)
OFF = ~np.eye(3, dtype=bool)


def _wrong_mode(log_noise=None) -> Params:
    """A fit of the reversed chain 3 → 2 → 1 (the data's is 1 → 2 → 3), σ = 0.1."""
    loc = np.zeros((3, 3))
    loc[2, 1], loc[1, 0] = -0.6, 0.6
    return Params(VariationalParams({"W": jnp.asarray(loc, DTYPE)},
                                    {"W": inverse_softplus(jnp.full((3, 3), 0.1, DTYPE))}),
                  None if log_noise is None else jnp.asarray(log_noise, DTYPE))


def _run(noise_variance, n_particles=500, seed=0):
    model, project = make_model("linear"), make_projector("exact")
    X = chain_data(3)
    learned = isinstance(noise_variance, str)
    start = np.zeros(1 if noise_variance == "equal" else 3) if learned else None
    proposal = smc.proposal_of([(1.0, _wrong_mode(start))], DTYPE)
    target = refinement.Target(model.prepare_data(jnp.asarray(X - X.mean(axis=0), DTYPE)),
                               None, jnp.ones((1, 3), DTYPE), 0.0, 1.0)
    kernel = compiled.jit_smc(smc.build_kernel(model, project))
    state, infos = smc.run(kernel, jax.random.PRNGKey(seed), proposal, target, 2, n_particles)
    graphs = np.asarray(refinement.project_draws(model, project, {"W": state.position["W"]},
                                                 state.lams)[1])
    proposed = np.asarray(refinement.project_draws(model, project, *smc.sample_proposal(
        jax.random.PRNGKey(1), proposal, 2 * n_particles))[1])
    return X, state, infos, graphs, proposed


def _tolerance(estimate, n, oracle_error):
    return 4 * np.sqrt(estimate * (1 - estimate) / n + oracle_error ** 2) + 0.01


@pytest.fixture(scope="module")
def fixed_noise():
    return _run(1.0)


def test_smc_from_the_wrong_mode_reaches_the_exact_posterior(fixed_noise):
    X, state, _, graphs, proposed = fixed_noise
    oracle, oracle_error = three_node_oracle(X, 1.0)
    estimate = (graphs != 0).mean(axis=0)
    tolerance = _tolerance(estimate, len(graphs), oracle_error)
    assert np.all(np.abs(estimate - oracle)[OFF] < tolerance[OFF]), (estimate, oracle)
    unweighted = (proposed != 0).mean(axis=0)
    assert np.any(np.abs(unweighted - oracle)[OFF] > 3 * tolerance[OFF]), (unweighted, oracle)
    assert all(is_dag(g != 0) for g in graphs)


def test_the_schedule_increases_to_one_and_keeps_half_the_particles(fixed_noise):
    _, state, infos, _, _ = fixed_noise
    betas = np.stack([np.asarray(info.beta) for info in infos])  # (steps, populations)
    assert np.all(np.diff(betas, axis=0) >= 0) and np.all(betas[-1] == 1.0)
    assert np.all(betas[0] < 1) and len(infos) >= 2  # the wrong mode needs a path
    ess = np.stack([np.asarray(info.ess) for info in infos])
    reaching = np.diff(np.vstack([np.zeros((1, 2)), betas]), axis=0) > 0
    # before its last temperature a population's weights keep half the particles
    interior = reaching & (betas < 1)
    assert np.allclose(ess[interior], smc.ESS_FRACTION, atol=0.02)
    assert np.all(np.isfinite(np.asarray(state.log_evidence)))


def test_systematic_resampling_keeps_each_particle_in_proportion_to_its_weight():
    # the kernel's resampler, BlackJAX's: pinned here over the versions supported
    weights = jnp.asarray(np.random.default_rng(0).dirichlet(np.full(8, 0.5)), DTYPE)
    keys = jax.random.split(jax.random.PRNGKey(0), 4000)
    ancestors = np.asarray(jax.vmap(lambda k: systematic(k, weights, 8))(keys))
    counts = (ancestors[..., None] == np.arange(8)).sum(axis=1)  # (keys, 8)
    expected = 8 * np.asarray(weights)
    # each count is floor or ceil of N·w (systematic), and their mean is N·w
    assert np.all((counts >= np.floor(expected - 1e-6)) & (counts <= np.ceil(expected + 1e-6)))
    error = counts.std(axis=0) / np.sqrt(len(keys)) + 1e-9
    assert np.all(np.abs(counts.mean(axis=0) - expected) < 4 * error + 1e-3)
    skewed = np.asarray(jax.vmap(lambda k: systematic(k, weights[::-1], 8))(keys))
    assert np.abs((skewed[..., None] == np.arange(8)).sum(1).mean(0) - expected).max() > 0.1


def test_the_next_temperature_keeps_the_asked_effective_sample_size():
    increments = jnp.asarray(np.random.default_rng(1).normal(0, 30, 500), DTYPE)
    beta = smc.next_beta(jnp.asarray(0.2, DTYPE), increments, 0.5)
    weights = jax.nn.softmax((beta - 0.2) * increments)
    assert 0.2 < beta < 1 and abs(1 / np.sum(np.square(weights)) / 500 - 0.5) < 0.01
    assert smc.next_beta(jnp.asarray(0.2, DTYPE), increments * 1e-6, 0.5) == 1.0
    capped = smc.next_beta(jnp.asarray(0.2, DTYPE), increments * 1e-6, 0.5, max_step=0.25)
    assert np.isclose(capped, 0.45) and smc.next_beta(capped + 0.5, increments * 1e-6, 0.5,
                                                      max_step=0.25) == 1.0


def test_the_proposal_density_is_the_widened_mixture_at_each_particles_radius():
    fits = [(1.0, _wrong_mode()), (2.0, _wrong_mode()), (2.0, _wrong_mode())]
    fits[2][1].q.loc["W"] = fits[2][1].q.loc["W"] + 1.0
    proposal = smc.proposal_of(fits, DTYPE, (0.5, 2.0), prior_share=0.2)
    position, lams = smc.sample_proposal(jax.random.PRNGKey(0), proposal, 200)
    value = np.asarray(smc.proposal_log_density(proposal, position, lams))
    x = np.asarray(position["W"]).reshape(200, -1)
    per = np.stack([norm.logpdf(x, np.asarray(p.q.loc["W"]).ravel(),
                                smc.WIDEN * 0.1).sum(axis=1) for _, p in fits]
                   + [norm.logpdf(x, 0.5, 2.0).sum(axis=1)] * 2)  # (5, 200)
    same = np.asarray(lams)[None] == np.array([1.0, 2.0, 2.0, 1.0, 2.0])[:, None]
    shares = np.array([0.8 / 3] * 3 + [0.1, 0.1])[:, None]
    expected = logsumexp(np.where(same, per + np.log(shares), -np.inf), axis=0)
    assert np.allclose(value, expected, rtol=1e-4)
    assert set(np.asarray(lams).tolist()) == {1.0, 2.0}
    spread = np.abs(x - 0.5).max(axis=1)  # the prior's draws lie far beyond the fits' σ = 0.2
    assert 0.1 < np.mean(spread > 2.5) < 0.35


def test_sampler_smc_refuses_bagging_and_refinement():
    with pytest.raises(ValueError, match="sampler='smc'"):
        ProDAG(bootstrap=True, training=TrainingOptions(sampler="smc")).fit(chain_data(3))
    with pytest.raises(ValueError, match="sampler"):
        TrainingOptions(sampler="mcmc")


@pytest.mark.slow  # a fit and two compilations of its own: 7 s beside other jobs
def test_a_fit_with_the_smc_sampler_draws_dags_and_survives_a_round_trip(tmp_path,
                                                                          monkeypatch):
    # the oracle is P(w != 0) under the model: every nonzero entry counts, so the reporting
    # rule that drops entries of negligible effect (prodag.posterior.negligible) is off here
    monkeypatch.setattr(negligible, "EFFECT_SIZE", 0.0)
    X = chain_data(3)
    est = ProDAG(lam=1.0, noise_variance=1.0, seed=0, progress=False, n_chains=1,
                 training=TrainingOptions(sampler="smc")).fit(X)
    agreement = est.diagnostics_["populations"]
    assert agreement["n_chains"] == tempering.POPULATIONS and agreement["temperatures"] >= 1
    assert est.refined_.weights_tilde["W"].shape == (1000, 3, 3)
    oracle, oracle_error = three_node_oracle(X, 1.0)
    estimate = est.edge_probabilities(1000)
    assert np.all(np.abs(estimate - oracle)[OFF]
                  < _tolerance(estimate, 1000, oracle_error)[OFF]), (estimate, oracle)
    samples = est.sample(300)
    assert all(is_dag(s != 0) for s in samples)
    est.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert np.array_equal(loaded.sample(300), samples)
    assert loaded.diagnostics_["populations"] == agreement


@pytest.mark.slow  # a compilation of its own (the noise move): 8-10 s beside other jobs
@pytest.mark.parametrize("noise", ["equal", "estimate"])
def test_smc_with_learned_noise_reaches_the_posterior_integrated_over_it(noise):
    X, _, _, graphs, _ = _run(noise)
    oracle, oracle_error = three_node_oracle(X, 1.0, noise)
    estimate = (graphs != 0).mean(axis=0)
    tolerance = _tolerance(estimate, len(graphs), oracle_error)
    assert np.all(np.abs(estimate - oracle)[OFF] < tolerance[OFF]), (estimate, oracle)
    fixed, _ = three_node_oracle(X, 1.0)
    assert np.any(np.abs(estimate - fixed)[OFF] > tolerance[OFF]), (estimate, fixed)


def test_populations_that_disagree_are_named_in_the_diagnostic_and_warned_about():
    probabilities = np.array([[[0.0, 0.9], [0.1, 0.0]], [[0.0, 0.2], [0.15, 0.0]]])
    agreement = populations.diagnose_populations(probabilities, np.array([-3.0, -4.0]),
                                                 np.array([0.6, 0.7]), 5, ["a", "b"])
    assert agreement["disagreeing_edges"] == [{"source": "a", "target": "b",
                                               "probabilities": [0.9, 0.2]}]
    assert np.isclose(agreement["max_difference"], 0.7) and agreement["temperatures"] == 5
    with pytest.warns(populations.PopulationDisagreementWarning, match=r"a -> b \(0.90, 0.20\)"):
        populations.warn_disagreement(agreement)


def test_the_chains_warning_leaves_a_sampled_posterior_to_its_populations_warning():
    from prodag.posterior import chains

    disagreeing = chains.diagnose(np.array([[[0.0, 0.9], [0.1, 0.0]], [[0.0, 0.2], [0.1, 0.0]]]),
                                  [-1.0, -2.0], ["a", "b"])
    with pytest.warns(chains.ChainDisagreementWarning):
        chains.warn_disagreement(disagreeing)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chains.warn_disagreement({**disagreeing, "populations": {}})

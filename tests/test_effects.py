"""Causal effects (``prodag.effects``): closed forms on fixed SEMs, the fitted posterior's
draws against ``(I − W)⁻¹ − I`` of its own samples, units, ``intervene`` against the
mutilated model's moments, the additive SEM's simulated effect against the chain rule, and
prior knowledge carried into the effects."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions, effects
from prodag.config.spec import resolve
from prodag.inference import Params
from prodag.models import LinearSEM, make_model
from prodag.models.variational import VariationalParams, inverse_softplus
from prodag.posterior.fitted import FittedPosterior

NAMES = ["a", "b", "c"]


def handmade(sem, loc, scale=(1.0, 1.0, 1.0), mean=(0.0, 0.0, 0.0), noise=(1.0, 1.0, 1.0),
             names=NAMES):
    """A 'fitted' ProDAG whose posterior is the point ``loc`` (σ = 1e-6, λ = ∞, entries
    below 1e-3 pruned): the draws are ``loc``'s SEM itself."""
    est = ProDAG(sem=sem, lam=math.inf, prune=1e-3, seed=0, progress=False)
    loc = {name: jnp.asarray(np.asarray(value, float)) for name, value in loc.items()}
    rho = {name: jnp.full_like(value, inverse_softplus(1e-6)) for name, value in loc.items()}
    est.posterior_ = FittedPosterior(
        spec=resolve(est, None, len(names)), columns=list(names),
        mean=np.asarray(mean, float), scale=np.asarray(scale, float),
        noise_variance=np.asarray(noise, float),
        components=[Params(q=VariationalParams(loc, rho))], weights=np.ones(1),
        lams=np.array([math.inf]), lambda_path=None, history=np.zeros(1), objective=0.0,
        diagnostics={}, draws=None, seed=0, knowledge=None, candidate_parents=None,
        conditions=None, condition_means=None, intervention_kind="do")
    est._cache = {}
    return est


def chain_weights(w_ab=0.8, w_bc=-1.5):
    W = np.zeros((3, 3))
    W[0, 1], W[1, 2] = w_ab, w_bc
    return W


def additive_weights():
    """One additive SEM a → b → c with bent shapes (V ≠ 0) and intercepts."""
    W = chain_weights(1.2, -0.9)
    V = np.zeros((3, 3, 2))
    V[0, 1] = (-0.3, 0.9)
    V[1, 2] = (0.2, -1.1)
    return {"W": W, "V": V, "b": np.array([0.1, -0.4, 0.3])}


# ---- closed forms --------------------------------------------------------------------------


def test_a_chain_multiplies_its_weights_and_a_fork_gives_zero():
    chain = effects.linear_total_effects(chain_weights()[None])[0]
    assert chain[0, 2] == pytest.approx(0.8 * -1.5)
    assert chain[0, 1] == pytest.approx(0.8) and chain[2, 0] == 0 and chain[1, 0] == 0
    fork = np.zeros((3, 3))
    fork[0, 1], fork[0, 2] = 0.7, -0.4
    fork_effects = effects.linear_total_effects(fork[None])[0]
    assert fork_effects[1, 2] == 0 and fork_effects[2, 1] == 0
    assert np.allclose(np.diag(fork_effects), 0)


def test_the_simulated_shift_of_a_linear_model_is_its_closed_form():
    rng = np.random.default_rng(0)
    W = np.triu(rng.normal(size=(4, 4, 4)), 1)  # 4 draws of a 4-variable DAG
    W[:, 0, 3] = 0.0
    noise = rng.normal(size=(4, 16, 4))
    with jax.enable_x64(True):
        simulated = effects.shift_effects(LinearSEM(), {"W": W}, noise, np.ones(4), range(4))
    assert np.allclose(simulated, effects.linear_total_effects(W), atol=1e-10)


def test_directed_paths_and_the_longest_path_by_brute_force():
    rng = np.random.default_rng(1)
    graphs = np.triu(rng.random((20, 5, 5)) < 0.4, 1)
    for graph, reach in zip(graphs, effects.directed_paths(graphs)):
        closure = np.linalg.matrix_power(np.eye(5) + graph, 5) > 0
        assert np.array_equal(reach, closure & ~np.eye(5, dtype=bool))
    power = [np.linalg.matrix_power(graphs.astype(int), t).any() for t in range(1, 6)]
    assert effects.longest_path(graphs) == sum(power)


# ---- a fitted posterior --------------------------------------------------------------------


def chain_data(n, seed=0, scale=(1.0, 1.0, 1.0)):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = 0.9 * a + rng.normal(size=n)
    c = -0.8 * b + rng.normal(size=n)
    return pd.DataFrame(np.column_stack([a, b, c]) * np.asarray(scale), columns=NAMES)


FAST = dict(lam=3.0, seed=0, progress=False, max_epochs=10, n_samples=10,
            training=TrainingOptions(n_restarts=1),
            standardize=True)


@pytest.fixture(scope="module")
def linear_fit():
    return ProDAG(**FAST).fit(chain_data(300))


def test_a_fitted_posteriors_effects_are_those_of_its_own_samples(linear_fit):
    graphs = linear_fit.sample(200, seed=3)
    expected = np.linalg.inv(np.eye(3) - graphs) - np.eye(3)
    assert np.allclose(linear_fit.total_effects(200, seed=3), expected, atol=1e-12)


def test_effects_in_other_units_are_converted_back(linear_fit):
    scale = np.array([2.0, 0.1, 30.0])
    other = ProDAG(**FAST).fit(chain_data(300, scale=scale))
    ratio = scale[None, :] / scale[:, None]
    assert np.allclose(other.total_effects(100), linear_fit.total_effects(100) * ratio,
                       rtol=1e-6, atol=1e-9)
    summary = other.effect("a", "c")
    assert summary.mean == pytest.approx(linear_fit.effect("a", "c").mean * 15.0, rel=1e-6)


def test_additive_effects_of_small_shifts_scale_with_the_units():
    """A nonlinear effect depends on the size of the shift; the average derivative (a small
    shift per unit) changes with the units as a linear weight does."""
    weights = additive_weights()
    scale = np.array([3.0, 0.5, 2.0])
    plain = handmade("additive", weights).total_effects(50, delta=1e-3)
    scaled = handmade("additive", weights, scale=scale).total_effects(50, delta=1e-3)
    assert np.allclose(scaled, plain * scale[None, :] / scale[:, None], rtol=0.03, atol=0.01)
    assert np.abs(plain).max() > 0.5


def test_the_summary_matches_its_draws(linear_fit):
    draws = linear_fit.total_effects(400)
    summary = linear_fit.effect(0, "c", n=400, level=0.8)
    values = draws[:, 0, 2]
    assert summary.mean == pytest.approx(values.mean())
    assert summary.sd == pytest.approx(values.std(ddof=1))
    assert (summary.lower, summary.upper) == pytest.approx(tuple(np.quantile(values, [0.1, 0.9])))
    assert summary.p_positive == pytest.approx(np.mean(values > 0))
    paths = effects.directed_paths(linear_fit.sample(400))[:, 0, 2]
    assert summary.p_nonzero == pytest.approx(paths.mean())
    assert "a on c" in str(summary)


# ---- interventions -------------------------------------------------------------------------


def test_intervene_matches_the_mutilated_linear_model():
    W = chain_weights(0.8, -1.5)
    W[0, 2] = 0.5
    mean, scale, noise = np.array([1.0, -2.0, 5.0]), np.array([2.0, 0.5, 3.0]), np.array(
        [1.0, 0.6, 1.3])
    est = handmade("linear", {"W": W}, scale=scale, mean=mean, noise=noise)
    value = 40.0  # far outside the data's range
    draws = est.intervene({"b": value}, n=20000)
    assert isinstance(draws, pd.DataFrame) and list(draws.columns) == NAMES
    assert np.all(draws["b"] == value)
    mutilated = W.copy()
    mutilated[:, 1] = 0.0
    B = np.linalg.inv(np.eye(3) - mutilated.T)  # z = B (ε + z_b e_b), ε_b = 0
    z_b = (value - mean[1]) / scale[1]
    expected_mean = mean + scale * (B[:, 1] * z_b)
    variances = noise.copy()
    variances[1] = 0.0
    expected_cov = np.diag(scale) @ B @ np.diag(variances) @ B.T @ np.diag(scale)
    X = draws.to_numpy()
    sd = np.sqrt(np.diag(expected_cov))
    assert np.all(np.abs(X.mean(axis=0) - expected_mean) < 5 * sd / np.sqrt(len(X)) + 1e-9)
    assert np.allclose(np.cov(X.T), expected_cov, atol=0.05 * expected_cov.max())


def test_intervene_returns_an_array_for_unnamed_columns():
    est = handmade("linear", {"W": chain_weights()}, names=["x0", "x1", "x2"])
    draws = est.intervene({0: 1.0}, n=10)
    assert isinstance(draws, np.ndarray) and draws.shape == (10, 3)


# ---- the additive SEM ----------------------------------------------------------------------


def test_the_additive_shift_effect_is_the_mean_chain_rule_derivative():
    """A small shift of a divided by it is the mean over the simulated rows of the derivative
    by the chain rule: g_ab'(a) for b, g_bc'(b) g_ab'(a) for c, with g'(x) = W (u₁ + u₂
    sign x) (finite differences against the analytic derivative of one sampled model)."""
    weights = {name: value[None] for name, value in additive_weights().items()}
    model = make_model("additive")
    noise = np.random.default_rng(0).normal(size=(1, 4000, 3))
    delta = 1e-5
    with jax.enable_x64(True):
        found = effects.shift_effects(model, weights, noise, np.ones(3), [0], delta=delta)[0, 0]
        X = effects.simulate(model, weights, noise, sweeps=3)[0]
    W, V = additive_weights()["W"], additive_weights()["V"]

    def slope(j, k, x):
        u = np.array([1.0, 0.0]) + V[j, k]
        u = u / np.linalg.norm(u)
        return W[j, k] * (u[0] + u[1] * np.sign(x))

    assert found[1] == pytest.approx(np.mean(slope(0, 1, X[:, 0])), abs=1e-3)
    assert found[2] == pytest.approx(np.mean(slope(1, 2, X[:, 1]) * slope(0, 1, X[:, 0])),
                                     abs=1e-3)
    assert found[0] == 0


def test_the_additive_simulation_is_the_structural_equations():
    weights = additive_weights()
    noise = np.random.default_rng(2).normal(size=(1, 50, 3))
    with jax.enable_x64(True):
        X = effects.simulate(make_model("additive"), {k: v[None] for k, v in weights.items()},
                             noise, sweeps=3)[0]
    expected = np.zeros((50, 3))
    for k in range(3):  # a, b, c is a topological order
        expected[:, k] = weights["b"][k] + noise[0, :, k]
        for j in range(k):
            u = np.array([1.0, 0.0]) + weights["V"][j, k]
            u = u / np.linalg.norm(u)
            x = expected[:, j]
            expected[:, k] += weights["W"][j, k] * (u[0] * x + u[1] * np.abs(x))
    assert np.allclose(X, expected, atol=1e-10)


# ---- knowledge -----------------------------------------------------------------------------


def test_a_forbidden_path_gives_zero_in_every_draw():
    data = chain_data(300)
    mask = np.zeros((300, 3), bool)
    mask[:30, 0] = True  # interventional rows on a
    est = ProDAG(**(FAST | dict(tiers=[["c"], ["a", "b"]], required=[("a", "b")]))).fit(
        data, interventions=mask)
    draws = est.total_effects(200)
    assert np.all(draws[:, 0, 2] == 0) and np.all(draws[:, 1, 2] == 0)
    assert est.effect("a", "c").p_nonzero == 0
    assert est.effect("a", "b").p_nonzero == 1


# ---- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("call, fragment", [
    (lambda est: est.effect("a", "zz"), "unknown variable 'zz'"),
    (lambda est: est.effect("a", 7), "out of range"),
    (lambda est: est.effect("b", 1), "same variable"),
    (lambda est: est.effect("a", "b", level=1.5), "level"),
    (lambda est: est.intervene({"a": float("nan")}), "finite"),
    (lambda est: est.intervene({"a": "high"}), "number"),
    (lambda est: est.intervene({}), "dict"),
    (lambda est: est.intervene({"a": 1.0}, condition="x"), "without conditions"),
])
def test_errors_name_the_bad_value(call, fragment):
    est = handmade("linear", {"W": chain_weights()})
    with pytest.raises(ValueError, match=fragment):
        call(est)


def test_an_unfitted_estimator_says_so():
    with pytest.raises(ValueError, match="not fitted"):
        ProDAG().total_effects()


def test_the_simulation_settings_are_checked():
    est = handmade("additive", additive_weights())
    with pytest.raises(ValueError, match="delta"):
        est.total_effects(5, delta=0.0)
    with pytest.raises(ValueError, match="noise_rows"):
        est.effect("a", "b", n=5, noise_rows=0)

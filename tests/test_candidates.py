"""Candidate parents: the lasso-path screen, its rules, and a fit restricted to it."""

import numpy as np
import pytest

from prodag import ProDAG
from prodag.config.parameters import TrainingOptions
from prodag.inputs import candidates
from prodag.inputs.knowledge import Knowledge


def chain_data(p=6, n=400, seed=0):
    """A chain x0 → x1 → … with strong weights: each variable's neighbours are the ones
    beside it."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, p))
    X[:, 0] = rng.normal(size=n)
    for k in range(1, p):
        X[:, k] = 1.2 * X[:, k - 1] + rng.normal(size=n)
    return X


def test_the_screen_keeps_each_variables_neighbours_symmetric_and_without_self_loops():
    mask = candidates.neighbour_mask(chain_data(), 2)
    chain = np.eye(6, k=1, dtype=bool)
    assert np.all(mask[chain | chain.T])
    assert np.array_equal(mask, mask.T) and not mask.diagonal().any()
    assert mask.sum(axis=0).max() <= 4  # K from each side at most


def test_the_screen_does_not_depend_on_the_columns_units():
    X = chain_data(seed=1)
    units = np.array([1e-3, 1.0, 50.0, 1e4, 2.0, 0.1])
    assert np.array_equal(candidates.neighbour_mask(X * units + 7.0, 2),
                          candidates.neighbour_mask(X, 2))


def test_a_required_edge_is_always_a_candidate():
    X = chain_data()
    required = np.zeros((6, 6), dtype=bool)
    required[0, 5] = True  # far apart in the chain: never screened in with K = 1
    assert not candidates.neighbour_mask(X, 1)[0, 5]
    parents = candidates.candidate_parents(X, None, 1, required)
    assert 0 in parents[5]


@pytest.mark.parametrize("setting, p, expected", [
    ("auto", candidates.SCREEN_FROM_P - 1, None),
    ("auto", candidates.SCREEN_FROM_P, candidates.CANDIDATE_PARENTS),
    (None, 500, None), (3, 10, 3), (9, 10, None), (20, 10, None)])
def test_the_setting_resolves_to_a_count_or_no_screen(setting, p, expected):
    assert candidates.resolved_count(setting, p) == expected


def test_the_mask_and_the_candidate_lists_are_one_another():
    rng = np.random.default_rng(0)
    mask = rng.random((7, 7)) < 0.4
    np.fill_diagonal(mask, False)
    assert np.array_equal(candidates.as_mask(candidates.from_mask(mask)), mask)


def test_an_edge_outside_the_candidates_is_forbidden_beside_the_given_ones():
    mask = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
    knowledge = Knowledge(3, forbidden=((1, 0),), candidates=candidates.from_mask(mask))
    expected = ~mask
    expected[1, 0] = True
    assert np.array_equal(knowledge.forbidden_mask(), expected)


def test_candidate_parents_must_be_a_count():
    with pytest.raises(ValueError, match="candidate_parents"):
        TrainingOptions(candidate_parents=0)


@pytest.fixture(scope="module")
def restricted_fit():
    X = chain_data(p=6, n=300)
    return ProDAG(seed=0, progress=False, lam=4.0, max_epochs=30, n_chains=1,
                  training=TrainingOptions(candidate_parents=1, refine_steps=0)).fit(X)


def test_no_draw_has_an_edge_outside_the_candidates_and_the_mask_round_trips(
        restricted_fit, tmp_path):
    mask = restricted_fit.candidate_parents_
    assert mask is not None and mask.sum() < 30
    draws = restricted_fit.sample(300, seed=0)
    assert np.all(draws[:, ~mask] == 0) and np.any(draws[:, mask] != 0)
    restricted_fit.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert np.array_equal(loaded.candidate_parents_, mask)
    assert np.array_equal(loaded.sample(300, seed=0), draws)


def test_a_saved_mask_with_a_self_loop_is_refused(restricted_fit, tmp_path):
    from prodag.io.model_file import ModelFileError

    path = tmp_path / "model.npz"
    restricted_fit.save(path)
    with np.load(path) as archive:
        arrays = dict(archive)
    arrays["arrays/candidate_parents_"] = arrays["arrays/candidate_parents_"] | np.eye(6, dtype=bool)
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match="candidate_parents_"):
        ProDAG.load(path)



@pytest.mark.parametrize("training, screened, expected", [
    ({}, False, 2), ({}, True, 4), ({"n_restarts": 3}, True, 3),
    ({"init": "prior"}, True, 3)])
def test_a_screened_linear_fit_takes_each_data_start_twice(training, screened, expected):
    from prodag.config.spec import resolve

    mask = ~np.eye(100, dtype=bool)
    knowledge = Knowledge(100, candidates=candidates.from_mask(mask)) if screened else None
    spec = resolve(ProDAG(training=TrainingOptions(**training)), knowledge, 100)
    assert spec.restarts == expected


def _screened_problem(p=12, seed=0):
    """Random weights, a sparse candidate support with two required edges, and data."""
    rng = np.random.default_rng(seed)
    mask = rng.random((p, p)) < 0.25
    np.fill_diagonal(mask, False)
    mask[0, 1] = mask[2, 3] = True
    knowledge = Knowledge(p, required=((0, 1), (2, 3)),
                          candidates=tuple(tuple(np.flatnonzero(mask[:, k])) for k in range(p)))
    return knowledge, rng.normal(size=(6, p, p)), rng.normal(size=(50, p))


@pytest.mark.parametrize("lam", [0.0, 0.7, 4.0, np.inf])
def test_the_l1_step_on_the_candidate_entries_alone_is_the_full_projection(lam):
    """``project_on_entries`` against ``project``: values, and gradients in W̃ and λ."""
    import jax
    import jax.numpy as jnp

    from prodag.projection.api import project, project_on_entries

    knowledge, W_tilde, _ = _screened_problem()
    allowed, required = knowledge.allowed_mask(), knowledge.required_mask()
    entries = np.nonzero(allowed & ~required)
    full = lambda w, l: project(w, l, allowed=allowed, required=required)  # noqa: E731
    on_entries = lambda w, l: project_on_entries(w, l, entries, allowed=allowed,  # noqa: E731
                                                 required=required)
    cotangent = jnp.asarray(np.random.default_rng(1).normal(size=W_tilde.shape), jnp.float32)
    W_tilde, lam = jnp.asarray(W_tilde, jnp.float32), jnp.float32(lam)
    expected, found = full(W_tilde, lam), on_entries(W_tilde, lam)
    np.testing.assert_allclose(found, expected, atol=1e-5)
    assert np.array_equal(np.asarray(found) != 0, np.asarray(expected) != 0)
    if np.isfinite(lam):
        grads = [jax.grad(lambda w, l: jnp.sum(f(w, l) * cotangent), (0, 1))(W_tilde, lam)
                 for f in (full, on_entries)]
        np.testing.assert_allclose(grads[1][0], grads[0][0], atol=1e-5)
        np.testing.assert_allclose(grads[1][1], grads[0][1], atol=1e-5)


@pytest.mark.parametrize("per_variable", [False, True])
def test_the_likelihood_on_candidate_parents_equals_the_dense_one(per_variable):
    """The residuals from each column's candidate parents alone, against ``(I − W)ᵀ G (I − W)``
    over all entries, with one Gram matrix or one per variable (interventions); and their
    gradients."""
    import jax
    import jax.numpy as jnp

    from prodag.models.linear import LinearSEM

    with jax.enable_x64(True):
        knowledge, W, X = _screened_problem(seed=2)
        W = jnp.asarray(W * (knowledge.allowed_mask() | knowledge.required_mask()))
        observed = (np.random.default_rng(3).random(X.shape) < 0.8) if per_variable else None
        dense, screened = LinearSEM(), LinearSEM(knowledge.candidate_support())
        data = dense.prepare_data(jnp.asarray(X), observed)
        noise = jnp.linspace(0.5, 2.0, X.shape[1])
        np.testing.assert_allclose(screened.residual_sum_of_squares({"W": W}, data),
                                   dense.residual_sum_of_squares({"W": W}, data), rtol=1e-10)
        gradients = [jax.grad(lambda w: model.log_likelihood({"W": w}, data, noise).sum())(W)
                     for model in (dense, screened)]
        support = knowledge.allowed_mask() | knowledge.required_mask()
        np.testing.assert_allclose(np.where(support, gradients[1], 0.0),
                                   np.where(support, gradients[0], 0.0), rtol=1e-9)

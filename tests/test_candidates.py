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

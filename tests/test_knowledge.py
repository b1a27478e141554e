"""Prior knowledge (prodag.inputs.knowledge): reading and checking it, the constrained projection
against brute force, and fits that respect it in every sample."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, invoke
from hypothesis import given, settings, strategies as st

from prodag import NetworkOptions, ProDAG, Tiers, TrainingOptions, project
from prodag.graph import is_dag
from prodag.inputs.knowledge import Knowledge, KnowledgeError, KnowledgeWarning, warn_fixed_radius

NAMES = ["a", "b", "c", "d", "e"]


# ---- reading and checking ------------------------------------------------------------------

def test_edges_read_from_pairs_frames_and_files_agree(tmp_path):
    frame = pd.DataFrame({"source": ["a", "c"], "target": ["b", "d"]})
    path = tmp_path / "required.csv"
    frame.to_csv(path, index=False)
    by_names = Knowledge.create(NAMES, required=[("a", "b"), ("c", "d")])
    assert by_names.required == ((0, 1), (2, 3))
    assert Knowledge.create(NAMES, required=[(0, 1), (2, 3)]) == by_names
    assert Knowledge.create(NAMES, required=frame) == by_names
    assert Knowledge.create(NAMES, required=str(path)) == by_names
    assert Knowledge.create(NAMES) is None


def test_tiers_forbid_edges_into_earlier_tiers_and_optionally_within():
    knowledge = Knowledge.create(NAMES, tiers=[["a", "b"], ["c"], ["d"]])
    forbidden = knowledge.forbidden_mask()
    assert forbidden[2, 0] and forbidden[3, 2] and forbidden[3, 1]
    assert not forbidden[0, 2] and not forbidden[0, 1] and not forbidden[4, 0]
    assert not forbidden[0, 4]  # e is in no tier
    within = Knowledge.create(NAMES, tiers=[["a", "b"], ["c"]], forbid_within_tiers=True)
    assert within.forbidden_mask()[0, 1] and within.forbidden_mask()[1, 0]
    assert not within.allowed_mask()[0, 0]


def test_tiers_read_from_a_file(tmp_path):
    path = tmp_path / "tiers.csv"
    pd.DataFrame({"variable": ["c", "a", "b"], "tier": [2, 1, 1]}).to_csv(path, index=False)
    assert Knowledge.create(NAMES, tiers=path).tiers == ((0, 1), (2,))


@pytest.mark.parametrize("knowledge, match", [
    ({"required": [("a", "b"), ("b", "c"), ("c", "a")]}, "cycle: .*a -> b.*b -> c.*c -> a"),
    ({"required": [("a", "b")], "forbidden": [("a", "b")]}, "both required and forbidden: a -> b"),
    ({"required": [("c", "a")], "tiers": [["a"], ["c"]]}, "against the tiers: c -> a"),
    ({"required": [("a", "b")], "tiers": [["a", "b"]], "forbid_within_tiers": True},
     "against the tiers: a -> b"),
    ({"forbidden": [("a", "zeta")]}, "unknown variable 'zeta'"),
    ({"forbidden": [(0, 9)]}, "index 9 is out of range"),
    ({"required": [("a", "a")]}, "two different variables: a -> a"),
    ({"tiers": [["a"], ["a", "b"]]}, r"^tiers: variable 'a' is in tiers\[0\] and tiers\[1\]"),
    ({"tiers": [["a"], ["zzz"]]}, r"^tiers\[1\]: unknown variable 'zzz'"),
    ({"tiers": "a,b"}, "no file"),
    ({"forbidden": pd.DataFrame({"from": ["a"], "to": ["b"]})}, "columns source and target"),
    ({"forbidden": ["ab"]}, r"\(source, target\) pairs"),
])
def test_contradictory_or_malformed_knowledge_is_an_error_naming_it(knowledge, match):
    with pytest.raises(KnowledgeError, match=match):
        Knowledge.create(NAMES, **knowledge)


@pytest.mark.parametrize("rows, match", [
    ([("a", 0), ("b", 1), ("a", 1)], "variable 'a' is in tiers 0 and 1; list each variable once"),
    ([("a", 0), ("zzz", 2)], "tier 2: unknown variable 'zzz'"),
    ([("a", 3), ("b", "later")], "must hold integers .* row 1 .* has 'later'"),
])
def test_a_tiers_file_is_named_with_its_own_tier_labels(tmp_path, rows, match):
    path = tmp_path / "tiers.csv"
    pd.DataFrame(rows, columns=["variable", "tier"]).to_csv(path, index=False)
    with pytest.raises(KnowledgeError, match=f"^tiers {path}.*{match}"):
        Knowledge.create(NAMES, tiers=path)


def test_a_tiers_error_names_the_option_and_the_file_on_the_command_line(tmp_path,
                                                                          monkeypatch):
    from prodag.cli import fit as fit_command

    monkeypatch.setattr(fit_command, "fit_posterior",
                        lambda *args, **kwargs: pytest.fail("the fit started"))
    pd.DataFrame(np.random.default_rng(0).normal(size=(20, 5)), columns=NAMES).to_csv(
        tmp_path / "data.csv", index=False)
    pd.DataFrame({"variable": ["a", "b", "a"], "tier": [0, 1, 1]}).to_csv(
        tmp_path / "tiers.csv", index=False)
    result = invoke("fit", tmp_path / "data.csv", "--tiers", tmp_path / "tiers.csv")
    assert_one_line_error(result, f"Error: --tiers {tmp_path / 'tiers.csv'}: variable 'a' is "
                                  "in tiers 0 and 1; list each variable once")


def test_required_edges_at_a_fixed_radius_warn_that_it_bounds_the_other_weights_only():
    required = Knowledge.create(NAMES, required=[("a", "b")])
    with pytest.warns(KnowledgeWarning, match="lam=2 is a fixed radius, and the required "
                                              "edge\\(s\\) a -> b lie outside its l1 ball: it "
                                              "bounds the other weights only.*lam='auto'"):
        assert warn_fixed_radius(required, 2.0, NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_fixed_radius(required, "auto", NAMES)  # the grid leaves them out
        assert not warn_fixed_radius(required, math.inf, NAMES)  # no ball
        assert not warn_fixed_radius(Knowledge.create(NAMES, forbidden=[("a", "b")]), 2.0,
                                     NAMES)
        assert not warn_fixed_radius(None, 2.0, NAMES)


def test_a_fit_at_a_fixed_radius_with_required_edges_warns_before_fitting(monkeypatch):
    from prodag.fit import plan

    def stop(*args):
        raise RuntimeError("planned")

    monkeypatch.setattr(plan, "plan_fit", stop)
    X = pd.DataFrame(np.random.default_rng(0).standard_normal((30, 5)), columns=NAMES)
    with pytest.warns(KnowledgeWarning, match="a -> b"), pytest.raises(RuntimeError):
        ProDAG(lam=2.0, required=[("a", "b")], progress=False).fit(X)


def test_contradictory_knowledge_fails_before_any_fitting(monkeypatch):
    from prodag.inference import compiled

    monkeypatch.setattr(compiled, "variational", lambda *a, **k: pytest.fail("fitting started"))
    X = pd.DataFrame(np.random.default_rng(0).standard_normal((30, 5)), columns=NAMES)
    with pytest.raises(KnowledgeError, match="cycle"):
        ProDAG(required=[("a", "b"), ("b", "a")], progress=False).fit(X)


# ---- the constrained projection ------------------------------------------------------------

def _kept_mass(W_tilde, order, allowed):
    positions = np.argsort(order)
    forward = positions[:, None] < positions[None, :]
    return float(np.sum(np.where(forward & allowed, W_tilde ** 2, 0.0)))


def _respects(order, required):
    positions = np.argsort(order)
    return all(positions[j] < positions[k] for j, k in zip(*np.nonzero(required)))


@st.composite
def knowledge_cases(draw):
    """A matrix W̃ (p, p) and knowledge consistent with a random hidden order."""
    p = draw(st.integers(3, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    order = rng.permutation(p)
    positions = np.argsort(order)
    forward = positions[:, None] < positions[None, :]
    required = forward & (rng.random((p, p)) < 0.25)
    forbidden = ~required & ~np.eye(p, dtype=bool) & (rng.random((p, p)) < 0.25)
    W_tilde = rng.standard_normal((p, p)) * (rng.random((p, p)) < 0.9)
    W_tilde[required] += np.sign(W_tilde[required]) + (W_tilde[required] == 0)
    return W_tilde, ~forbidden & ~np.eye(p, dtype=bool), required


def _check_respected(W, allowed, required):
    assert is_dag(W)
    assert np.all(W[~allowed] == 0)
    assert np.all(W[required] != 0)


@settings(max_examples=25, deadline=None)
@given(case=knowledge_cases())
def test_exact_constrained_projection_matches_brute_force(case):
    W_tilde, allowed, required = case
    W = np.asarray(project(W_tilde, method="exact", allowed=allowed, required=required))
    _check_respected(W, allowed, required)
    best = max(_kept_mass(W_tilde, order, allowed)
               for order in itertools.permutations(range(len(W_tilde)))
               if _respects(np.array(order), required))
    assert np.sum(W ** 2) == pytest.approx(best, rel=1e-5, abs=1e-9)  # float32


@pytest.mark.parametrize("method", ["search", "path"])
@settings(max_examples=20, deadline=None)
@given(case=knowledge_cases(), seed=st.integers(0, 100))
def test_search_and_path_respect_the_knowledge_and_search_beats_the_orders_tried(method, case,
                                                                               seed):
    W_tilde, allowed, required = case
    W = np.asarray(project(W_tilde, 2.0, method=method, allowed=allowed, required=required))
    _check_respected(W, allowed, required)
    assert np.abs(np.where(required, 0.0, W)).sum() <= 2.0 * (1 + 1e-5)
    if method == "search":
        kept = np.asarray(project(W_tilde, method=method, allowed=allowed, required=required))
        rng = np.random.default_rng(seed)
        tried = [order for order in (rng.permutation(len(W_tilde)) for _ in range(30))
                 if _respects(order, required)]
        for order in tried:
            assert np.sum(kept ** 2) >= _kept_mass(W_tilde, order, allowed) * (1 - 1e-5)


def test_required_weights_escape_the_l1_ball_and_pruning():
    from prodag.projection import make_projector

    W_tilde = np.array([[0.0, 0.05, 2.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    required = np.zeros((3, 3), bool)
    required[0, 1] = True
    knowledge = Knowledge(3, required=((0, 1),))
    W = np.asarray(make_projector("exact", prune=0.1, knowledge=knowledge)(W_tilde, 1.0))
    assert W[0, 1] == 0.05
    assert np.abs(W).sum() - 0.05 == pytest.approx(1.0)


# ---- fits ----------------------------------------------------------------------------------

def _chain_frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 5))
    X[:, 0] = rng.standard_normal(n)
    for k in range(1, 5):
        X[:, k] = 0.8 * X[:, k - 1] + rng.standard_normal(n)
    return pd.DataFrame(X, columns=NAMES)


@pytest.mark.parametrize("sem, options, within", [
    ("linear", {"training": TrainingOptions(n_lambdas=2), "max_epochs": 20, "n_chains": 1},
     True),
    ("mlp", {"lam": 4.0, "network": NetworkOptions(hidden_units=2), "max_epochs": 10,
             "n_chains": 1}, False),
])
def test_fits_respect_the_knowledge_in_every_sample_and_round_trip_it(sem, options, within,
                                                                      tmp_path):
    required = pd.DataFrame({"source": ["e"], "target": ["a"]})  # against the data's chain
    est = ProDAG(sem=sem, seed=0, progress=False, required=required,
                 forbidden=[("a", "b")], tiers=Tiers([["c"], ["d", "e"]], forbid_within=within),
                 n_samples=20, **options).fit(_chain_frame())
    graphs = est.sample(300)
    assert np.all(graphs[:, 4, 0] != 0)
    assert np.all(graphs[:, 0, 1] == 0)
    assert np.all(graphs[:, 3, 2] == 0) and np.all(graphs[:, 4, 2] == 0)
    if within:  # nothing inside the tier {d, e}
        assert np.all(graphs[:, 3, 4] == 0) and np.all(graphs[:, 4, 3] == 0)
    assert np.all(is_dag(graphs))
    est.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert loaded.knowledge_ == est.knowledge_
    assert loaded.required == [["e", "a"]]
    np.testing.assert_array_equal(loaded.sample(50), est.sample(50))


def test_forbidden_weights_stay_at_the_prior():
    """The variational fit's own parameters (no refinement: it moves draws, not these; the
    refined draws keep forbidden edges out in the test above)."""
    est = ProDAG(lam=3.0, seed=0, progress=False, forbidden=[("a", "b"), ("c", "b")],
                 n_samples=20, n_chains=1, max_epochs=30,
                 training=TrainingOptions(refine_steps=0)).fit(_chain_frame())
    loc, rho = est.params_.q.loc["W"], est.params_.q.rho["W"]
    fixed = est.knowledge_.forbidden_mask()
    assert np.all(loc[fixed] == 0.0)
    np.testing.assert_allclose(np.log1p(np.exp(rho[fixed])), 1.0)
    assert np.all(loc[~fixed & ~np.eye(5, dtype=bool)] != 0.0)


def test_an_order_that_keeps_the_required_edges_is_left_unchanged():
    import jax.numpy as jnp

    from prodag.projection.orders import constrained_positions

    required = np.zeros((4, 4), bool)
    required[0, 2] = required[3, 1] = True
    kept = np.array([0, 2, 1, 3])  # positions: node 0 first, node 3 last ... 3 -> 1 broken
    repaired = np.asarray(constrained_positions(jnp.asarray(kept), jnp.asarray(required)))
    assert _respects(np.argsort(repaired), required)
    fine = np.array([0, 3, 2, 1])
    np.testing.assert_array_equal(
        constrained_positions(jnp.asarray(fine), jnp.asarray(required)), fine)

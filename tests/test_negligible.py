"""Edges that are not there: entries whose effect size is negligible count in no draw."""

import warnings

import numpy as np
import pytest

from prodag import ProDAG
from prodag.posterior import negligible

# x0 ~ N(0, 1); x1 = 2 x0 + e1 (var 4); x2 = x0 - 0.5 x1 + e2 (var 0.25) = -0.5 e1 + e2
W = np.zeros((3, 3))
W[0, 1], W[0, 2], W[1, 2] = 2.0, 1.0, -0.5
NOISE = np.array([1.0, 4.0, 0.25])


def test_the_implied_standard_deviations_are_the_sems():
    sd = negligible.implied_sd(W[None], NOISE)[0]
    np.testing.assert_allclose(sd, [1.0, np.sqrt(8.0), np.sqrt(1.25)])


@pytest.mark.parametrize("p", [1, 7, pytest.param(negligible.TOPOLOGICAL_FROM_P,
                                                  marks=pytest.mark.slow),
                               pytest.param(80, marks=pytest.mark.slow)])
def test_the_implied_variances_are_those_of_the_inverse(p):
    """``var(x) = Σ_j M_jk² σ_j²`` with ``M = (I − W)⁻¹``, from the inverse below
    ``TOPOLOGICAL_FROM_P`` and column by column in a topological order from there, on random
    DAGs in shuffled node orders. The compiled kernel's cases run with ``-m slow``: its
    compile would cost every run of the suite, whose fits stay below p = 50."""
    rng = np.random.default_rng(p)
    order = rng.permutation(p)
    dags = np.triu(rng.normal(size=(5, p, p)) * (rng.random((5, p, p)) < 0.3), 1)
    dags = dags[:, order][:, :, order]
    noise = rng.uniform(0.2, 3.0, size=(5, p))
    inverse = np.linalg.inv(np.eye(p) - dags)
    expected = np.einsum("sjk,sj->sk", inverse ** 2, noise)
    np.testing.assert_allclose(negligible.implied_sd(dags, noise) ** 2, expected, rtol=1e-9)


@pytest.mark.parametrize("p", [7, pytest.param(negligible.TOPOLOGICAL_FROM_P,
                                         marks=pytest.mark.slow),
                               pytest.param(80, marks=pytest.mark.slow)])
def test_the_rule_on_slots_drops_what_the_dense_rule_drops_on_the_same_draws(p):
    """Random DAGs on a random candidate table (``ParentTable``: 0-5 parents a variable,
    weights on some slots only, the padding nonzero to be ignored): the implied standard
    deviations and the negligible entries computed on the slots equal the dense rule's on the
    same DAGs scattered to ``(S, p, p)``, a required edge kept by both. The slot kernel's
    cases (from ``TOPOLOGICAL_FROM_P``) run with ``-m slow``, as the dense kernel's do."""
    from prodag.projection.parents import ParentTable

    rng = np.random.default_rng(p)
    rank = rng.permutation(p)  # a random topological order
    lists = tuple(tuple(sorted(int(j) for j in rng.choice(p, size=rng.integers(0, 6),
                                                           replace=False) if j != k))
                  for k in range(p))
    table = ParentTable.from_lists(lists)
    forward = rank[table.parents] < rank[:, None]
    slots = rng.normal(scale=0.6, size=(6, *table.parents.shape))
    slots *= (rng.random(slots.shape) < 0.7) & forward
    slots[:, ~table.valid] = 5.0  # the padding is no edge
    noise = rng.uniform(0.2, 3.0, size=(6, p))
    dense = table.dense(np.where(table.valid, slots, 0.0))
    np.testing.assert_allclose(negligible.implied_sd_on_slots(slots, table, noise),
                               negligible.implied_sd(dense, noise), rtol=1e-12)
    flagged = negligible.negligible_on_slots(slots, table, noise, 0.5)
    keep = np.zeros((p, p), bool)  # a required edge the rule would drop in some draw
    keep[table.parents[np.nonzero(flagged.any(axis=0))][0],
         np.nonzero(flagged.any(axis=0))[0][0]] = True
    found = negligible.negligible_on_slots(slots, table, noise, 0.5, keep)
    expected = negligible.negligible(dense, noise, 0.5, keep)[:, table.parents, table.child]
    assert np.array_equal(found, expected & table.valid)
    assert found.sum() == flagged.sum() - flagged[:, table.on_slots(keep)].sum() > 0
    assert (~found & (slots != 0) & table.valid).any()


def test_the_slot_kernel_runs_uncompiled_on_small_tables(monkeypatch):
    """The slot kernel's own logic (its children lists, its topological order, NaN for a
    cycle) at p = 7, run as plain Python so that the default suite compiles nothing: the
    variances of the dense inverse on a DAG, and NaN for exactly the variables a cycle leaves
    unplaced (those on the cycle and below it)."""
    from prodag.projection.parents import ParentTable

    def uncompiled(W, parents, valid, first_child, child_of, slot_of, noise):
        variance = np.empty(W.shape[:-1])
        for s in range(len(W)):
            negligible._slot_variance_one.py_func(W[s], parents, valid, first_child, child_of,
                                                  slot_of, noise[s], variance[s])
        return variance

    monkeypatch.setattr(negligible, "TOPOLOGICAL_FROM_P", 0)
    monkeypatch.setattr(negligible, "_slot_variance", uncompiled)
    table = ParentTable.from_lists(((1, 3), (0, 2), (1, 6), (0,), (3, 5), (4,), (2,)))
    rng = np.random.default_rng(3)
    slots = np.where(table.valid, rng.normal(size=(1, *table.parents.shape)), 0.0)
    slots[0, 0], slots[0, 1, 1], slots[0, 2, 1] = 0.0, 0.0, 0.0  # 0 → 1 → 2, 0 → 3 → 4 ↔ 5
    slots[0, 6] = 0.0
    noise = rng.uniform(0.5, 2.0, size=(1, 7))
    dag = slots.copy()
    dag[0, 5] = 0.0  # without 4 → 5: a DAG
    np.testing.assert_allclose(negligible.implied_sd_on_slots(dag, table, noise),
                               negligible.implied_sd(table.dense(dag), noise), rtol=1e-12)
    cyclic = negligible.implied_sd_on_slots(slots, table, noise)[0]
    assert np.array_equal(np.isnan(cyclic), [False, False, False, False, True, True, False])


def test_effect_sizes_are_weight_times_cause_sd_over_effect_noise_and_unit_free():
    sizes = negligible.effect_sizes(W[None], NOISE)[0]
    assert sizes[0, 1] == pytest.approx(2.0 * 1.0 / 2.0)
    assert sizes[1, 2] == pytest.approx(0.5 * np.sqrt(8.0) / 0.5)
    unit = np.array([1e-3, 1.0, 1e4])  # each column in another unit
    rescaled = W * unit[None, :] / unit[:, None]
    np.testing.assert_allclose(negligible.effect_sizes(rescaled[None], NOISE * unit ** 2)[0],
                               sizes, rtol=1e-9)


def test_only_nonzero_entries_at_or_below_the_threshold_are_negligible_and_required_stay():
    small = W.copy()
    small[0, 1] = 0.05  # effect size 0.05 / 2 = 0.025
    flagged = negligible.negligible(small[None], NOISE, 0.2)[0]
    assert flagged.tolist() == [[False, True, False], [False, False, False],
                                [False, False, False]]
    keep = np.zeros((3, 3), bool)
    keep[0, 1] = True
    assert not negligible.negligible(small[None], NOISE, 0.2, keep=keep).any()


@pytest.fixture(scope="module")
def independent_fit():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, (60, 4)).astype(float)  # independent 0/1 columns
    est = ProDAG(lam=2.0, max_epochs=15, n_samples=8, n_chains=1, seed=0, progress=False,
                 required=[("x0", "x1")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    return est


def test_the_required_edge_stays_and_every_output_sees_the_same_edges(independent_fit):
    est = independent_fit
    draws = est.sample(200)
    assert np.all(draws[:, 0, 1] != 0)
    assert np.array_equal(est.sample_weights(200)["W"] != 0, draws != 0)
    np.testing.assert_array_equal(est.edge_probabilities(200), np.mean(draws != 0, axis=0))


def test_the_chains_diagnostic_counts_edges_as_the_posterior_does(monkeypatch):
    from prodag.posterior import chains

    seen, diagnose = [], chains.diagnose
    monkeypatch.setattr(chains, "diagnose", lambda probabilities, *args, **options: (
        seen.append(probabilities) or diagnose(probabilities, *args, **options)))
    X = np.random.default_rng(5).standard_normal((40, 3))
    X[:, 1] += X[:, 0]
    est = ProDAG(lam=2.0, max_epochs=5, n_samples=4, n_chains=2, seed=0, progress=False)
    est.fit(X)
    assert seen[0].any()  # each chain's edge probabilities, ...
    monkeypatch.setattr(negligible, "EFFECT_SIZE", 1e9)  # ... and with every entry negligible
    est.fit(X)
    assert not seen[1].any() and not est.sample(50).any()


def test_without_the_rule_the_same_fit_counts_more_edges(independent_fit, monkeypatch):
    est = independent_fit
    with_rule = est.sample(200)
    monkeypatch.setattr(negligible, "EFFECT_SIZE", 0.0)
    raw = est.sample(200)
    assert np.array_equal(with_rule != 0, (raw != 0) & (with_rule != 0))  # only drops
    dropped = (raw != 0) & (with_rule == 0)
    sizes = negligible.effect_sizes(raw, est.noise_variance_ * est.scale_ ** 2)
    kept = with_rule != 0
    kept[:, 0, 1] = False  # the required edge is exempt
    assert dropped.any() and np.all(sizes[dropped] <= 0.2) and np.all(sizes[kept] > 0.2)
    np.testing.assert_array_equal(raw[with_rule != 0], with_rule[with_rule != 0])

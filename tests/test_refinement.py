"""Metropolis refinement (``prodag.inference.refinement``, ``TrainingOptions(refine_steps=...)``).

Oracle: on three nodes the model's exact edge probabilities come from importance sampling
(``oracles.three_node_oracle``). The fitted mixture misses them; its draws refined by
the Metropolis steps must reach them within the Monte Carlo errors, and a wrong target (the
other radius) must lie outside, so the comparison can fail.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oracles import chain_data, three_node_oracle
from prodag import ProDAG, TrainingOptions
from prodag.graph import is_dag
from prodag.config import spec
from prodag.inference import compiled, draws, moves, refinement
from prodag.inputs.knowledge import Knowledge
from prodag.io.model_file import ModelFileError
from prodag.models import make_model
from prodag.posterior import negligible, samples
from prodag.projection import make_projector


def _refined_fit(X, lam, steps, **options):
    return ProDAG(**{"lam": lam, "noise_variance": 1.0, "seed": 0, "progress": False,
                     "n_chains": 1, "training": TrainingOptions(refine_steps=steps), **options}
                  ).fit(X)


@pytest.fixture(scope="module")
def three_nodes():
    X = chain_data(3)
    return X, _refined_fit(X, 1.0, 1500)


def test_refined_draws_reach_the_exact_posterior_on_three_nodes(three_nodes, monkeypatch):
    # the oracle is P(w != 0) under the model: every nonzero entry counts, so the reporting
    # rule that drops entries of negligible effect (prodag.posterior.negligible) is off here
    monkeypatch.setattr(negligible, "EFFECT_SIZE", 0.0)
    X, est = three_nodes
    oracle, oracle_error = three_node_oracle(X, 1.0)
    off = ~np.eye(3, dtype=bool)
    refined = np.mean(est.sample(1000) != 0, axis=0)
    draws_error = np.sqrt(refined * (1 - refined) / 1000)
    tolerance = 4 * np.sqrt(draws_error ** 2 + oracle_error ** 2) + 0.01
    assert np.all(np.abs(refined - oracle)[off] < tolerance[off]), (refined, oracle)
    wrong, _ = three_node_oracle(X, np.inf)
    assert np.any(np.abs(refined - wrong)[off] > tolerance[off])
    # the mean-field mixture itself is detectably off somewhere: the refinement is needed
    unrefined = np.mean(_refined_fit(X, 1.0, 0).sample(1000) != 0, axis=0)
    assert np.any(np.abs(unrefined - oracle)[off] > tolerance[off]), (unrefined, oracle)


def test_refined_draws_are_the_posterior_and_survive_a_round_trip(three_nodes, tmp_path):
    _, est = three_nodes
    assert est.refined_.weights_tilde["W"].shape == (1000, 3, 3)
    assert np.all((est.refined_.acceptance > 0.05) & (est.refined_.acceptance < 1))
    samples = est.sample(1500)  # beyond the 1000 stored draws: with replacement
    assert all(is_dag(s != 0) for s in samples[:200])
    assert np.array_equal(est.sample(300), samples[:300])
    assert not np.array_equal(est.sample(300, seed=5), samples[:300])
    est.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert np.array_equal(loaded.sample(1500), samples)
    assert np.array_equal(loaded.refined_.acceptance, est.refined_.acceptance)


def test_a_model_file_with_damaged_refined_draws_is_refused(three_nodes, tmp_path):
    _, est = three_nodes
    est.save(tmp_path / "model.npz")
    with np.load(tmp_path / "model.npz") as saved:
        arrays = dict(saved)
    arrays["arrays/refined/lams"] = arrays["arrays/refined/lams"][:-1]
    np.savez(tmp_path / "short.npz", **arrays)
    with pytest.raises(ModelFileError, match="refined/noise"):
        ProDAG.load(tmp_path / "short.npz")
    del arrays["arrays/refined/acceptance"]
    np.savez(tmp_path / "missing.npz", **arrays)
    with pytest.raises(ModelFileError, match="refined posterior expects"):
        ProDAG.load(tmp_path / "missing.npz")


def test_a_model_file_from_before_jumps_reads_with_no_jumps(three_nodes, tmp_path):
    """Format 8 files hold the acceptance of the three moves within a mode; they load with a
    0 for the jumps between fits, the rest unchanged."""
    _, est = three_nodes
    est.save(tmp_path / "model.npz")
    with np.load(tmp_path / "model.npz") as saved:
        arrays = dict(saved)
    arrays["arrays/refined/acceptance"] = arrays["arrays/refined/acceptance"][:3]
    np.savez(tmp_path / "old.npz", **arrays)
    loaded = ProDAG.load(tmp_path / "old.npz")
    np.testing.assert_array_equal(loaded.refined_.acceptance,
                                  [*est.refined_.acceptance[:3], 0.0])
    assert np.array_equal(loaded.sample(300), est.sample(300))


@pytest.mark.slow  # two compilations of its own (additive SEM, knowledge): about 15 s
def test_refinement_runs_through_any_sem_and_keeps_forbidden_edges_out():
    est = _refined_fit(chain_data(3), 1.0, 200, sem="additive", max_epochs=3, forbidden=[(0, 1)])
    samples = est.sample(1000)
    assert all(is_dag(s != 0) for s in samples[:200])
    assert np.all(samples[:, 0, 1] == 0) and np.any(samples[:, 1, 0] != 0)
    assert est.refined_.weights_tilde.keys() == est.components_[0].q.loc.keys()


def test_the_reversal_move_is_an_involution_and_site_moves_touch_one_entry():
    key = jax.random.PRNGKey(3)
    weights = {"W": jax.random.normal(key, (50, 4, 4)), "b": jnp.ones((50, 2))}
    moved, kind = moves.propose(key, weights, "W", 1.0)
    while refinement.MOVES[int(kind)] != "reverse":
        key = jax.random.fold_in(key, 1)
        moved, kind = moves.propose(key, weights, "W", 1.0)
    back, _ = moves.propose(key, moved, "W", 1.0)
    assert np.array_equal(back["W"], weights["W"]) and not np.array_equal(moved["W"],
                                                                         weights["W"])
    while refinement.MOVES[int(kind)] != "site":
        key = jax.random.fold_in(key, 2)
        moved, kind = moves.propose(key, weights, "W", 1.0)
    changed = sum(np.sum(np.asarray(moved[k]) != np.asarray(weights[k]), axis=tuple(
        range(1, weights[k].ndim))) for k in weights)
    assert np.all(changed <= 1) and changed.sum() > 40


def test_with_knowledge_the_moves_change_only_the_allowed_weights():
    key = jax.random.PRNGKey(5)
    weights = {"W": jax.random.normal(key, (200, 4, 4)), "b": jnp.ones((200, 2))}
    allowed = ~np.eye(4, dtype=bool)
    allowed[0, 1] = allowed[1, 0] = allowed[2, 3] = False  # 3 → 2 stays allowed
    movable = moves.movable(weights, "W", allowed)
    propose = jax.jit(lambda k: moves.propose(k, weights, "W", 1.0, movable))
    seen = set()
    for step in range(40):
        moved, kind = propose(jax.random.fold_in(key, step))
        kind = refinement.MOVES[int(kind)]
        seen.add(kind)
        changed = np.asarray(moved["W"]) != np.asarray(weights["W"])
        assert not changed[:, ~allowed & ~allowed.T].any(), kind  # never 0 ↔ 1
        if kind == "reverse":  # only pairs with an allowed direction, 2 ↔ 3 among them
            assert changed.any() and not changed[:, 0, 1].any()
        else:
            assert not changed[:, ~allowed].any(), kind
            assert changed.any() or kind == "site"
            if kind == "joint":
                assert np.all(np.asarray(moved["b"]) != 1.0)
    assert seen == set(refinement.MOVES)


def test_refinement_with_forbidden_edges_reaches_the_exact_posterior():
    """Draws of the prior refined under a forbidden edge reach the oracle's posterior over
    the DAGs without it, and miss the unrestricted one."""
    X = chain_data(3)
    allowed = ~np.eye(3, dtype=bool)
    allowed[2, 0] = False
    knowledge = Knowledge(3, forbidden=((2, 0),))
    model, n = make_model("linear"), 1000
    kernel = compiled.jit_refinement(refinement.build_kernel(
        model, make_projector("exact", knowledge=knowledge), None, knowledge.allowed_mask()))
    target = refinement.Target(model.prepare_data(jnp.asarray(X - X.mean(axis=0))),
                               jnp.full(n, 1.0), jnp.ones((n, 1)), 0.0, 1.0)
    start = {"W": jax.random.normal(jax.random.PRNGKey(1), (n, 3, 3))}
    refined = refinement.refine(kernel, start, target, jax.random.PRNGKey(2), 1500)
    graphs = np.asarray(draws.project_in_batches(kernel, refined.weights_tilde,
                                                      refined.lams)[1])
    probabilities = np.mean(graphs != 0, axis=0)
    oracle, oracle_error = three_node_oracle(X, 1.0, allowed=allowed)
    draws_error = np.sqrt(probabilities * (1 - probabilities) / n)
    tolerance = 4 * np.sqrt(draws_error ** 2 + oracle_error ** 2) + 0.01
    assert np.all(probabilities[~allowed] == 0)
    assert np.all(np.abs(probabilities - oracle)[allowed] < tolerance[allowed]), (
        probabilities, oracle)
    unrestricted, _ = three_node_oracle(X, 1.0)
    assert np.any(np.abs(probabilities - unrestricted) > tolerance)


def test_the_target_is_the_prior_times_the_likelihood_of_the_projected_weights():
    model, project = make_model("linear"), make_projector("exact")
    X = jnp.asarray(chain_data(3) - chain_data(3).mean(axis=0))
    W_tilde = jax.random.normal(jax.random.PRNGKey(0), (4, 3, 3))
    lams = jnp.array([0.5, 1.0, 2.0, jnp.inf])
    target = refinement.Target(model.prepare_data(X), lams, jnp.ones((4, 1)), 0.0, 2.0)
    value = refinement.log_target(model, project, {"W": W_tilde}, target)
    W = project(W_tilde, lams)
    for i in range(4):
        log_lik = model.log_likelihood({"W": W[i:i + 1]}, model.prepare_data(X), jnp.ones(1))
        log_prior = -0.5 * jnp.sum((W_tilde[i] / 2.0) ** 2)
        assert np.isclose(value[i], log_prior + log_lik[0], rtol=1e-5)


@pytest.mark.parametrize("noise", ["estimate", "equal"])
def test_learned_noise_is_integrated_out_of_the_target(noise):
    """With learned noise the target's likelihood is ``∫ p(X | W, σ²) dσ²/σ²``: its
    differences between draws are those of the closed form, ``−½ Σ_k n log RSS_k``
    (per variable) or ``−½ n p log Σ_k RSS_k`` (shared); each draw's noise is then its
    maximiser ``RSS_k / n`` (or the shared mean)."""
    model, project = make_model("linear"), make_projector("exact")
    X = jnp.asarray(chain_data(3) - chain_data(3).mean(axis=0))
    n = X.shape[0]
    W_tilde = jax.random.normal(jax.random.PRNGKey(0), (4, 3, 3))
    lams = jnp.full(4, 2.0)
    target = refinement.Target(model.prepare_data(X), lams, jnp.ones((4, 1)), 0.0, 2.0)
    value = np.asarray(refinement.log_target(model, project, {"W": W_tilde}, target, noise))
    W = np.asarray(project(W_tilde, lams))
    rss = np.array([np.sum((np.asarray(X) - np.asarray(X) @ w) ** 2, axis=0) for w in W])
    log_prior = -0.5 * np.sum((np.asarray(W_tilde) / 2.0) ** 2, axis=(1, 2))
    closed = (-0.5 * n * np.log(rss).sum(axis=1) if noise == "estimate"
              else -0.5 * n * 3 * np.log(rss.sum(axis=1)))
    np.testing.assert_allclose(value - value[0], (log_prior + closed) - (log_prior + closed)[0],
                               rtol=1e-4, atol=1e-3)
    conditional = np.asarray(refinement.conditional_noise(model, project, noise,
                                                          {"W": W_tilde}, target))
    expected = rss / n if noise == "estimate" else rss.mean(axis=1, keepdims=True) / n
    np.testing.assert_allclose(conditional, expected, rtol=1e-4)


def test_with_a_variance_per_variable_refinement_splits_markov_equivalent_orientations(
        monkeypatch):
    """Two standardised variables with a variance each: ``1 → 2`` and ``2 → 1`` are Markov
    equivalent and, the columns sharing one scale, the model's own posterior gives each
    exactly half (the target is symmetric in the two). From one start the mixture holds one
    orientation (P about 0.02 / 0.98 over seeds 0-2); refinement that integrates the
    variances out reaches the split from there, and with the fitted variances held fixed it
    cannot leave the start's orientation. (With three starts the mixture may already hold
    both, as the ELBO ranks them by chance, and the fixed-variance run proves nothing.)"""
    rng = np.random.default_rng(3)
    x1 = rng.standard_normal(200)
    X = np.column_stack([x1, 0.8 * x1 + 0.6 * rng.standard_normal(200)])
    options = {"lam": 2.0, "seed": 0, "progress": False, "n_chains": 1, "standardize": True,
               "noise_variance": "estimate",
               "training": TrainingOptions(refine_steps=300, n_restarts=1)}
    P = ProDAG(**options).fit(X).edge_probabilities(1000)
    assert P[0, 1] + P[1, 0] > 0.95  # the edge is certain, its direction is not
    assert abs(P[0, 1] - P[1, 0]) < 0.15, P  # 1000 draws: its sd is about 0.03
    monkeypatch.setattr(refinement, "COLLAPSIBLE", ())  # the fitted variances held fixed
    compiled.refinement_kernel.cache_clear()
    try:
        P_fixed = ProDAG(**options).fit(X).edge_probabilities(1000)
    finally:
        compiled.refinement_kernel.cache_clear()
    assert abs(P_fixed[0, 1] - P_fixed[1, 0]) > 0.3, (P, P_fixed)


def test_a_step_accepts_by_the_target_ratio_and_counts_only_the_counted_draws():
    """``refinement.step``: an accepted draw holds the proposal and its ``log π``, a rejected
    one its old state; a padding copy (``counted`` 0) moves but is not counted."""
    model, project = make_model("linear"), make_projector("exact")
    X = jnp.asarray(chain_data(3) - chain_data(3).mean(axis=0))
    W_tilde = {"W": 0.3 * jax.random.normal(jax.random.PRNGKey(0), (4, 3, 3))}
    target = refinement.Target(model.prepare_data(X), jnp.full(4, 2.0), jnp.ones((4, 1)),
                               0.0, 1.0)
    state = refinement.init(model, project, None, W_tilde, target, jnp.array([1, 1, 1, 0]))
    counts = 0
    for t in range(20):
        new, info = refinement.step(model, project, None, target, state,
                                    jax.random.PRNGKey(t))
        value = refinement.log_target(model, project, new.weights_tilde, target)
        np.testing.assert_allclose(new.log_target, value, rtol=1e-5)
        kept = ~np.asarray(info.accepted)
        np.testing.assert_array_equal(np.asarray(new.weights_tilde["W"])[kept],
                                      np.asarray(state.weights_tilde["W"])[kept])
        proposed = np.asarray(new.counts - state.counts)
        assert proposed[1].sum() == 3  # three counted draws proposed a move each
        assert proposed[0].sum() == np.asarray(info.accepted)[:3].sum()
        counts += int(np.asarray(info.accepted).sum())
        state = new
    assert 0 < counts < 80  # some moves accepted, some not


def test_refine_runs_its_steps_with_one_compiled_loop_and_the_keys_of_its_blocks():
    """``refinement.refine`` with 130 steps (a block of ``STEPS_PER_CALL`` = 100 and one of
    30) traces its step loop once, and its draws are those of 130 single steps with each
    block's keys, ``split(fold_in(key, steps done), block)``."""
    model, project = make_model("linear"), make_projector("exact")
    X = jnp.asarray(chain_data(3) - chain_data(3).mean(axis=0))
    W_tilde = {"W": 0.3 * jax.random.normal(jax.random.PRNGKey(0), (8, 3, 3))}
    target = refinement.Target(model.prepare_data(X), jnp.full(8, 2.0), jnp.ones((8, 1)),
                               0.0, 1.0)
    kernel = refinement.build_kernel(model, project)
    traced = []

    def run_steps(*args):
        traced.append(1)
        return kernel.run_steps(*args)

    key = jax.random.PRNGKey(5)
    refined = refinement.refine(kernel._replace(run_steps=jax.jit(run_steps)), W_tilde,
                                target, key, 130)
    assert len(traced) == 1
    state = refinement.init(model, project, None, W_tilde, target, jnp.ones(8))
    one_step = jax.jit(lambda s, k: refinement.step(model, project, None, target, s, k)[0])
    for done, block in ((0, 100), (100, 30)):
        for step_key in jax.random.split(jax.random.fold_in(key, done), block):
            state = one_step(state, step_key)
    np.testing.assert_allclose(refined.weights_tilde["W"], state.weights_tilde["W"],
                               rtol=1e-5, atol=1e-6)
    assert 0 < refined.acceptance[:len(moves.MOVES)].sum()


def test_draw_rows_extend_a_shorter_request():
    key = jax.random.PRNGKey(0)
    long, short = samples.draw_rows(10, 25, key), samples.draw_rows(10, 7, key)
    assert np.array_equal(long[:7], short)
    assert sorted(long[:10]) == list(range(10)) and long.max() < 10


@pytest.mark.slow  # a compilation of its own (the resampled target): about 13 s
def test_bagged_draws_reach_the_average_of_their_resamples_posteriors(monkeypatch):
    """BayesBag refined: each chain's draws target the exact posterior given its own
    resample, so the pooled probabilities are the resamples' average (each chain an equal
    share; the draws' split between chains adds its binomial error). Every nonzero entry
    counts, as in the oracle (the negligible-edge rule is off)."""
    monkeypatch.setattr(negligible, "EFFECT_SIZE", 0.0)
    X = chain_data(3)
    est = _refined_fit(X, 1.0, 1500, bootstrap=True, n_chains=2)
    centred = X - X.mean(axis=0)
    rows = [np.random.default_rng([est.seed_, c]).integers(0, len(X), len(X)) for c in (0, 1)]
    (first, first_error), (second, second_error) = (
        three_node_oracle(centred[r], 1.0, centre=False) for r in rows)
    off = ~np.eye(3, dtype=bool)
    refined = est.edge_probabilities(1000)
    split_error = 0.5 * np.abs(first - second) / np.sqrt(1000)
    tolerance = 4 * np.sqrt(refined * (1 - refined) / 1000 + split_error ** 2
                            + (first_error ** 2 + second_error ** 2) / 4) + 0.01
    bagged = (first + second) / 2
    assert np.all(np.abs(refined - bagged)[off] < tolerance[off]), (refined, bagged)
    whole, _ = three_node_oracle(X, 1.0)
    assert np.any(np.abs(refined - whole)[off] > tolerance[off]), (refined, whole)


def test_the_resampled_target_takes_each_draws_own_data():
    model, project = make_model("linear"), make_projector("exact")
    X = chain_data(3) - chain_data(3).mean(axis=0)
    resamples = [jnp.asarray(X[rows]) for rows in ([0, 0, 1, 2, 3, 4], [5, 5, 5, 1, 2, 3])]
    W_tilde = {"W": jax.random.normal(jax.random.PRNGKey(0), (4, 3, 3))}
    lams, noise = jnp.array([0.5, 1.0, 2.0, jnp.inf]), jnp.ones((4, 1))
    stacked = jax.tree.map(lambda *d: jnp.stack(d), *map(model.prepare_data, resamples))
    chain = jnp.array([0, 1, 1, 0])
    value = refinement.log_target(model, project, W_tilde, refinement.Target(
        stacked, lams, noise, 0.0, 2.0, chain))
    alone = [refinement.log_target(model, project, W_tilde, refinement.Target(
        model.prepare_data(Z), lams, noise, 0.0, 2.0)) for Z in resamples]
    assert np.allclose(value, np.choose(np.asarray(chain), alone), rtol=1e-6)
    assert not np.allclose(alone[0], alone[1])


def test_negative_refinement_steps_are_refused():
    with pytest.raises(ValueError, match="refine_steps"):
        TrainingOptions(refine_steps=-1)


@pytest.mark.parametrize("sem, p, options, steps", [
    ("linear", 3, {}, 6000), ("linear", 5, {}, 6000), ("linear", 7, {}, 3061),
    ("linear", 8, {}, 2343),
    ("linear", 11, {}, 1239), ("linear", 20, {}, 375), ("linear", 50, {}, 60),
    ("linear", 100, {}, 15), ("linear", 122, {}, 10), ("linear", 123, {}, 10),
    ("linear", 1000, {}, 10),
    ("additive", 10, {}, 0), ("mlp", 10, {}, 0), ("linear", 10, {"sampler": "smc"}, 0),
    ("linear", 100, {"refine_steps": 700}, 700), ("linear", 5, {"refine_steps": 0}, 0)])
def test_the_default_refinement_is_in_proportion_to_the_linear_fit(sem, p, options, steps,
                                                                   library_refinement_cap,
                                                                   monkeypatch):
    from prodag.config.spec import resolved_refine_steps

    monkeypatch.setattr(spec, "MAX_AUTO_REFINE_STEPS", library_refinement_cap)
    settings = ProDAG(sem=sem, training=TrainingOptions(**options))
    assert resolved_refine_steps(settings, p) == steps


def test_on_candidate_parents_the_default_refinement_follows_a_draws_width(
        library_refinement_cap, monkeypatch):
    """A step's arithmetic is about ``draws · p · width``: on candidate parents a draw holds
    the slots' width a variable instead of ``p``, so the default refines by more steps, in
    proportion (375 · (20 / p) · (20 / width)); the dense model is the case width = p."""
    from prodag.config.spec import resolve, resolved_refine_steps

    monkeypatch.setattr(spec, "MAX_AUTO_REFINE_STEPS", library_refinement_cap)
    settings = ProDAG()
    assert resolved_refine_steps(settings, 100, 100) == resolved_refine_steps(settings, 100) == 15
    assert resolved_refine_steps(settings, 100, 25) == 60
    assert resolved_refine_steps(settings, 20, 10) == 750
    assert resolved_refine_steps(settings, 1000, 40) == spec.MIN_AUTO_REFINE_STEPS
    assert resolved_refine_steps(ProDAG(training=TrainingOptions(refine_steps=7)), 100, 25) == 7
    # resolved from the fit's knowledge: the most candidates of any variable
    p = 100
    nearest = tuple(tuple(sorted((k + d) % p for d in range(1, 26 if k else 21)))
                    for k in range(p))
    assert resolve(settings, Knowledge(p, candidates=nearest), p).refine_steps == 60
    assert resolve(settings, Knowledge(p, forbidden=((0, 1),)), p).refine_steps == 15
    assert resolve(settings, None, p).refine_steps == 15


def test_a_default_fit_says_how_it_refined_and_keeps_that_through_a_round_trip(three_nodes,
                                                                                 tmp_path):
    """A three-node fit refines by its default steps and says so. (The suite caps the default
    at ``conftest.SUITE_REFINE_STEPS``; the library's own cap is the parametrised test
    above.)"""
    X, _ = three_nodes
    est = ProDAG(lam=1.0, noise_variance=1.0, seed=0, progress=False, n_chains=1,
                 max_epochs=20, n_samples=20, training=TrainingOptions(n_restarts=1)).fit(X)
    report = est.diagnostics_["refinement"]
    steps = spec.resolved_refine_steps(est, 3)
    assert steps > 0 and report["chosen"] == "auto"
    assert est.spec_.refine_steps == report["steps"] == steps
    assert report["draws"] == len(est.refined_.lams) == 1000
    assert report["seconds_per_step"] == pytest.approx(report["seconds"] / steps, abs=1e-4)
    assert set(report["acceptance"]) == set(refinement.KINDS)
    assert np.allclose(list(report["acceptance"].values()), est.refined_.acceptance, atol=1e-4)
    est.save(tmp_path / "model.npz")
    assert ProDAG.load(tmp_path / "model.npz").diagnostics_["refinement"] == report
    # a file whose report lost its steps is refused
    with np.load(tmp_path / "model.npz") as archive:
        arrays = {name: archive[name] for name in archive.files}
    import json
    metadata = json.loads(str(arrays["metadata"]))
    metadata["diagnostics_"]["refinement"] = {"chosen": "auto"}
    arrays["metadata"] = np.asarray(json.dumps(metadata))
    np.savez(tmp_path / "damaged.npz", **arrays)
    with pytest.raises(ModelFileError, match="refinement"):
        ProDAG.load(tmp_path / "damaged.npz")

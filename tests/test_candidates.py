"""Candidate parents: the lasso-path screen, its rules, and a fit restricted to it."""

import json

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
                  training=TrainingOptions(candidate_parents=1, refine_steps=20,
                                           n_restarts=4)).fit(X)


def test_no_draw_has_an_edge_outside_the_candidates_and_the_mask_round_trips(
        restricted_fit, tmp_path):
    """The refinement runs on the candidate slots (``refinement.build_slot_kernel``), every
    kind of move accepted at times; its draws are kept on the slots, and sampled as the dense
    projection of the same draws would sample them, on the candidates. A saved fit keeps them
    there, and a file of format 9 (dense draws) samples the same."""
    from prodag.inference import compiled
    from prodag.posterior import samples

    mask = restricted_fit.candidate_parents_
    assert mask is not None and mask.sum() < 30
    refined, config = restricted_fit.refined_, restricted_fit.spec_.config
    table = compiled.slot_refinement_kernel(config).table
    assert refined.weights_tilde["W"].shape[1:] == table.parents.shape
    assert table.parents.shape[1] < 5 and table.holds(refined.weights_tilde)
    acceptance = restricted_fit.diagnostics_["refinement"]["acceptance"]
    assert all(0 < acceptance[kind] < 1 for kind in ("site", "joint", "reverse", "jump"))
    draws = restricted_fit.sample(300, seed=0)
    assert np.all(draws[:, ~mask] == 0) and np.any(draws[:, mask] != 0)
    dense = refined._replace(weights_tilde={"W": table.dense(refined.weights_tilde["W"])})
    assert samples.projection_kernel(config, dense).table is None
    slot_weights, slot_graphs = samples.stored_draws(config, refined)
    dense_weights, dense_graphs = samples.stored_draws(config, dense)
    np.testing.assert_array_equal(slot_graphs, dense_graphs)
    np.testing.assert_array_equal(slot_weights["W"], dense_weights["W"])
    path = tmp_path / "model.npz"
    restricted_fit.save(path)
    loaded = ProDAG.load(path)
    assert np.array_equal(loaded.candidate_parents_, mask)
    assert np.array_equal(loaded.refined_.weights_tilde["W"], refined.weights_tilde["W"])
    assert np.array_equal(loaded.sample(300, seed=0), draws)
    with np.load(path) as archive:  # as format 9 wrote it: the draws as (n, p, p) matrices
        arrays = dict(archive)
    metadata = json.loads(str(arrays["metadata"]))
    arrays["metadata"] = np.asarray(json.dumps({**metadata, "format_version": 9}))
    arrays["arrays/refined/weights_tilde/W"] = dense.weights_tilde["W"]
    np.savez(path, **arrays)
    assert np.array_equal(ProDAG.load(path).sample(300, seed=0), draws)


def test_edges_counted_on_the_slots_are_those_of_the_dense_draws(restricted_fit):
    """The refined draws' edge probabilities counted on their slots
    (``samples.stored_edge_probabilities``) equal those of the same draws made dense, entry
    for entry; the pooling's counts of a component's draws made on the slots
    (``pool.edge_counter``) agree with its dense draws' within Monte Carlo error."""
    from types import SimpleNamespace

    import jax
    import jax.numpy as jnp

    from prodag.fit import pool
    from prodag.inference import compiled, draws, noise_variance_of
    from prodag.posterior import negligible, samples

    config, refined = restricted_fit.spec_.config, restricted_fit.refined_
    table = compiled.slot_refinement_kernel(config).table
    dense = refined._replace(weights_tilde={"W": table.dense(refined.weights_tilde["W"])})
    n = len(refined.lams)
    expected = sum(np.sum(graphs != 0, axis=0) for _, graphs in
                   samples.stored_batches(config, dense, np.arange(n))) / n
    found = samples.stored_edge_probabilities(config, refined)
    assert np.array_equal(found, expected) and found.sum() > 0
    assert samples.projection_kernel(config, refined).table is not None

    lam = float(restricted_fit.component_lams_[0])
    params = jax.tree.map(jnp.asarray, restricted_fit.components_[0])
    noise = restricted_fit.posterior_.noise_variance
    variances = np.asarray(noise_variance_of(params, jnp.asarray(noise)))
    assert compiled.slot_sampler(config) is not None
    m = 4000
    on_slots = pool.edge_counter(config, [(lam, SimpleNamespace(params=params))], noise)(
        0, jax.random.PRNGKey(1), m) / m
    on_dense = draws.edge_counts(compiled.sampler(config), params, jax.random.PRNGKey(2), m, lam,
                                 lambda w, g: negligible.without_negligible(
                                     config.sem, w, g, variances, config.knowledge)[1]) / m
    assert np.all(on_slots[~restricted_fit.candidate_parents_] == 0)
    assert np.any((0 < on_slots) & (on_slots < 1)) and on_slots.max() == 1
    mean = (on_slots + on_dense) / 2
    error = np.sqrt(2 * mean * (1 - mean) / m)
    assert np.all(np.abs(on_slots - on_dense) <= 5 * error + 1 / m)


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
    ({}, False, 2), ({}, True, 8), ({"n_restarts": 3}, True, 3),
    ({"init": "prior"}, True, 3)])
def test_a_screened_linear_fit_takes_each_data_start_four_times(training, screened, expected):
    from prodag.config.spec import resolve

    mask = ~np.eye(100, dtype=bool)
    knowledge = Knowledge(100, candidates=candidates.from_mask(mask)) if screened else None
    spec = resolve(ProDAG(training=TrainingOptions(**training)), knowledge, 100)
    assert spec.restarts == expected


@pytest.mark.parametrize("settings, screened, expected", [
    ({}, False, 0.03), ({}, True, 0.1), ({"lr": 0.02}, True, 0.02),
    ({"sem": "additive"}, False, 0.1), ({"sem": "additive"}, True, 0.1)])
def test_a_screened_linear_fit_steps_at_the_faster_rate(settings, screened, expected):
    """``lr=None`` resolves to 0.03 for the linear SEM, 0.1 for it on candidate parents and
    for the other SEMs; a rate that is set is kept."""
    from prodag.config.spec import resolve

    mask = ~np.eye(100, dtype=bool)
    knowledge = Knowledge(100, candidates=candidates.from_mask(mask)) if screened else None
    assert resolve(ProDAG(**settings), knowledge, 100).optimiser.lr == expected


@pytest.mark.parametrize("sem, screened, expected", [
    ("linear", False, "PATH_SCREEN"), ("linear", True, "SCREENED_PATH_SCREEN"),
    ("additive", True, "PATH_SCREEN")])
def test_a_screened_linear_fits_path_screens_its_radii_sooner(sem, screened, expected):
    """On candidate parents a linear fit's λ path stops its trailing radii after 5 epochs (a
    margin of 1 a row); elsewhere, and for the other SEMs, after 10 (0.5 a row)."""
    from prodag.config import spec

    mask = ~np.eye(100, dtype=bool)
    knowledge = Knowledge(100, candidates=candidates.from_mask(mask)) if screened else None
    assert spec.resolve(ProDAG(sem=sem), knowledge, 100).path_screen == getattr(spec, expected)
    assert spec.SCREENED_PATH_SCREEN.after < spec.PATH_SCREEN.after


@pytest.mark.parametrize("settings, screened, expected", [
    ({}, False, 5), ({}, True, 3), ({"sem": "additive"}, True, 5),
    ({"training": TrainingOptions(patience=7)}, True, 7)])
def test_a_screened_linear_fit_stops_after_three_epochs_without_gain(settings, screened,
                                                                     expected):
    """``patience=None`` resolves to 3 for the linear SEM on candidate parents and to 5
    elsewhere; a patience that is set is kept."""
    from prodag.config.spec import resolve

    mask = ~np.eye(100, dtype=bool)
    knowledge = Knowledge(100, candidates=candidates.from_mask(mask)) if screened else None
    assert resolve(ProDAG(**settings), knowledge, 100).optimiser.patience == expected


@pytest.mark.parametrize("settings, p, screened, expected", [
    ({}, 100, False, (10, 0)), ({}, 100, True, (5, 30)), ({}, 1000, True, (5, 30)),
    ({"sem": "additive"}, 100, True, (10, 0)),
    ({"training": TrainingOptions(steps_per_epoch=7, warmup_steps=0)}, 100, True, (7, 0)),
    ({"training": TrainingOptions(steps_per_epoch=7, warmup_steps=14)}, 1000, False, (7, 14))])
def test_a_screened_linear_fit_takes_five_steps_an_epoch_after_a_30_step_warm_up(
        settings, p, screened, expected):
    """``steps_per_epoch=None`` and ``warmup_steps=None`` resolve to 5 and 30 for the linear
    SEM on candidate parents, whatever its size, and to 10 and 0 elsewhere; numbers that are
    set are kept."""
    from prodag.config.spec import resolve

    mask = ~np.eye(p, dtype=bool)
    knowledge = Knowledge(p, candidates=candidates.from_mask(mask)) if screened else None
    optimiser = resolve(ProDAG(**settings), knowledge, p).optimiser
    assert (optimiser.steps_per_epoch, optimiser.warmup_steps) == expected


@pytest.mark.parametrize("value", [-1, 2.5, "30"])
def test_a_warm_up_that_is_not_a_count_of_steps_is_refused_naming_it(value):
    with pytest.raises(ValueError, match="warmup_steps"):
        TrainingOptions(warmup_steps=value)


def _screened_problem(p=12, seed=0):
    """Random weights, a sparse candidate support with two required edges, and data."""
    rng = np.random.default_rng(seed)
    mask = rng.random((p, p)) < 0.25
    np.fill_diagonal(mask, False)
    mask[0, 1] = mask[2, 3] = True
    knowledge = Knowledge(p, required=((0, 1), (2, 3)),
                          candidates=tuple(tuple(np.flatnonzero(mask[:, k])) for k in range(p)))
    return knowledge, rng.normal(size=(6, p, p)), rng.normal(size=(50, p))


def test_the_l1_step_on_the_candidate_entries_alone_is_the_full_projection():
    """``project_on_entries`` against ``project``: values, and gradients in W̃ and λ, at
    radii from 0 to none."""
    import jax
    import jax.numpy as jnp

    from prodag.projection.api import project, project_on_entries

    knowledge, W_tilde, _ = _screened_problem()
    allowed, required = knowledge.allowed_mask(), knowledge.required_mask()
    entries = np.nonzero(allowed & ~required)
    cotangent = jnp.asarray(np.random.default_rng(1).normal(size=W_tilde.shape), jnp.float32)

    def with_gradients(function):
        value = lambda w, l: jnp.sum(function(w, l) * cotangent)  # noqa: E731
        return jax.jit(lambda w, l: (function(w, l), jax.grad(value, (0, 1))(w, l)))

    full = with_gradients(lambda w, l: project(w, l, allowed=allowed, required=required))
    on_entries = with_gradients(lambda w, l: project_on_entries(
        w, l, entries, allowed=allowed, required=required))
    W_tilde = jnp.asarray(W_tilde, jnp.float32)
    for lam in (0.0, 0.7, 4.0, np.inf):
        lam = jnp.float32(lam)
        (expected, expected_grads), (found, grads) = full(W_tilde, lam), on_entries(W_tilde, lam)
        np.testing.assert_allclose(found, expected, atol=1e-5)
        assert np.array_equal(np.asarray(found) != 0, np.asarray(expected) != 0)
        if np.isfinite(lam):
            np.testing.assert_allclose(grads[0], expected_grads[0], atol=1e-5)
            np.testing.assert_allclose(grads[1], expected_grads[1], atol=1e-5)


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


@pytest.mark.slow
@pytest.mark.parametrize("p", [6, 12])
def test_the_projection_on_the_parents_slots_is_the_dense_projection(p):
    """``CandidateProjector.on_parents`` on the slots against the dense projection gathered
    onto them: values, support and gradients in W̃ and λ, with required edges, through the
    order search's kernel (p = 12) and the exact method on the dense matrix (p = 6). With
    ``-m slow`` (8 s of the suite's time): the default run checks the slots' projection
    through the refinement's log-target differences and the training step's draws below."""
    import jax
    import jax.numpy as jnp

    from prodag.projection.api import make_projector

    knowledge, W_tilde, _ = _screened_problem(p=p)
    project = make_projector("auto", 0.0, knowledge)
    table = project.table
    assert np.array_equal(table.mask(), knowledge.allowed_mask() | knowledge.required_mask())
    W_tilde = jnp.asarray(W_tilde * table.mask(), jnp.float32)
    cotangent = jnp.asarray(np.random.default_rng(1).normal(size=(*W_tilde.shape[:-1],
                                                                  table.parents.shape[1])),
                            jnp.float32)

    def with_gradients(function):
        value = lambda w, l: jnp.sum(function(w, l) * cotangent)  # noqa: E731
        return jax.jit(lambda w, l: (function(w, l), jax.grad(value, (0, 1))(w, l)))

    dense = with_gradients(lambda w, l: table.gather(project(w, l)))
    on_slots = with_gradients(lambda w, l: project.on_parents(table.gather(w), l))
    for lam in (0.0, 0.7, 4.0, np.inf):
        lam = jnp.float32(lam)
        (expected, expected_grads), (found, grads) = dense(W_tilde, lam), on_slots(W_tilde, lam)
        np.testing.assert_allclose(found, expected, atol=1e-6)
        assert np.array_equal(np.asarray(found) != 0, np.asarray(expected) != 0)
        np.testing.assert_array_equal(table.scatter(found) != 0, project(W_tilde, lam) != 0)
        if np.isfinite(lam):
            np.testing.assert_allclose(grads[0], expected_grads[0], atol=1e-5)
            np.testing.assert_allclose(grads[1], expected_grads[1], atol=1e-5)


def test_a_training_step_on_the_slots_draws_the_dense_steps_distribution():
    """The linear SEM's log-likelihood of draws made on the candidate slots has the mean and
    spread of the dense draws' (the projection zeroes the other entries), within Monte Carlo
    error; and so has its gradient in the variational means."""
    import jax
    import jax.numpy as jnp

    from prodag.models import variational
    from prodag.models.base import draw_through_graph
    from prodag.models.linear import LinearSEM
    from prodag.projection.api import make_projector

    knowledge, _, X = _screened_problem(p=12, seed=4)
    project = make_projector("auto", 0.0, knowledge)
    model = LinearSEM(knowledge.candidate_support())
    rng = np.random.default_rng(5)
    q = variational.VariationalParams(
        {"W": jnp.asarray(rng.normal(scale=0.6, size=(12, 12)), jnp.float32)},
        {"W": jnp.asarray(rng.normal(-1.0, 0.3, size=(12, 12)), jnp.float32)})
    data = model.prepare_data(jnp.asarray(X, jnp.float32))
    noise, lam, draws = jnp.ones(12, jnp.float32), jnp.float32(3.0), 2000

    def slots(q, key):
        return model.draw_log_likelihood(q, key, draws, project, lam, data, noise)

    def dense(q, key):
        weights, _ = draw_through_graph(model, q, key, draws, project, lam)
        return model.log_likelihood(weights, data, noise)

    slots, dense = jax.jit(slots), jax.jit(dense)
    found, expected = (np.asarray(f(q, jax.random.PRNGKey(seed)))
                       for f, seed in ((slots, 0), (dense, 1)))
    error = np.hypot(found.std(), expected.std()) / np.sqrt(draws)
    assert abs(found.mean() - expected.mean()) < 4 * error
    assert 0.9 < found.std() / expected.std() < 1.1
    gradients = [jax.jit(jax.grad(lambda q, key: jnp.mean(f(q, key))))(
        q, jax.random.PRNGKey(seed)).loc["W"] for f, seed in ((slots, 2), (dense, 3))]
    scale = np.abs(np.asarray(gradients[1])).max()
    assert np.abs(np.asarray(gradients[0] - gradients[1])).max() < 0.15 * scale
    assert np.all(np.asarray(gradients[0])[~project.table.mask()] == 0)


def test_lambda_max_drawn_on_the_slots_is_the_dense_draws_mean_l1_norm():
    """``λ_max``'s draws (``draws.l1_norm_batch`` at λ = ∞) made on the candidate slots: the
    mean ``‖W‖₁`` without the required edges is the dense draws' within Monte Carlo error,
    and with near-zero spread both equal the masked means' norm."""
    import jax
    import jax.numpy as jnp

    from prodag.inference import draws
    from prodag.inference.kernels import Params
    from prodag.models import variational
    from prodag.models.linear import LinearSEM
    from prodag.projection.api import make_projector

    knowledge, _, _ = _screened_problem(p=12, seed=6)
    project = make_projector("auto", 0.0, knowledge)
    slots_model, dense_model = LinearSEM(knowledge.candidate_support()), LinearSEM()
    required, support = knowledge.required_mask(), project.table.mask()
    rng = np.random.default_rng(7)
    loc = jnp.asarray(np.triu(rng.normal(scale=0.8, size=(12, 12)), 1) * support, jnp.float32)
    norms = [jax.jit(lambda params, key, model=model: draws.l1_norm_batch(
        model, project, params, key, jnp.float32(np.inf), jnp.asarray(required)))
        for model in (slots_model, dense_model)]
    for spread, tolerance in ((-1.0, None), (-12.0, 1e-3)):
        params = Params(variational.VariationalParams(
            {"W": loc}, {"W": jnp.full((12, 12), spread, jnp.float32)}))
        found, expected = (np.concatenate([np.asarray(norm(params, jax.random.PRNGKey(
            seed + b))) for b in range(10)]) for norm, seed in zip(norms, (0, 100)))
        if tolerance is None:
            error = np.hypot(found.std(), expected.std()) / np.sqrt(found.size)
            assert abs(found.mean() - expected.mean()) < 4 * error
        else:
            exact = np.abs(np.where(required, 0.0, np.asarray(loc))).sum()
            np.testing.assert_allclose([found.mean(), expected.mean()], exact, rtol=tolerance)
    assert exact < np.abs(np.asarray(loc)).sum()  # the required edges were left out


def test_refinement_on_the_slots_moves_draws_by_the_dense_targets_ratios():
    """The refinement's kernel on candidate slots against the dense one: equal log-target
    differences between two draws that agree off the support (the entries outside it never
    move, so their prior cancels from every ratio), and a reversal swaps the slots of
    ``j → k`` and ``k → j`` as the dense move swaps the entries."""
    import functools

    import jax
    import jax.numpy as jnp

    from prodag.inference import moves, refinement
    from prodag.models.linear import LinearSEM, LinearSEMOnSlots
    from prodag.projection.api import make_projector

    knowledge, _, X = _screened_problem(p=12, seed=6)
    project = make_projector("auto", 0.0, knowledge)
    table = project.table
    model = LinearSEM(knowledge.candidate_support())
    dense = refinement.build_kernel(model, project, "estimate", knowledge.allowed_mask())
    slots = refinement.build_slot_kernel(model, project, "estimate")
    assert slots is not None and slots.table is table
    rng = np.random.default_rng(7)
    first = rng.normal(scale=0.7, size=(8, 12, 12))
    second = np.where(table.mask(), rng.normal(scale=0.7, size=first.shape), first)
    data = model.prepare_data(jnp.asarray(X, jnp.float32))
    target = refinement.Target(data, jnp.full(8, 5.0, jnp.float32),
                               jnp.ones((8, 12), jnp.float32), 0.0, 1.0)
    differences = []
    for kernel, layout in ((dense, lambda w: w), (slots, table.gather)):
        log_target = jax.jit(functools.partial(
            refinement.log_target, LinearSEMOnSlots(table) if kernel is slots else model,
            project.on_parents if kernel is slots else project, collapse=kernel.collapse))
        values = [log_target({"W": layout(jnp.asarray(w, jnp.float32))}, target)
                  for w in (first, second)]
        differences.append(np.asarray(values[1] - values[0]))
    np.testing.assert_allclose(differences[1], differences[0], rtol=1e-4, atol=1e-3)

    movable = moves.movable_slots(table)
    pair = np.asarray(movable.pairs)[3]
    width = table.parents.shape[1]
    child, parent = pair[0] // width, table.parents.reshape(-1)[pair[0]]
    assert pair[1] // width == parent and table.parents.reshape(-1)[pair[1]] == child
    swapped = first.copy()
    swapped[:, parent, child], swapped[:, child, parent] = (first[:, child, parent],
                                                            first[:, parent, child])
    start = {"W": table.gather(jnp.asarray(first, jnp.float32))}
    only_this_pair = movable._replace(pairs=jnp.asarray(pair[None]))
    kinds = []
    for seed in range(100):  # the move's kind is drawn: take the first key that reverses
        proposed, move = moves.propose(jax.random.PRNGKey(seed), start, "W", 1.0,
                                       only_this_pair, on_slots=True)
        kinds.append(int(move))
        if kinds[-1] == moves.MOVES.index("reverse"):
            break
    assert kinds[-1] == moves.MOVES.index("reverse")
    np.testing.assert_array_equal(proposed["W"],
                                  table.gather(jnp.asarray(swapped, jnp.float32)))

"""The ELBO optimiser: gradients through the projection, early stopping, determinism."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag.config.spec import OptimiserOptions
from prodag.inference import Params
from prodag.inference.compiled import variational_inference
from prodag.models import variational
from prodag.models import LinearSEM
from prodag.projection import project

EXACT = partial(project, method="exact")


def _data(n=40, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, 1] += 0.8 * X[:, 0]
    X[:, 2] += -0.6 * X[:, 1]
    return X - X.mean(0)


def test_elbo_gradient_through_the_projection_matches_finite_differences():
    """Float64, fixed noise variance, a clear order and a binding ℓ1 ball: the support is
    the same for every perturbation, so the Monte Carlo objective is smooth in (loc, rho)."""
    with jax.enable_x64(True):
        p, lam = 3, 1.5
        engine = variational_inference(LinearSEM(), EXACT, OptimiserOptions(n_samples=4))
        X = _data(p=p)
        data = engine.model.prepare_data(jnp.asarray(X))
        loc = jnp.array([[0.0, 1.2, 0.4], [0.05, 0.0, -0.9], [-0.1, 0.08, 0.0]])
        rho = variational.inverse_softplus(jnp.full((p, p), 0.02))
        params = Params(variational.VariationalParams({"W": loc}, {"W": rho}))
        noise = jnp.array([1.0, 0.7, 1.3])
        key = jax.random.PRNGKey(3)

        @jax.jit
        def f(params):
            return engine.objective(params, key, data, jnp.asarray(40.0), jnp.asarray(lam), noise)

        # the ball binds in every sample (the test is about the binding case's gradient)
        weights = variational.sample(params.q, key, 4)["W"]
        assert np.all(np.sum(np.abs(np.asarray(EXACT(weights, jnp.inf))), axis=(1, 2)) > lam)

        grad = jax.grad(f)(params)
        flat, unravel = jax.flatten_util.ravel_pytree(params)
        flat_grad, _ = jax.flatten_util.ravel_pytree(grad)
        assert np.any(np.abs(np.asarray(flat_grad)) > 1e-3)
        eps = 1e-6
        for i in range(flat.shape[0]):
            step = jnp.zeros_like(flat).at[i].set(eps)
            fd = (f(unravel(flat + step)) - f(unravel(flat - step))) / (2 * eps)
            np.testing.assert_allclose(flat_grad[i], fd, rtol=1e-5, atol=1e-8)


@pytest.fixture(scope="module")
def engine():
    return variational_inference(LinearSEM(), EXACT,
                                 OptimiserOptions(n_samples=8, max_epochs=30, patience=3,
                                                 steps_per_epoch=5, epochs_per_call=4))


@pytest.fixture(scope="module")
def data():
    X = _data(n=60)
    return X, LinearSEM().prepare_data(jnp.asarray(X, jnp.float32))


def test_fit_improves_the_objective_and_is_deterministic(engine, data):
    X, prepared = data
    noise = np.ones(3, np.float32)
    start = engine.init_params(3, noise)
    key = jax.random.PRNGKey(0)
    first = engine.fit(start, prepared, 60, np.inf, noise, key)
    second = engine.fit(start, prepared, 60, np.inf, noise, key)
    assert first.history[-1] < first.history[0]
    np.testing.assert_array_equal(first.history, second.history)
    for a, b in zip(jax.tree.leaves(first.params), jax.tree.leaves(second.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    other = engine.fit(start, prepared, 60, np.inf, noise, jax.random.PRNGKey(1))
    assert not np.array_equal(first.history, other.history)


@pytest.mark.parametrize("n_batches", [3, 10, 23])
def test_the_score_is_the_mean_objective_of_its_batches_in_any_number(engine, data, n_batches):
    """``negative_elbo`` runs its batches in chunks of ``SCORE_CHUNK``: any number of batches
    gives the mean of the objective at each batch's key."""
    _, prepared = data
    noise = np.ones(3, np.float32)
    params = engine.init_params(3, noise)
    key = jax.random.PRNGKey(3)
    score = engine.negative_elbo(params, key, prepared, 60, 2.0, noise, n_batches)
    each = [float(engine.objective(params, k, prepared, jnp.float32(60), jnp.float32(2.0),
                                   jnp.asarray(noise)))
            for k in jax.random.split(key, n_batches)]
    assert score == pytest.approx(np.mean(each), rel=1e-5)


def test_early_stopping_counts_epochs_without_improvement(data):
    """With a vanishing learning rate nothing improves after the first epoch, so the loop
    stops after exactly 1 + patience epochs; with a huge patience it runs max_epochs. Epochs
    of 2 steps that end within a warm-up of 6 (or 7) steps are not counted: 3 + patience."""
    _, prepared = data
    noise = np.ones(3, np.float32)
    for patience, max_epochs, warmup, expected_epochs in [(3, 30, 0, 4), (100, 7, 0, 7),
                                                          (3, 30, 6, 6), (3, 30, 7, 6)]:
        engine = variational_inference(
            LinearSEM(), EXACT, OptimiserOptions(n_samples=8, max_epochs=max_epochs, lr=1e-12,
                                                patience=patience, steps_per_epoch=2,
                                                warmup_steps=warmup, min_delta=10.0,
                                                epochs_per_call=3))
        result = engine.fit(engine.init_params(3, noise), prepared, 60, np.inf, noise,
                            jax.random.PRNGKey(0))
        assert len(result.history) == expected_epochs


def test_learned_noise_variance_moves_towards_the_residual_variance(engine, data):
    X, prepared = data
    learner = variational_inference(LinearSEM(), EXACT,
                                    OptimiserOptions(n_samples=8, max_epochs=40, patience=40,
                                                    steps_per_epoch=5),
                                    learn_noise_variance=True)
    start = learner.init_params(3, np.full(3, 4.0, np.float32))
    result = learner.fit(start, prepared, 60, np.inf, np.full(3, 4.0, np.float32),
                         jax.random.PRNGKey(0))
    learned = np.exp(np.asarray(result.params.log_noise_variance))
    assert np.all(learned < 2.0)  # the data's residual variances are about 1


class _Recorder:
    """A progress bar that records the epochs it is shown."""

    def __init__(self):
        self.epochs = []

    def update(self, epoch, objective):
        self.epochs.append(epoch)

    def fit_done(self, epochs):
        pass

    def computed(self, member_epochs):
        pass


def test_progress_comes_after_the_first_epoch_and_the_wake_ups_change_nothing(data):
    """The host looks after epoch 1 whatever ``epochs_per_call`` is, and how often it looks
    does not change the fit (the epoch limit is an argument of the compiled loop)."""
    _, prepared = data
    noise = np.ones(3, np.float32)
    results = []
    for most in (1, 5):
        engine = variational_inference(
            LinearSEM(), EXACT, OptimiserOptions(n_samples=8, max_epochs=12, patience=100,
                                                 steps_per_epoch=2, epochs_per_call=most))
        recorder = _Recorder()
        results.append(engine.fit(engine.init_params(3, noise), prepared, 60, np.inf, noise,
                                  jax.random.PRNGKey(0), recorder))
        assert recorder.epochs[0] == 1 and recorder.epochs[-1] == 12
        assert all(b > a for a, b in zip(recorder.epochs, recorder.epochs[1:]))
    np.testing.assert_array_equal(results[0].history, results[1].history)
    for a, b in zip(jax.tree.leaves(results[0].params), jax.tree.leaves(results[1].params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_wake_ups_are_sized_to_about_a_second():
    from prodag.inference import SECONDS_PER_CALL, epochs_per_call

    assert epochs_per_call(10 * SECONDS_PER_CALL, 1, 20) == 1  # slow epochs: every epoch
    assert epochs_per_call(SECONDS_PER_CALL / 100, 1, 20) == 20  # fast ones: the most
    assert epochs_per_call(SECONDS_PER_CALL, 4, 20) == 4
    assert epochs_per_call(0.0, 0, 20) == 20


@pytest.mark.parametrize("member_batch", [0, 1, 2])
def test_an_epoch_moves_the_active_members_only_and_alike_in_any_batching(data, member_batch):
    """One epoch of three members (radii ∞, 2 and 0.5) with the middle one stopped: the stopped
    member's state is untouched, bit for bit, and the others move exactly as in an epoch of
    all three; every batching (all at once, one at a time, two at a time) gives the same
    epoch within float rounding."""
    from prodag.inference import init_state, stack

    _, prepared = data
    noise = np.ones(3, np.float32)
    reference = variational_inference(LinearSEM(), EXACT,
                                      OptimiserOptions(n_samples=8, steps_per_epoch=3))
    engine = variational_inference(
        LinearSEM(), EXACT, OptimiserOptions(n_samples=8, steps_per_epoch=3,
                                             member_batch=member_batch))
    start = engine.init_params(3, noise)
    members = engine.members([np.inf, 2.0, 0.5], noise, [0, 0, 0], [60, 60, 60], jnp.float32)
    keys = jax.random.split(jax.random.PRNGKey(5), 3)
    state = init_state(engine.kernels.optimizer, stack([start] * 3), keys, 10)
    data_sets = stack([prepared])

    def run(eng, active):  # one epoch: the compiled kernels' step
        return eng.kernels.step(state, members, data_sets, jnp.asarray(active))

    partial_epoch, full_epoch = run(engine, [True, False, True]), run(reference, [True] * 3)
    for before, after, full in zip(jax.tree.leaves(state), jax.tree.leaves(partial_epoch),
                                   jax.tree.leaves(full_epoch)):
        if np.ndim(before) == 0:  # the optimiser's shared step count
            continue
        np.testing.assert_array_equal(np.asarray(after)[1], np.asarray(before)[1])
        np.testing.assert_allclose(np.asarray(after)[[0, 2]], np.asarray(full)[[0, 2]],
                                   rtol=1e-5, atol=1e-6)
    assert np.asarray(partial_epoch.epoch).tolist() == [1, 0, 1]
    assert not np.allclose(np.asarray(partial_epoch.params.q.loc["W"])[0],
                           np.asarray(start.q.loc["W"]))


def test_members_stop_on_their_own_and_each_result_is_its_own(data):
    """Members that differ only in patience-relevant behaviour: with a vanishing learning
    rate nothing improves after the first epoch, so every member stops after 1 + patience
    epochs while a member at another radius is fitted alongside; the batch returns each
    member's own history and a score for each."""
    _, prepared = data
    noise = np.ones(3, np.float32)
    engine = variational_inference(
        LinearSEM(), EXACT, OptimiserOptions(n_samples=8, max_epochs=30, lr=1e-12, patience=3,
                                             steps_per_epoch=2, min_delta=10.0,
                                             member_batch=1))
    start = engine.init_params(3, noise)
    members = engine.members([np.inf, 1.0], noise, [0, 0], [60, 60], jnp.float32)
    results = engine.fit_members([start, start], jax.random.split(jax.random.PRNGKey(0), 2),
                                 members, jax.tree.map(lambda x: x[None], prepared))
    assert [len(result.history) for result in results] == [4, 4]
    assert results[0].objective != results[1].objective  # each scored at its own radius
    alone = engine.fit(start, prepared, 60, 1.0, noise, jax.random.PRNGKey(7))
    assert abs(alone.objective - results[1].objective) < 0.05 * abs(alone.objective)


@pytest.fixture(scope="module")
def batch_engine():
    """The engine of the batched-member tests below that let the host look as often as the
    options allow (shared so that its programs, one per batch size, compile once)."""
    return variational_inference(LinearSEM(), EXACT,
                                 OptimiserOptions(n_samples=8, max_epochs=40, patience=2,
                                                  steps_per_epoch=3))


@pytest.fixture(scope="module")
def batch_engine_each_epoch():
    """``batch_engine``'s settings with the host looking after every epoch."""
    return variational_inference(LinearSEM(), EXACT,
                                 OptimiserOptions(n_samples=8, max_epochs=40, patience=2,
                                                  steps_per_epoch=3, epochs_per_call=1))


def test_stopped_members_leave_the_batch_and_each_fit_stays_its_own(data, batch_engine,
                                                                   shrinking_batches,
                                                                   monkeypatch):
    """Five members at different radii stop at different epochs; run all at once (vmap), the
    batch shrinks as they stop (``compacted_size``), and each member's epochs and score
    agree with the same members run one at a time."""
    from prodag.inference import compacted_size
    from prodag.inference import engine as engine_module
    from prodag.inference.kernels import take_members as library_take_members

    assert [compacted_size(k, 8) for k in (1, 2, 3, 4, 5, 8)] == [1, 2, 4, 4, 8, 8]
    assert [compacted_size(k, 12) for k in (3, 5, 8, 9, 12)] == [4, 8, 8, 12, 12]
    sizes = []  # the sizes of the engine's batch copies (its last, back to all five, included)

    def take_members(tree, index):
        sizes.append(len(index))
        return library_take_members(tree, index)

    monkeypatch.setattr(engine_module, "take_members", take_members)
    _, prepared = data
    noise = np.ones(3, np.float32)
    results = []
    for member_batch in (0, 1):
        engine = batch_engine if member_batch == 0 else variational_inference(
            LinearSEM(), EXACT, OptimiserOptions(n_samples=8, max_epochs=40, patience=2,
                                                 steps_per_epoch=3, member_batch=member_batch))
        start = engine.init_params(3, noise)
        lams = [np.inf, 3.0, 1.0, 0.5, 0.2]
        members = engine.members(lams, noise, [0] * 5, [60] * 5, jnp.float32)
        results.append(engine.fit_members([start] * 5, jax.random.split(jax.random.PRNGKey(1), 5),
                                          members, jax.tree.map(lambda x: x[None], prepared)))
    together, alone = results
    assert len({len(fit.history) for fit in together}) > 1  # they stop at different epochs
    assert any(size < 5 for size in sizes)  # the batch of five shrank as they stopped
    assert [len(fit.history) for fit in together] == [len(fit.history) for fit in alone]
    for a, b in zip(together, alone):
        assert abs(a.objective - b.objective) <= 1e-4 * abs(b.objective)



def test_the_batch_copies_match_jnp_and_compile_nothing():
    """``stack``, ``pad_members`` and ``take_members`` give what the ``jnp`` operations give
    (values, dtypes, pytree) and compile no XLA program for shapes not seen before."""
    from jax import monitoring

    from prodag.inference.kernels import pad_members, stack, take_members

    rng = np.random.default_rng(0)
    trees = [{"W": jnp.asarray(rng.standard_normal((3, 5)), jnp.float32),
              "n": jnp.asarray(i, jnp.int32)} for i in range(7)]
    compiled = []

    def listener(event, seconds, **_):
        if event.endswith("backend_compile_duration"):
            compiled.append(event)

    monitoring.register_event_duration_secs_listener(listener)
    try:
        stacked = stack(trees)
        padded = pad_members(stacked, 3)
        taken = take_members(padded, np.array([9, 0, 4]))
        by_the_copies = len(compiled)
        jnp.stack([jnp.ones((2, 11))] * 3)  # a shape not seen before: the listener hears it
    finally:
        monitoring.unregister_event_duration_listener(listener)
    assert by_the_copies == 0 and len(compiled) > 0
    expected = jax.tree.map(lambda *leaves: jnp.stack(leaves), *trees)
    for got, want in ((stacked, expected),
                      (padded, jax.tree.map(lambda x: jnp.concatenate([x, x[-1:], x[-1:],
                                                                      x[-1:]]), expected)),
                      (taken, jax.tree.map(lambda x: x[jnp.array([6, 0, 4])], expected))):
        assert jax.tree.structure(got) == jax.tree.structure(want)
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            assert isinstance(a, jax.Array) and a.dtype == b.dtype
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_how_often_the_host_looks_changes_no_member_of_a_shrinking_batch(
        data, monkeypatch, batch_engine, batch_engine_each_epoch, shrinking_batches):
    """Members leave the batch only at fixed epochs (``COMPACT_EVERY``), so the batches each
    member runs in, and with them its numbers to the last bit, are the same however the calls
    are sized (by the seconds they take, in a fit): here one epoch a call against the most
    the options allow (20, so each call runs to the next ``COMPACT_EVERY`` epoch)."""
    from prodag.inference import engine as engine_module

    monkeypatch.setattr(engine_module, "epochs_per_call", lambda seconds, epochs, most: most)
    _, prepared = data
    noise = np.ones(3, np.float32)
    results = []
    for engine in (batch_engine_each_epoch, batch_engine):
        members = engine.members([np.inf, 3.0, 1.0, 0.5, 0.2, 0.1], noise, [0] * 6, [60] * 6,
                                 jnp.float32)
        results.append(engine.fit_members([engine.init_params(3, noise)] * 6,
                                          jax.random.split(jax.random.PRNGKey(1), 6), members,
                                          jax.tree.map(lambda x: x[None], prepared)))
    assert len({len(fit.history) for fit in results[0]}) > 2  # stopped at several epochs
    for a, b in zip(*results):
        np.testing.assert_array_equal(a.history, b.history)
        assert a.objective == b.objective
        for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_members_trailing_their_group_stop_where_the_screen_says(data, batch_engine_each_epoch):
    """``Screen``: from epoch ``after`` on, a member whose best objective so far trails the
    best of its group (members 0-4, and 5-6) by more than ``margin`` stops, unless (with
    ``spared = 1``) its place is next to the place of the member holding that best. The
    oracle: the same members unscreened, each screened member's epochs read off their
    histories; the others run as unscreened."""
    from prodag.inference import Screen

    _, prepared = data
    noise = np.ones(3, np.float32)
    engine = batch_engine_each_epoch
    lams = [np.inf, 1.0, 0.3, 0.1, 0.05, 3.0, 0.05]
    groups, places, after = np.array([0] * 5 + [1] * 2), np.array([0, 1, 2, 3, 4, 0, 1]), 3
    members = engine.members(lams, noise, [0] * 7, [60] * 7, jnp.float32)
    start = engine.init_params(3, noise)

    def fit_all(screen):
        return engine.fit_members([start] * 7, jax.random.split(jax.random.PRNGKey(1), 7),
                                  members, jax.tree.map(lambda x: x[None], prepared), None,
                                  screen)

    free = [result.history for result in fit_all(None)]

    def group_best(k, e):  # (best objective of epochs < e, its member) of member k's group
        return min((np.min(free[j][:e]), j) for j in np.flatnonzero(groups == groups[k]))

    gaps = [[np.min(history[:e]) - group_best(k, e)[0] for e in range(after, len(history))]
            for k, history in enumerate(free)]
    # a margin that no gap comes within rounding of, so the oracle's decisions are clear
    margin = next(m for m in (0.3, 0.35, 0.4, 0.45, 0.5)
                  if all(abs(gap - m) > 1e-3 for member in gaps for gap in member))
    for spared in (0, 1):
        screened = fit_all(Screen(groups, after, margin, places, spared))
        expected = [next((after + i for i, gap in enumerate(member) if gap > margin and abs(
            places[k] - places[group_best(k, after + i)[1]]) > spared), len(history))
                    for k, (member, history) in enumerate(zip(gaps, free))]
        assert [len(result.history) for result in screened] == expected
        assert expected != [len(h) for h in free]  # the screen stopped someone
        for k, result in enumerate(screened):
            np.testing.assert_allclose(result.history, free[k][:expected[k]], rtol=1e-4)
        if spared == 0:
            stopped = expected
    assert expected != stopped  # sparing the leader's neighbours kept one running


def test_a_call_holds_as_many_members_as_their_draws_allow():
    """On candidate parents a training step draws ``(L, p, K)`` slots, not ``(L, p, p)``: at
    p = 1000 with K = 16 a λ path's 20 members share one call (so the screen compares them
    all), where dense draws leave one member a call."""
    from prodag.inference.engine import (MEMBER_MEMORY_BYTES, MEMORY_FACTOR, PARAMETER_COPIES,
                                         VariationalInference, draw_size)

    p, options = 1000, OptimiserOptions(n_samples=50)
    start = Params(variational.init_at_prior({"W": (p, p)}, 0.0, 1.0, jnp.float32))
    parents = tuple(tuple(range(16)) for _ in range(p))
    screened = VariationalInference(LinearSEM(parents), None, options)
    dense = VariationalInference(LinearSEM(), None, options)
    assert draw_size(screened.model, p * p) == 16 * p and draw_size(dense.model, p * p) == p * p
    assert screened.members_per_call(start) == MEMBER_MEMORY_BYTES // (
        4 * (MEMORY_FACTOR * 50 * 16 * p + PARAMETER_COPIES * p * p)) >= 20
    assert dense.members_per_call(start) == 1

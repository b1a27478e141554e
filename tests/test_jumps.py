"""Jumps between fitted components in the refinement (``moves.jump``, ``Frames``).

Oracles: a jump there and back is the identity with Jacobians that cancel (so the move is a
valid Metropolis-Hastings proposal), and on two Markov-equivalent orientations whose
posterior masses are equal by symmetry, draws that all start in one orientation's component
end split evenly with jumps and stay put without them, so the comparison can fail.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag.inference import moves, refinement
from prodag.models import make_model
from prodag.projection import make_projector


def _frames(loc, scale, groups):
    return moves.frames_of(np.asarray(loc, np.float32),
                                np.log(np.asarray(scale, np.float32)), np.asarray(groups))


def test_a_jump_there_and_back_is_the_identity_and_its_jacobians_cancel():
    rng = np.random.default_rng(0)
    loc, scale = rng.normal(size=(3, 9)), rng.uniform(0.2, 2.0, size=(3, 9))
    frames = _frames(loc, scale, [7, 7, 4])  # components 0 and 1 share a group; 2 is alone
    x = {"W": jnp.asarray(rng.normal(size=(6, 3, 3)), jnp.float32)}
    component = jnp.array([0, 0, 1, 1, 2, 2])
    key = jax.random.PRNGKey(0)
    moved, there, log_j = moves.jump(key, x, component, frames)
    np.testing.assert_array_equal(there, [1, 1, 0, 0, 2, 2])
    back, again, log_j_back = moves.jump(key, moved, there, frames)
    np.testing.assert_array_equal(again, component)
    np.testing.assert_allclose(back["W"], x["W"], atol=1e-5)
    np.testing.assert_allclose(log_j + log_j_back, 0.0, atol=1e-4)
    expected = np.log(scale[1] / scale[0]).sum()
    np.testing.assert_allclose(log_j[:2], expected, rtol=1e-4)
    np.testing.assert_array_equal(moved["W"][4:], x["W"][4:])  # no partner: no move
    assert moves.frames_of(loc, np.log(scale), np.array([1, 2, 3])) is None


def _orientation_share(with_frames: bool, monkeypatch) -> float:
    """Share of 500 draws oriented ``1 → 2`` after 400 steps, every draw started in the
    ``1 → 2`` component. The reversal move is off and the other moves take small steps, as at
    larger p, where turning an edge takes many entries moving together: only a jump crosses."""
    monkeypatch.setattr(moves, "MOVE_PROBABILITIES", (0.65, 0.35, 0.0))
    monkeypatch.setattr(moves, "SITE_SCALES", (0.03,))
    monkeypatch.setattr(moves, "JOINT_SCALES", (0.03,))
    rng = np.random.default_rng(3)
    x1 = rng.standard_normal(200)
    X = np.column_stack([x1, 0.8 * x1 + 0.6 * rng.standard_normal(200)])
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # one scale: the orientations are symmetric
    model, project = make_model("linear"), make_projector("exact")
    loc = np.zeros((2, 2, 2))
    loc[0, 0, 1] = loc[1, 1, 0] = 0.8  # component 0: 1 -> 2, component 1: 2 -> 1
    scale = np.full((2, 2, 2), 0.05)
    frames = _frames(loc.reshape(2, 4), scale.reshape(2, 4), [0, 0]) if with_frames else None
    n = 500
    start = loc[0] + scale[0] * rng.standard_normal((n, 2, 2))
    target = refinement.Target(model.prepare_data(jnp.asarray(X, jnp.float32)),
                               jnp.full(n, 2.0), jnp.ones((n, 1)), 0.0, 1.0, None, frames)
    state = refinement.init(model, project, "estimate", {"W": jnp.asarray(start, jnp.float32)},
                            target, jnp.ones(n), jnp.zeros(n, jnp.int32))
    run = jax.jit(lambda s, keys: refinement.run_steps(model, project, "estimate", target, s,
                                                       keys))
    state = run(state, jax.random.split(jax.random.PRNGKey(1), 400))
    W = np.asarray(project(state.weights_tilde["W"], jnp.full(n, 2.0)))
    assert np.all((W[:, 0, 1] != 0) | (W[:, 1, 0] != 0))  # the edge stays, either way
    if with_frames:
        counts = np.asarray(state.counts)
        assert counts[1, refinement.KINDS.index("jump")] > 0.1 * 400 * n
    return float(np.mean(np.abs(W[:, 0, 1]) > np.abs(W[:, 1, 0])))


@pytest.mark.parametrize("with_frames", [True, False])
def test_jumps_split_equally_likely_orientations_that_the_start_did_not(with_frames,
                                                                          monkeypatch):
    share = _orientation_share(with_frames, monkeypatch)
    if with_frames:  # 500 draws: the share's sd is about 0.02 once mixed
        assert abs(share - 0.5) < 0.1, share
    else:
        assert share > 0.8, share


def _params(value: float, noise: float | None = None):
    from prodag.inference import Params
    from prodag.models.variational import VariationalParams

    q = VariationalParams({"W": np.full((2, 2), value, np.float32)},
                          {"W": np.full((2, 2), 0.1 * value, np.float32)})
    return Params(q, None if noise is None else np.log(np.full(1, noise, np.float32)))


def test_every_fit_of_the_run_is_a_frame_grouped_by_its_rows_and_fixed_noise():
    """The pooled components come first (their index is the draws' starting frame), then the
    chains' other fits; bagged chains jump only among their own fits, and with the noise not
    integrated out only fits of the same noise share a group."""
    from prodag.inference import FitResult
    from prodag.posterior.chains import Chain
    from prodag.fit.draws import jump_frames
    from prodag.fit.pool import PooledMixture

    fits = [_params(v) for v in (1.0, 2.0, 3.0, 4.0)]
    runs = [Chain([(1.0, FitResult(fits[0], None, 0.0)), (5.0, FitResult(fits[2], None, 0.0))],
                  None),
            Chain([(1.0, FitResult(fits[1], None, 0.0)), (9.0, FitResult(fits[3], None, 0.0))],
                  None)]
    pooled = PooledMixture([fits[1], fits[0]], np.array([0.6, 0.4]), np.array([1.0, 1.0]),
                           np.array([1, 0]), None, None, 0.0, {}, None)
    frames = jump_frames(pooled, runs, np.ones(1), bagged=False, collapsed=True,
                         dtype=jnp.float32)
    np.testing.assert_allclose(np.asarray(frames.loc)[:4, 0], [2.0, 1.0, 3.0, 4.0])
    assert frames.loc.dtype == frames.log_scale.dtype == jnp.float32
    assert np.asarray(frames.n_partners)[:4].tolist() == [3, 3, 3, 3]
    bagged = jump_frames(pooled, runs, np.ones(1), bagged=True, collapsed=True,
                         dtype=jnp.float32)
    partners = np.asarray(bagged.partners)
    assert set(partners[0, :np.asarray(bagged.n_partners)[0]]) == {3}  # chain 1: fits 2, 4
    assert set(partners[1, :np.asarray(bagged.n_partners)[1]]) == {2}  # chain 0: fits 1, 3
    noisy = [_params(v, noise) for v, noise in ((1.0, 1.0), (2.0, 2.0))]
    alone = PooledMixture(noisy, np.array([0.5, 0.5]), np.ones(2), np.zeros(2, int), None,
                          None, 0.0, {}, None)
    one_chain = [Chain([(1.0, FitResult(p, None, 0.0)) for p in noisy], None)]
    assert jump_frames(alone, one_chain, np.ones(1), bagged=False, collapsed=False,
                       dtype=jnp.float32) is None
    assert jump_frames(alone, one_chain, np.ones(1), bagged=False, collapsed=True,
                       dtype=jnp.float32) is not None

"""Property tests (hypothesis) for the projection on random and adversarial inputs."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from prodag import project
from prodag.graph import is_dag

METHODS = ["exact", "search", "path"]
# Few distinct shapes so that each (method, p) compiles once; values include ties and zeros.
VALUES = st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 0.25]) | st.floats(-3, 3, width=32)


@st.composite
def matrices(draw):
    p = draw(st.sampled_from([1, 2, 5]))
    return draw(arrays(np.float32, (4, p, p), elements=VALUES))


def check_projection(W_tilde, W, lam):
    assert W.shape == W_tilde.shape and W.dtype == W_tilde.dtype
    assert np.all(is_dag(W))
    assert np.all(np.diagonal(W, axis1=-2, axis2=-1) == 0)
    assert not np.any((W != 0) & (W_tilde == 0))
    if np.isinf(lam):
        kept = W != 0
        np.testing.assert_array_equal(W[kept], W_tilde[kept])
    else:
        assert np.all(np.abs(W).sum(axis=(-2, -1)) <= lam * (1 + 1e-5) + 1e-6)
        # the ℓ1 step shrinks magnitudes and never flips signs
        assert np.all(np.abs(W) <= np.abs(W_tilde) + 1e-6)
        assert np.all(W * W_tilde >= 0)


@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=15, deadline=None)
@given(W_tilde=matrices(), lam=st.sampled_from([np.inf, 0.0, 1.5]))
def test_projection_properties(method, W_tilde, lam):
    W = np.asarray(project(W_tilde, lam, method=method))
    check_projection(W_tilde, W, lam)


@settings(max_examples=15, deadline=None)
@given(W_tilde=matrices())
def test_search_never_beats_exact_and_exact_is_optimal_among_methods(W_tilde):
    objectives = {m: 0.5 * np.sum((W_tilde.astype(np.float64)
                                   - np.asarray(project(W_tilde, method=m))) ** 2, axis=(1, 2))
                  for m in METHODS}
    for method in ("search", "path"):
        assert np.all(objectives[method] >= objectives["exact"] - 1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_adversarial_inputs(method):
    two_cycle = np.array([[[0.0, 1.0], [1.0, 0.0]]], np.float32)
    W = np.asarray(project(two_cycle, method=method))
    assert is_dag(W).all() and (W != 0).sum() == 1  # one of the tied edges survives
    ones = np.ones((1, 5, 5), np.float32)  # every pair a tied 2-cycle, self-loops too
    W = np.asarray(project(ones, method=method))
    assert is_dag(W).all()
    if method != "path":
        assert (W != 0).sum() == 10  # a complete DAG on 5 nodes
    zeros = np.zeros((2, 3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(project(zeros, 1.0, method=method)), zeros)
    single = np.array([[[4.0]]], np.float32)
    np.testing.assert_array_equal(np.asarray(project(single, method=method)), [[[0.0]]])


def l1_reference(v: np.ndarray, lam: float) -> np.ndarray:
    """The ℓ1-ball projection of one flat vector by sorting (Duchi et al., 2008), in exact
    rational arithmetic on the gaps to the largest magnitude (an oracle free of rounding)."""
    from fractions import Fraction

    magnitudes = [Fraction(float(x)) for x in np.abs(v)]
    if sum(magnitudes) <= Fraction(lam):
        return v.astype(np.float64)
    top = max(magnitudes)
    gaps = sorted(top - m for m in magnitudes)
    total, tau = Fraction(0), None
    for k, gap in enumerate(gaps, start=1):
        total += gap
        if k * gap - total < Fraction(lam):  # entry k is kept: gap_k < (Σ_{≤k} gap + λ) / k
            tau = (total + Fraction(lam)) / k
    kept = [max(tau - (top - m), Fraction(0)) for m in magnitudes]
    return np.sign(v) * np.array([float(x) for x in kept])


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]),
       values=arrays(np.float64, (2, 3, 3), elements=VALUES),
       exponent=st.floats(-12, 1))
def test_the_l1_projection_is_exact_for_every_radius_down_to_1e_12(dtype, values, exponent):
    from prodag.projection.l1 import l1_ball_projection

    lam = 10.0 ** exponent
    W = values.astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        projected = np.asarray(l1_ball_projection(W, lam))
    assert projected.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for sample, result in zip(W, projected):
        expected = l1_reference(sample.ravel(), float(np.asarray(lam, dtype)))
        scale = min(float(np.asarray(lam, dtype)), np.abs(sample).sum())
        np.testing.assert_allclose(result.ravel(), expected, rtol=0,
                                   atol=tolerance * max(scale, np.abs(sample).max() * (
                                       np.abs(sample).sum() <= lam)))
        assert np.abs(result).sum() <= float(np.asarray(lam, dtype)) * (1 + 4 * tolerance) \
            or np.array_equal(result, sample)

"""Tests for prodag.metrics: hand-computed cases and brute-force oracles."""

import itertools

import numpy as np
import pytest

from prodag import metrics


def graph(p, edges):
    A = np.zeros((p, p), dtype=int)
    for j, k in edges:
        A[j, k] = 1
    return A


TRUTH = graph(3, [(0, 1), (1, 2)])
# the truth itself, the 1 -> 2 edge reversed, and the empty graph
SAMPLES = np.stack([TRUTH, graph(3, [(0, 1), (2, 1)]), graph(3, [])])


def brute_force_auroc(labels, scores):
    """Share of (positive, negative) pairs ranked correctly, ties counted half, in percent."""
    positives, negatives = scores[labels], scores[~labels]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0
               for a, b in itertools.product(positives, negatives))
    return 100.0 * wins / (len(positives) * len(negatives))


def test_reversed_edge_is_shd_one():
    reversed_ = graph(3, [(1, 0), (1, 2)])
    assert metrics.expected_shd(TRUTH, reversed_) == 1.0


def test_missing_plus_extra_is_shd_two():
    estimate = graph(3, [(0, 1), (0, 2)])  # 1 -> 2 missing, 0 -> 2 extra
    assert metrics.expected_shd(TRUTH, estimate) == 2.0


def test_perfect_posterior():
    stack = np.stack([TRUTH * 0.5, TRUTH * -1.3])  # weighted samples, any sign is an edge
    result = metrics.evaluate(TRUTH, stack)
    assert result == {"brier": 0.0, "eshd": 0.0, "ef1": 100.0, "auroc": 100.0}


def test_edge_probabilities_by_hand():
    expected = np.array([[0, 2 / 3, 0], [0, 0, 1 / 3], [0, 1 / 3, 0]])
    np.testing.assert_allclose(metrics.edge_probabilities(SAMPLES), expected)
    np.testing.assert_allclose(metrics.edge_probabilities(SAMPLES, weights=[2, 0, 2]),
                               [[0, 0.5, 0], [0, 0, 0.5], [0, 0, 0]])


def test_hand_computed_metrics():
    result = metrics.evaluate(TRUTH, SAMPLES)
    # Brier: (1 - 2/3)^2 + (1 - 1/3)^2 + (0 - 1/3)^2
    assert result["brier"] == pytest.approx(6 / 9)
    # SHD 0, 1, 2
    assert result["eshd"] == pytest.approx(1.0)
    # F1 100, 2*1/(2*1+1+1) = 50, 0
    assert result["ef1"] == pytest.approx(50.0)
    # positives score 2/3 and 1/3; negatives 0, 0, 0 and 1/3: (4 + 3.5) / 8
    assert result["auroc"] == pytest.approx(93.75)


def test_sample_weights_are_normalised():
    weighted = metrics.evaluate(TRUTH, SAMPLES, weights=[3.0, 1.0, 0.0])
    assert weighted["eshd"] == pytest.approx(0.25)
    assert weighted["ef1"] == pytest.approx(87.5)
    np.testing.assert_allclose(metrics.edge_probabilities(SAMPLES, [3, 1, 0])[0, 1], 1.0)
    # duplicating samples is the same as weighting them
    duplicated = np.concatenate([SAMPLES[[0, 0, 0]], SAMPLES[[1]]])
    assert metrics.evaluate(TRUTH, duplicated) == pytest.approx(weighted)


def test_two_dimensional_input_is_one_sample():
    estimate = graph(3, [(0, 1)])
    assert metrics.evaluate(TRUTH, estimate) == metrics.evaluate(TRUTH, estimate[None])
    assert metrics.brier(TRUTH, estimate) == 1.0


def test_f1_both_empty_is_perfect_and_empty_estimate_is_zero():
    empty = np.zeros((3, 3))
    assert metrics.expected_f1(empty, empty) == 100.0
    assert metrics.expected_f1(TRUTH, empty) == 0.0
    assert metrics.expected_f1(empty, TRUTH) == 0.0


def test_diagonal_is_ignored():
    with_loop = TRUTH.copy()
    with_loop[2, 2] = 1
    assert metrics.evaluate(TRUTH, with_loop) == metrics.evaluate(TRUTH, TRUTH)


def test_weighted_cyclic_truth():
    # the Sachs 18-edge graph has a directed cycle; metrics must not need acyclicity
    cycle = graph(3, [(0, 1), (1, 2), (2, 0)]) * 0.7
    estimate = graph(3, [(0, 1), (1, 2)])
    result = metrics.evaluate(cycle, estimate)
    assert result["eshd"] == 1.0 and result["brier"] == 1.0
    assert result["ef1"] == pytest.approx(200 * 2 / (4 + 1))
    assert result["auroc"] == pytest.approx(100 * (2 * 3 + 0.5 * 3) / 9)


def test_auroc_matches_brute_force_pair_count():
    rng = np.random.default_rng(0)
    p = 7
    truth = (rng.random((p, p)) < 0.3) & ~np.eye(p, dtype=bool)
    samples = (rng.random((5, p, p)) < 0.4) * rng.normal(size=(5, p, p))  # 5 samples: many ties
    mask = ~np.eye(p, dtype=bool)
    scores = metrics.edge_probabilities(samples)[mask]
    expected = brute_force_auroc(truth[mask], scores)
    assert metrics.auroc(truth, samples) == pytest.approx(expected)


def test_shd_matches_brute_force_over_pairs():
    rng = np.random.default_rng(1)
    p = 6
    truth = np.triu(rng.random((p, p)) < 0.4, k=1)
    samples = rng.random((20, p, p)) < 0.2
    samples &= ~np.eye(p, dtype=bool)
    expected = [sum((s[j, k], s[k, j]) != (truth[j, k], truth[k, j])
                    for j in range(p) for k in range(j + 1, p)) for s in samples]
    np.testing.assert_array_equal(metrics.structural_hamming_distances(truth, samples), expected)
    assert metrics.expected_shd(truth, samples) == pytest.approx(np.mean(expected))


def test_f1_matches_definition():
    rng = np.random.default_rng(2)
    p = 5
    truth = np.triu(rng.random((p, p)) < 0.5, k=1)
    samples = (rng.random((10, p, p)) < 0.3) & ~np.eye(p, dtype=bool)
    for sample, score in zip(samples, metrics.f1_scores(truth, samples)):
        tp = (sample & truth).sum()
        precision = tp / sample.sum() if sample.sum() else 0.0
        recall = tp / truth.sum()
        expected = 0.0 if tp == 0 else 200 * precision * recall / (precision + recall)
        assert score == pytest.approx(expected)


def test_auroc_undefined_warns_nan():
    with pytest.warns(RuntimeWarning, match="undefined"):
        assert np.isnan(metrics.auroc(np.zeros((3, 3)), TRUTH))
    with pytest.warns(RuntimeWarning):
        assert np.isnan(metrics.auroc(1 - np.eye(3), TRUTH))


@pytest.mark.parametrize("call,match", [
    (lambda: metrics.evaluate(np.zeros((4, 4)), SAMPLES), r"must be \(3, 3\)"),
    (lambda: metrics.evaluate(TRUTH, np.zeros((2, 3, 4))), r"shape \(L, p, p\)"),
    (lambda: metrics.evaluate(TRUTH, np.zeros((0, 3, 3))), "empty"),
    (lambda: metrics.evaluate(TRUTH, SAMPLES, weights=[1, 1]), r"shape \(3,\)"),
    (lambda: metrics.evaluate(TRUTH, SAMPLES, weights=[1, -1, 1]), "non-negative"),
    (lambda: metrics.evaluate(TRUTH, SAMPLES, weights=[0, 0, 0]), "not all zero"),
    (lambda: metrics.evaluate(TRUTH, SAMPLES * np.nan), "NaN"),
    (lambda: metrics.evaluate(TRUTH, SAMPLES.astype(str)), "numeric"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_expected_shd_over_chosen_pairs_counts_only_those_pairs():
    from prodag.evaluation.metrics import expected_shd

    truth = np.zeros((3, 3))
    truth[0, 1] = truth[1, 2] = 1
    sample = np.zeros((1, 3, 3))
    sample[0, 1, 0] = sample[0, 0, 2] = 1  # reversed 0-1, missing 1-2, extra 0-2
    assert expected_shd(truth, sample) == 3
    pairs = np.zeros((3, 3), bool)
    pairs[1, 0] = True  # the pair {0, 1}, named in either direction
    assert expected_shd(truth, sample, pairs=pairs) == 1
    pairs[2, 1] = True
    assert expected_shd(truth, sample, pairs=pairs) == 2


def test_calibration_error_by_hand():
    from prodag.evaluation.metrics import calibration_error, reliability

    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    # Off-diagonal entries in row order: (0,1) T, (0,2) F, (1,0) F, (1,2) T, (2,0) F, (2,1) F.
    probs = np.array([[0.0, 0.95, 0.05], [0.05, 0.0, 0.55], [0.05, 0.45, 0.0]])
    table = reliability(truth, probs, n_bins=10)
    assert list(table["count"]) == [3, 0, 0, 0, 1, 1, 0, 0, 0, 1]
    assert table["frequency"][0] == 0 and table["frequency"][5] == 1
    # bins: 0.05 x3 (none true) gap 0.05; 0.45 (false) gap 0.45; 0.55 (true) 0.45; 0.95 (true) 0.05
    expected = (3 * 0.05 + 0.45 + 0.45 + 0.05) / 6
    assert calibration_error(truth, probs, n_bins=10) == pytest.approx(expected)
    assert calibration_error(truth, truth.astype(float)) == 0.0
    assert calibration_error(truth, 1.0 - truth - np.eye(3)) == 1.0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration_error(truth, probs * 2)


def test_scoring_a_block_at_a_time_is_scoring_the_whole():
    rng = np.random.default_rng(4)
    truth = np.triu(rng.random((7, 7)) < 0.4, k=1)
    samples = (rng.random((23, 7, 7)) < 0.3) * rng.normal(size=(23, 7, 7))
    whole = metrics.evaluate(truth, samples)
    blocks = metrics.evaluate_batches(truth, (samples[i:i + 10] for i in range(0, 23, 10)))
    assert blocks.keys() == whole.keys()
    for name in whole:
        assert blocks[name] == pytest.approx(whole[name], rel=1e-12)
    with pytest.raises(ValueError, match="empty"):
        metrics.evaluate_batches(truth, iter(()))

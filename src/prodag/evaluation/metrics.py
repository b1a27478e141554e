"""Posterior metrics against a true graph (paper Section 6 and Appendix E).

A posterior is given by samples ``(L, p, p)`` of (weighted or binary) adjacency matrices; an
entry counts as an edge j → k when it is nonzero. A point estimate is a stack of one, and a
2-D ``(p, p)`` input is read as one sample. Optional sample ``weights (L,)`` (non-negative, not
all zero) are normalised to sum to one; by default every sample has weight 1/L.

Metrics (lower is better for the first two, higher for the last two):

* ``brier``: ``Σ_{j≠k} (1[true edge j→k] − p̂_jk)²`` with ``p̂`` the posterior edge probabilities.
* ``expected_shd``: posterior mean of the structural Hamming distance. Node pairs are compared:
  a missing, an extra and a reversed edge each count one.
* ``expected_f1``: posterior mean of the F1 score over directed edges, in percent. A reversed
  edge is a false positive and a false negative. When a sample and the truth both have no
  edges, that sample's F1 is 100 (perfect agreement).
* ``calibration_error`` (not one of the paper's four; the benchmarks report it as ``ece``):
  expected calibration error of ``p̂`` over 10 equal-width bins, with ``reliability`` the
  per-bin table behind it and ``prodag.evaluation.plotting.plot_reliability`` its picture.
* ``auroc``: area under the ROC curve of ``p̂`` against the truth over the off-diagonal
  entries, in percent; ties in ``p̂`` get average ranks (so AUROC = the probability that a
  random true edge gets a higher ``p̂`` than a random non-edge, ties counted half). It is NaN,
  with a warning, when the truth has no edges or every off-diagonal entry is an edge.

Diagonal entries are ignored throughout. The true graph may be weighted and may contain
cycles (the 18-edge Sachs graph has one): every metric here is edge-wise. All computations are
vectorised over samples. Everything is numpy; inputs may be any array-like.
"""

from __future__ import annotations

import warnings

import numpy as np

METRICS = {"brier": "Brier", "eshd": "E-SHD", "ef1": "E-F1 (%)", "auroc": "AUROC (%)"}
"""The four posterior metrics: their keys (as :func:`evaluate` returns them) and titles."""


def _edges(samples) -> np.ndarray:
    """Samples as a boolean ``(L, p, p)`` edge array."""
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples[None]
    if samples.ndim != 3 or samples.shape[1] != samples.shape[2]:
        raise ValueError("samples must have shape (L, p, p) (a stack of adjacency matrices) or "
                         f"(p, p) (one matrix); got shape {samples.shape}.")
    if samples.shape[0] == 0:
        raise ValueError("samples is empty (L = 0): pass at least one sampled graph.")
    if samples.dtype.kind not in "biuf":
        raise ValueError(f"samples must be numeric or boolean, got dtype {samples.dtype}.")
    if samples.dtype.kind == "f" and not np.isfinite(samples).all():
        raise ValueError("samples contain NaN or infinite entries; an edge must be a finite "
                         "nonzero weight. Check the method that produced them.")
    return samples != 0


def _truth(true_adjacency, p: int) -> np.ndarray:
    """The true graph as a boolean ``(p, p)`` array."""
    truth = np.asarray(true_adjacency)
    if truth.shape != (p, p):
        raise ValueError(f"true_adjacency has shape {truth.shape} but the samples are graphs on "
                         f"p = {p} nodes; it must be ({p}, {p}).")
    if truth.dtype.kind not in "biuf" or (truth.dtype.kind == "f"
                                           and not np.isfinite(truth).all()):
        raise ValueError("true_adjacency must be a finite numeric or boolean matrix.")
    loops = np.flatnonzero(np.diag(truth))
    if loops.size:
        raise ValueError(f"true_adjacency has self-loops (nonzero diagonal entries) at "
                         f"variable(s) {loops.tolist()}: a DAG has no edge from a variable "
                         "to itself; remove them.")
    return truth != 0


def _sample_weights(weights, n_samples: int) -> np.ndarray:
    """Normalised sample weights ``(L,)``."""
    if weights is None:
        return np.full(n_samples, 1.0 / n_samples)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n_samples,):
        raise ValueError(f"weights must have shape ({n_samples},), one per sample; got shape "
                         f"{weights.shape}.")
    if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    return weights / weights.sum()


def _off_diagonal(p: int) -> np.ndarray:
    return ~np.eye(p, dtype=bool)


def edge_probabilities(samples, weights=None) -> np.ndarray:
    """Posterior probability of each edge j → k: the weighted share of samples with
    ``[j, k] ≠ 0``. ``samples (L, p, p)`` or ``(p, p)``; returns ``(p, p)`` float64 in [0, 1]
    (without weights the exact share ``count / L``, never a rounded sum above 1)."""
    edges = _edges(samples)
    if weights is None:
        return edges.mean(axis=0)
    return np.tensordot(_sample_weights(weights, edges.shape[0]), edges, axes=1)


def brier(true_adjacency, samples, weights=None) -> float:
    """Brier score ``Σ_{j≠k} (1[true edge] − p̂_jk)²`` (lower is better)."""
    return _brier_of(true_adjacency, edge_probabilities(samples, weights))


def _brier_of(true_adjacency, probabilities: np.ndarray) -> float:
    """``brier`` of edge probabilities ``(p, p)``."""
    p = probabilities.shape[0]
    truth = _truth(true_adjacency, p)
    squared_error = (truth - probabilities) ** 2
    return float(squared_error[_off_diagonal(p)].sum())


def structural_hamming_distances(true_adjacency, samples, pairs=None) -> np.ndarray:
    """SHD of each sample ``(L,)``: the number of node pairs {j, k} whose edges differ
    from the truth (missing, extra or reversed edges count one each); with ``pairs (p, p)``
    (bool), only the pairs {j, k} with ``pairs[j, k]`` or ``pairs[k, j]`` count."""
    edges = _edges(samples)
    truth = _truth(true_adjacency, edges.shape[1])
    differs = edges != truth
    pair_differs = differs | differs.transpose(0, 2, 1)
    counted = np.triu(np.ones(truth.shape, dtype=bool), k=1)
    if pairs is not None:
        pairs = np.asarray(pairs, dtype=bool)
        counted &= pairs | pairs.T
    return pair_differs[:, counted].sum(axis=1)


def expected_shd(true_adjacency, samples, weights=None, pairs=None) -> float:
    """Posterior mean structural Hamming distance (lower is better), over the node pairs
    ``pairs`` selects (all by default; see ``structural_hamming_distances``)."""
    distances = structural_hamming_distances(true_adjacency, samples, pairs)
    return float(_sample_weights(weights, distances.shape[0]) @ distances)


def f1_scores(true_adjacency, samples) -> np.ndarray:
    """F1 score over directed edges of each sample, in percent ``(L,)``; 100 when the sample
    and the truth both have no edges."""
    edges = _edges(samples)
    p = edges.shape[1]
    truth = _truth(true_adjacency, p) & _off_diagonal(p)
    edges = edges & _off_diagonal(p)
    true_positives = (edges & truth).sum(axis=(1, 2))
    errors = (edges != truth).sum(axis=(1, 2))  # false positives + false negatives
    denominator = 2 * true_positives + errors
    safe = np.where(denominator > 0, denominator, 1)
    return np.where(denominator > 0, 200.0 * true_positives / safe, 100.0)


def expected_f1(true_adjacency, samples, weights=None) -> float:
    """Posterior mean F1 score over directed edges, in percent (higher is better)."""
    scores = f1_scores(true_adjacency, samples)
    return float(_sample_weights(weights, scores.shape[0]) @ scores)


def auroc(true_adjacency, samples, weights=None) -> float:
    """Area under the ROC curve of the edge probabilities, in percent (higher is better).

    Computed by the rank-sum (Mann–Whitney) formula over the off-diagonal entries, ties
    averaged. NaN with a ``RuntimeWarning`` when the truth has no edges or only edges.
    """
    return _auroc_of(true_adjacency, edge_probabilities(samples, weights))


def _auroc_of(true_adjacency, probabilities: np.ndarray) -> float:
    """``auroc`` of edge probabilities ``(p, p)``."""
    p = probabilities.shape[0]
    mask = _off_diagonal(p)
    labels = _truth(true_adjacency, p)[mask]
    scores = probabilities[mask]
    n_positive = int(labels.sum())
    n_negative = labels.size - n_positive
    if n_positive == 0 or n_negative == 0:
        warnings.warn("AUROC is undefined when the true graph has no edges or every possible "
                      "edge; returning NaN.", RuntimeWarning, stacklevel=3)
        return float("nan")
    from scipy.stats import rankdata  # imported here: scipy.stats is slow to import

    ranks = rankdata(scores)  # average ranks for ties
    rank_sum = ranks[labels].sum()
    u_statistic = rank_sum - n_positive * (n_positive + 1) / 2
    return float(100.0 * u_statistic / (n_positive * n_negative))


CALIBRATION_BINS = 10


def reliability(true_adjacency, edge_probabilities, n_bins: int = CALIBRATION_BINS) -> dict:
    """Binned reliability of edge probabilities ``(p, p)`` over the off-diagonal entries:
    ``{"edges", "mean_probability", "frequency", "count"}``, each ``(n_bins,)``: per bin of
    equal width on [0, 1] (the last bin closed), the entries in it, their mean predicted
    probability and the share of them that are true edges (NaN for empty bins)."""
    probabilities = np.asarray(edge_probabilities, dtype=float)
    if probabilities.ndim != 2 or probabilities.shape[0] != probabilities.shape[1]:
        raise ValueError(f"edge_probabilities must be a (p, p) array; got shape "
                         f"{probabilities.shape}.")
    if np.any((probabilities < 0) | (probabilities > 1)) or not np.all(np.isfinite(probabilities)):
        raise ValueError("edge_probabilities must lie in [0, 1].")
    p = probabilities.shape[0]
    off = _off_diagonal(p)
    predicted = probabilities[off]
    labels = _truth(true_adjacency, p)[off].astype(float)
    bins = np.minimum((predicted * n_bins).astype(int), n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore"):
        mean = np.bincount(bins, predicted, n_bins) / count
        frequency = np.bincount(bins, labels, n_bins) / count
    return {"edges": np.arange(n_bins + 1) / n_bins, "mean_probability": mean,
            "frequency": frequency, "count": count}


def calibration_error(true_adjacency, edge_probabilities,
                      n_bins: int = CALIBRATION_BINS) -> float:
    """Expected calibration error of edge probabilities ``(p, p)``, in [0, 1] (lower is
    better): ``Σ_b (n_b / N) |mean probability_b − share of true edges_b|`` over the
    ``n_bins`` equal-width bins of ``reliability`` (N = p(p−1) off-diagonal entries)."""
    table = reliability(true_adjacency, edge_probabilities, n_bins)
    filled = table["count"] > 0
    gaps = np.abs(table["mean_probability"][filled] - table["frequency"][filled])
    return float(np.sum(table["count"][filled] * gaps) / table["count"].sum())


def evaluate(true_adjacency, samples, weights=None) -> dict[str, float]:
    """All four metrics: ``{"brier", "eshd", "ef1" (percent), "auroc" (percent)}``."""
    return {
        "brier": brier(true_adjacency, samples, weights),
        "eshd": expected_shd(true_adjacency, samples, weights),
        "ef1": expected_f1(true_adjacency, samples, weights),
        "auroc": auroc(true_adjacency, samples, weights),
    }


def evaluate_batches(true_adjacency, batches) -> dict[str, float]:
    """``evaluate`` of the samples given as an iterable of blocks ``(b, p, p)``, their
    concatenation the samples (unweighted), scored a block at a time: for posteriors too large
    to hold at once (``prodag.ProDAG.sample_batches``)."""
    counts = shd = f1 = 0.0
    n = 0
    for block in batches:
        edges = _edges(block)
        counts = counts + edges.sum(axis=0)
        shd += float(structural_hamming_distances(true_adjacency, edges).sum())
        f1 += float(f1_scores(true_adjacency, edges).sum())
        n += edges.shape[0]
    if n == 0:
        raise ValueError("batches is empty: pass at least one block of sampled graphs.")
    probabilities = counts / n
    return {"brier": _brier_of(true_adjacency, probabilities), "eshd": shd / n,
            "ef1": f1 / n, "auroc": _auroc_of(true_adjacency, probabilities)}

"""Independent chains of fits, the evidence that pools them, and their agreement.

A *chain* is one complete run of the fit (λ path or fixed radius, every start) with its own
training key. The starts are the same for every chain (they come from the data), so two
chains differ exactly as two seeds would: their agreement is the fit's reproducibility. Their fits
are pooled into one posterior by evidence (``prodag.posterior.mixture``), each component re-scored
with common random numbers (``rescore``), so differences between components are not Monte Carlo
noise.

``diagnose`` compares the chains as R̂ compares MCMC chains: each chain's own mixture gives
edge probabilities, and an edge whose probability differs between chains by more than
``DISAGREEMENT`` says that the chains found different modes. The pooled posterior weighs them
by evidence, not equally, so it may follow one chain's mode almost entirely: the warning says
which, and what was measured to help (``WHAT_HELPS``).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.inference import stack
from prodag.posterior.fitted import FittedPosterior
from prodag.posterior.mixture import evidence_weights, mixture_edge_probabilities

DISAGREEMENT = 0.3
"""Edges whose probability differs between two chains by more than this are flagged."""
N_DIAGNOSTIC_DRAWS = 1000
"""Draws of each chain's mixture for its edge probabilities."""
SCORE_BATCHES = 20
"""Batches of ``n_samples`` draws in the common-random-number score of every component."""
CONTENDER_NATS = 30.0
"""Fits whose evidence is further than this below the best are not pooled."""


class ChainDisagreementWarning(UserWarning):
    """Independent chains of the fit disagree about some edges."""


class Chain(NamedTuple):
    """One chain's outcome: its fits ``[(lam, FitResult), ...]`` and its λ path (or None for
    a fixed radius)."""

    fits: list
    path: dict | None


def contenders(runs: list[Chain], n_rows: int,
               per_chain: bool = False) -> tuple[list, np.ndarray]:
    """The fits of every chain whose evidence is within ``CONTENDER_NATS`` of the best (of
    all chains, or with ``per_chain`` of their own chain's: bagged chains fit different
    rows) as ``[(lam, FitResult), ...]``, and the chain of each ``(K,)``: the others would
    take a weight below e^-CONTENDER_NATS, so they are not re-scored."""
    fits = [fit for run in runs for fit in run.fits]
    chain_of = np.repeat(np.arange(len(runs)), [len(run.fits) for run in runs])
    evidence = -n_rows * np.array([fit.objective for _, fit in fits])
    best = np.array([evidence[chain_of == c].max() for c in range(len(runs))])
    reference = best[chain_of] if per_chain else evidence.max()
    keep = np.flatnonzero(evidence >= reference - CONTENDER_NATS)
    for chain in range(len(runs)):  # every chain keeps its best fit, for its diagnostic
        members = np.flatnonzero(chain_of == chain)
        keep = np.union1d(keep, members[np.argmax(evidence[members])])
    return [fits[i] for i in keep], chain_of[keep]


def rescore(engine, fits: list, data, n_rows: int, noise, key: jax.Array,
            data_index=None, batches: int = SCORE_BATCHES) -> np.ndarray:
    """Negative ELBO per row ``(K,)`` of every ``(lam, FitResult)`` in ``fits``, each
    estimated with the same key (common random numbers) over ``batches`` batches, in
    one batch: on the prepared ``data``, or with ``data_index (K,)`` on data set
    ``data_index[k]`` of ``data`` (prepared data sets stacked on a leading axis, e.g. the
    bagged chains' resamples)."""
    params = [fit.params for _, fit in fits]
    if data_index is None:
        data, data_index = stack([data]), np.zeros(len(fits), int)
    members = engine.members([lam for lam, _ in fits], noise, data_index,
                             np.full(len(fits), n_rows), jax.tree.leaves(params[0])[0].dtype)
    keys = jnp.broadcast_to(key, (len(fits),) + key.shape)
    return engine.negative_elbos(params, keys, members, data, batches)


def chain_probabilities(count, objectives: np.ndarray, chain_of: np.ndarray, n_chains: int,
                        n_rows: int, key: jax.Array) -> np.ndarray:
    """Edge probabilities ``(C, p, p)`` of each chain's own mixture, over
    ``N_DIAGNOSTIC_DRAWS`` draws each.

    ``count(k, key, m)`` counts the edges ``(p, p)`` of ``m`` draws of component ``k``
    (``mixture.mixture_edge_probabilities``); ``objectives (K,)`` and ``chain_of (K,)`` give
    every component's negative ELBO per row and its chain."""
    probabilities = []
    for chain in range(n_chains):
        members = [int(k) for k in np.flatnonzero(chain_of == chain)]
        weights = evidence_weights(objectives[members], n_rows)
        probabilities.append(mixture_edge_probabilities(count, members, weights, key,
                                                        N_DIAGNOSTIC_DRAWS))
    return np.stack(probabilities)


def diagnose(probabilities: np.ndarray, chain_elbos: list[float], names: list[str],
             threshold: float = DISAGREEMENT, chain_weights=None) -> dict:
    """The chains' agreement from their edge probabilities ``(C, p, p)``: a JSON-ready dict
    with the largest and mean per-edge spread (max − min over chains), the edges whose spread
    exceeds ``threshold`` (source, target, each chain's probability; largest first), each
    chain's best ELBO and, given ``chain_weights (C,)``, the share of the pooled posterior's
    weight that each chain's fits hold."""
    spread = probabilities.max(axis=0) - probabilities.min(axis=0)
    off = ~np.eye(spread.shape[0], dtype=bool)
    flagged = sorted(zip(*np.nonzero((spread > threshold) & off)),
                     key=lambda jk: -spread[jk])
    diagnostics = {
        "n_chains": int(probabilities.shape[0]),
        "max_difference": float(spread[off].max()) if off.any() else 0.0,
        "mean_difference": float(spread[off].mean()) if off.any() else 0.0,
        "threshold": float(threshold),
        "disagreeing_edges": [
            {"source": names[j], "target": names[k],
             "probabilities": [float(x) for x in probabilities[:, j, k]]}
            for j, k in flagged],
        "chain_elbos": [float(x) for x in chain_elbos]}
    if chain_weights is not None:
        diagnostics["chain_weights"] = [float(x) for x in chain_weights]
    return diagnostics


def chain_weights(weights: np.ndarray, chain_of: np.ndarray, n_chains: int) -> np.ndarray:
    """The share ``(C,)`` of the pooled posterior's weight held by each chain's fits, from
    the components' ``weights (K,)`` and their chains ``chain_of (K,)``."""
    return np.bincount(np.asarray(chain_of), np.asarray(weights, float), minlength=n_chains)


def flagged_edges(fitted: FittedPosterior) -> list[dict]:
    """The edges a ``fitted`` posterior's chains disagree on (its ``diagnostics``), or none
    for a bagged fit, whose chains fit different resamples and differ by design."""
    if fitted.spec.bootstrap or not fitted.diagnostics:
        return []
    return fitted.diagnostics["disagreeing_edges"]


def pooling_sentence(diagnostics: dict) -> str:
    """How the pooled posterior weighs the chains (``chain_weights``), in one sentence, and
    where refinement moved the draws (``"posterior"`` of the first disagreeing edge: its
    probability in the final posterior), in a second."""
    edge = diagnostics["disagreeing_edges"][0] if diagnostics["disagreeing_edges"] else {}
    if "posterior" not in edge:
        return _weights_sentence(diagnostics)
    return (f"{_weights_sentence(diagnostics)} Refinement then moved the draws between the "
            "fits of each radius by the model's own posterior: in the final posterior "
            f"{edge['source']} -> {edge['target']} has P = {edge['posterior']:.2f}.")


def _weights_sentence(diagnostics: dict) -> str:
    shares = diagnostics.get("chain_weights")
    if shares is None:
        return "The pooled posterior weighs every fit of every chain by its evidence."
    order = np.argsort(shares)[::-1]
    lead = int(order[0])
    if shares[lead] >= LEADING_SHARE:
        edge = diagnostics["disagreeing_edges"][0]
        pooled = float(np.dot(shares, edge["probabilities"]))
        chances = " and ".join(f"{x:.2f} in chain {c + 1}"
                               for c, x in enumerate(edge["probabilities"][:3]))
        return (f"The pooled posterior weighs the fits by their evidence (ELBO), not the "
                f"chains equally: chain {lead + 1}'s fits hold {shares[lead]:.2f} of its "
                f"weight, so it mostly follows chain {lead + 1} (e.g. {edge['source']} -> "
                f"{edge['target']}, {chances}, has P = {pooled:.2f} in the pooled "
                "posterior).")
    listed = ", ".join(f"chain {c + 1} {shares[c]:.2f}" for c in order[:4])
    return (f"The pooled posterior weighs the fits by their evidence (ELBO): the chains hold "
            f"{listed} of its weight, so it splits between their modes in these shares.")


WHAT_HELPS = (
    "What helped in our measurements (docs/findings.md): knowledge that orients edges (tiers, "
    "forbidden edges; prodag fit --tiers FILE: on a clinical table, 7 disagreeing edges became "
    "2); refinement, whose jumps between the fits weigh their modes by the model's own "
    "posterior (on by default for the linear SEM; more steps with "
    "training=TrainingOptions(refine_steps=N), prodag fit --refine-steps N: with the default "
    "375 steps at 20 variables two seeds agreed within 0.3 on 10 of 10 simulated datasets, "
    "7 of 10 unrefined); "
    "on candidate parents (100 variables and more), more starts, whose fits give the jumps "
    "more modes (training=TrainingOptions(n_restarts=16), prodag fit --restarts 16: at 100 "
    "variables two seeds within 0.3 on 3 of 3 simulated datasets, 0 of 3 with the default "
    "8, for a third more time); "
    "bagging many chains (bootstrap=True; prodag fit --bootstrap --chains 18: on the Sachs "
    "data two seeds within 0.26, with 6 chains 0.52), which also spreads the posterior over "
    "the data's sampling variability. More chains alone did not help (4 instead of 2: still "
    "6 of 10 datasets within 0.3).")
"""The remedies ``warn_disagreement`` names, as measured (``docs/findings.md``)."""
LEADING_SHARE = 0.9
"""A chain whose fits hold at least this share of the pooled weight is named as the one
the posterior follows."""


def listed_edges(edges: list[dict], most: int = 6) -> tuple[str, str]:
    """The first ``most`` disagreeing edges (``diagnose``'s) as ``"a -> b (0.10, 0.90); ..."``
    and ``" and k more"`` for the rest (or ``""``)."""
    shown = "; ".join(f"{e['source']} -> {e['target']} "
                      f"({', '.join(f'{x:.2f}' for x in e['probabilities'])})"
                      for e in edges[:most])
    return shown, f" and {len(edges) - most} more" if len(edges) > most else ""


def warn_disagreement(diagnostics: dict) -> None:
    """Warn (``ChainDisagreementWarning``) naming the edges the chains disagree on, if any,
    how the pooled posterior weighs the chains and what helps; not when the posterior was
    sampled by SMC (``"populations"``), whose own warning says whether its populations agree
    (the chains' fits only proposed)."""
    edges = diagnostics["disagreeing_edges"]
    if not edges or "populations" in diagnostics:
        return
    shown, more = listed_edges(edges)
    warnings.warn(
        f"the {diagnostics['n_chains']} independent chains disagree by more than "
        f"{diagnostics['threshold']:g} on {len(edges)} edge(s) (each chain's probability): "
        f"{shown}{more}. {pooling_sentence(diagnostics)} These probabilities are not "
        f"reproducible: another seed may follow another chain's mode. {WHAT_HELPS}",
        ChainDisagreementWarning, stacklevel=3)

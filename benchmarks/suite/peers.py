"""Adapters for the peer methods of the benchmarks: DAGMA, DiBS and DiBS+.

Each adapter is ``fit_<peer>(X, X_val, seed, *, sem="linear", quick=False)`` and returns
posterior graph samples ``(L, p, p)`` as a numpy array (a point estimate is a stack of one),
``[j, k] ≠ 0`` meaning the edge j → k, ready for ``prodag.metrics``. The packages are optional
and never installed by prodag (``install_command(name)`` gives the command; torch CPU first
for DAGMA): they are imported only when an adapter runs, and a missing one raises
:class:`PeerUnavailable` with the command to fix it.
``is_available(name)`` tells the benchmark suite whether to skip a peer.

Settings (paper Appendix F, where it says; otherwise stated here as our choice):

* **DAGMA** (``dagma`` 1.1.x). Linear: ``DagmaLinear(loss_type="l2")``; nonlinear:
  ``DagmaNonlinear(DagmaMLP([p, 10, 1]))`` (sigmoid units: DAGMA does not offer ReLU). Its ℓ1
  coefficient λ is tuned over 10 log-spaced values in [1e-3, 1] (the paper says "a grid of 10
  values between"; log spacing is our reading, since the range spans three decades) by the
  validation log-likelihood of ``X_val`` under a Gaussian SEM with unit noise variance, i.e.
  the smallest validation squared error of the returned (thresholded) graph. DAGMA's own
  threshold 0.3 and other defaults are kept. DAGMA is deterministic, so ``seed`` is unused.
* **DiBS** (``dibs-lib`` 1.3.x, joint inference ``JointDiBS``): 50 SVGD particles (the paper),
  1000 steps (the DiBS examples' order of magnitude), an Erdős–Rényi graph prior with 2 expected
  edges per node, and ``LinearGaussian`` / ``DenseNonlinearGaussian`` (one hidden layer of 10
  ReLU units) likelihoods with observation noise variance 1 (that of the simulated Gaussian
  noise and prodag's default). DiBS has no sparsity parameter, so ``X_val`` is unused.
  **DiBS** weighs the particles equally; **DiBS+** weighs them by their unnormalised posterior
  probability (DiBS's ``get_mixture``). As the samples interface carries no weights, DiBS+
  returns 1000 draws from the weighted particles by systematic resampling (each particle's
  share is exact to 1/1000). DiBS+ reuses the particles of the DiBS run just before it on the
  same data and seed (one SVGD run serves both), so its time is that of the resampling alone.

``quick=True`` shrinks every method (fewer λ values, iterations, particles and steps) for smoke
runs; its numbers are not comparable with the paper's.

Run ``python -m benchmarks.suite.peers dagma --p 10 --s 10 --n 100 --seeds 3`` (from the repository
root) for a table of the metrics of one peer over simulated datasets (JSON in
``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import sys
import time
from functools import partial

import numpy as np

from prodag.evaluation.metrics import METRICS
from prodag.evaluation.simulate import SEMS

from .. import RESULTS_DIR

PEERS = {"dagma": "dagma", "dibs": "dibs", "dibs+": "dibs"}
"""Peer name → the Python package it needs."""

_DISTRIBUTIONS = {"dagma": "dagma", "dibs": "dibs-lib"}
_INSTALL = {
    "dagma": "pip install torch==2.13.0 && pip install dagma  (torch first: the pinned CPU "
             "wheel; an unpinned torch pulls gigabytes of CUDA libraries)",
    "dibs": "pip install --no-deps dibs-lib && pip install imageio scikit-learn igraph  "
            "(dibs-lib's declared dependencies include jupyter, which it does not need)",
}
DAGMA_LAMBDAS = np.geomspace(1e-3, 1.0, 10)
DAGMA_THRESHOLD = 0.3
DIBS_PARTICLES = 50
DIBS_STEPS = 1000
DIBS_EDGES_PER_NODE = 2
DIBS_PLUS_DRAWS = 1000
HIDDEN_UNITS = 10


class PeerUnavailable(RuntimeError):
    """The package a peer needs is not installed; the message says how to install it."""


def _check_name(name: str) -> str:
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; known peers: {', '.join(PEERS)}")
    return PEERS[name]


def is_available(name: str) -> bool:
    """Whether the package that peer ``name`` needs can be imported (without importing it)."""
    return importlib.util.find_spec(_check_name(name)) is not None


def install_command(name: str) -> str:
    """The shell command that installs what peer ``name`` needs."""
    return _INSTALL[_check_name(name)]


def _require(name: str) -> None:
    package = _check_name(name)
    if not is_available(name):
        raise PeerUnavailable(f"peer {name!r} needs the package {package!r}, which is not "
                              f"installed: {install_command(name)}")


def versions() -> dict[str, str | None]:
    """Installed versions of the peers' distributions (None where missing)."""
    found = {}
    for distribution in (*_DISTRIBUTIONS.values(), "torch"):
        try:
            found[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            found[distribution] = None
    return found


def _check_sem(sem: str) -> str:
    if sem not in SEMS:
        raise ValueError(f"sem must be one of {SEMS}, got {sem!r}")
    return sem


# ---------------------------------------------------------------------------------------------
# DAGMA


def gaussian_validation_log_likelihood(X_val: np.ndarray, predicted: np.ndarray) -> float:
    """``log N(X_val | predicted, I)`` summed over rows and variables (unit noise variance).

    ``X_val``, ``predicted``: ``(n_val, p)``.
    """
    residual = np.asarray(X_val) - np.asarray(predicted)
    return float(-0.5 * np.sum(residual ** 2) - 0.5 * residual.size * math.log(2 * math.pi))


def select_by_validation(candidates: list[np.ndarray], log_likelihoods: list[float]) -> np.ndarray:
    """The candidate with the highest validation log-likelihood (the first one on ties)."""
    if not candidates or len(candidates) != len(log_likelihoods):
        raise ValueError("need one validation log-likelihood per candidate, and at least one")
    return candidates[int(np.argmax(log_likelihoods))]


@contextlib.contextmanager
def _silent_progress(module):
    """Switch off the progress bar a DAGMA module draws during ``fit``."""
    original = module.tqdm
    module.tqdm = partial(original, disable=True)
    try:
        yield
    finally:
        module.tqdm = original


def _dagma_linear(X, X_val, lambdas, fit_options):
    import dagma.linear

    centred = X_val - X.mean(axis=0)  # DAGMA centres the training data: its intercept
    candidates, scores = [], []
    with _silent_progress(dagma.linear):
        for lam in lambdas:
            model = dagma.linear.DagmaLinear(loss_type="l2")
            W = model.fit(X.copy(), lambda1=float(lam), w_threshold=DAGMA_THRESHOLD,
                          **fit_options)
            candidates.append(W)
            scores.append(gaussian_validation_log_likelihood(centred, centred @ W))
    return select_by_validation(candidates, scores)


def _dagma_mlp(X, X_val, lambdas, fit_options, seed=None):
    """DAGMA's MLP at each λ, its networks initialised from ``torch.manual_seed(seed)`` (0
    when None), so a fit is reproducible; the best by the validation log-likelihood."""
    import dagma.nonlinear
    import torch

    p = X.shape[1]
    candidates, scores = [], []
    with _silent_progress(dagma.nonlinear):
        for lam in lambdas:
            torch.manual_seed(0 if seed is None else int(seed))
            network = dagma.nonlinear.DagmaMLP(dims=[p, HIDDEN_UNITS, 1], bias=True,
                                               dtype=torch.double)
            model = dagma.nonlinear.DagmaNonlinear(network, dtype=torch.double)
            W = model.fit(X.copy(), lambda1=float(lam), w_threshold=DAGMA_THRESHOLD,
                          **fit_options)
            with torch.no_grad():  # predict with the thresholded graph's first layer
                first = network.fc1.weight.view(p, HIDDEN_UNITS, p)  # [child, unit, parent]
                first *= torch.from_numpy((W != 0).T.astype(np.float64))[:, None, :]
                predicted = network(torch.from_numpy(X_val)).numpy()
            candidates.append(W)
            scores.append(gaussian_validation_log_likelihood(X_val, predicted))
    return select_by_validation(candidates, scores)


def fit_dagma(X, X_val, seed=None, *, sem="linear", quick=False, lambdas=None,
              fit_options=None) -> np.ndarray:
    """DAGMA with λ chosen on ``X_val``: a point estimate, shape ``(1, p, p)``; ``seed`` seeds
    the MLP's initial weights (the linear fit has none).

    ``lambdas`` overrides the grid; ``fit_options`` are passed to DAGMA's ``fit`` (e.g.
    ``warm_iter``, ``max_iter``); ``quick`` uses 3 λ values and short inner loops.
    """
    _require("dagma")
    X = np.asarray(X, dtype=np.float64)
    X_val = np.asarray(X_val, dtype=np.float64)
    options = dict(fit_options or {})
    if lambdas is None:
        lambdas = np.geomspace(1e-3, 1.0, 3) if quick else DAGMA_LAMBDAS
    if quick:
        options = {"warm_iter": 1000, "max_iter": 2000} | options
    if _check_sem(sem) == "linear":  # deterministic: DAGMA's linear fit starts at zero
        return _dagma_linear(X, X_val, list(lambdas), options)[None]
    return _dagma_mlp(X, X_val, list(lambdas), options, seed)[None]


# ---------------------------------------------------------------------------------------------
# DiBS


_last_dibs_run: dict = {}
"""The latest ``dibs_particles`` call: ``{"key": ..., "result": (graphs, weights)}``."""


def dibs_particles(X, seed=0, *, sem="linear", n_particles=DIBS_PARTICLES, steps=DIBS_STEPS,
                   edges_per_node=DIBS_EDGES_PER_NODE,
                   interventions=None) -> tuple[np.ndarray, np.ndarray]:
    """Joint DiBS on ``X (n, p)``: particle graphs ``(n_particles, p, p)`` 0/1 and their
    DiBS+ mixture weights ``(n_particles,)`` (normalised unnormalised-posterior values).

    ``interventions``: None, or the ``(n, p)`` bool mask of each row's intervened variables
    (DiBS's ``interv_mask``: those entries leave the likelihood, as in ProDAG's).
    A call with the same data and settings as the one before returns that run's result."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    mask = None if interventions is None else np.ascontiguousarray(interventions, dtype=bool)
    key = (hashlib.sha256(X.tobytes()).hexdigest(), X.shape, seed, sem, n_particles, steps,
           edges_per_node, None if mask is None else hashlib.sha256(mask.tobytes()).hexdigest())
    if _last_dibs_run.get("key") != key:
        _last_dibs_run.update(key=key, result=_run_dibs(X, seed, sem, n_particles, steps,
                                                        edges_per_node, mask))
    return _last_dibs_run["result"]


def _run_dibs(X, seed, sem, n_particles, steps, edges_per_node, mask=None):
    _require("dibs")
    import jax
    from dibs.inference import JointDiBS
    from dibs.models import DenseNonlinearGaussian, ErdosReniDAGDistribution, LinearGaussian

    p = X.shape[1]
    if _check_sem(sem) == "linear":
        likelihood = LinearGaussian(n_vars=p, obs_noise=1.0)
    else:
        likelihood = DenseNonlinearGaussian(n_vars=p, hidden_layers=[HIDDEN_UNITS],
                                            obs_noise=1.0, activation="relu")
    model = JointDiBS(x=jax.numpy.asarray(X),
                      interv_mask=None if mask is None else jax.numpy.asarray(mask, int),
                      graph_model=ErdosReniDAGDistribution(p, n_edges_per_node=edges_per_node),
                      likelihood_model=likelihood)
    graphs, thetas = model.sample(key=jax.random.PRNGKey(seed), n_particles=n_particles,
                                  steps=steps)
    log_weights = np.asarray(model.get_mixture(graphs, thetas).logp, dtype=np.float64)
    weights = np.exp(log_weights - log_weights.max())
    return np.asarray(graphs, dtype=np.int64), weights / weights.sum()


def _dibs_settings(quick: bool) -> dict:
    return {"n_particles": 10, "steps": 300} if quick else {}


def fit_dibs(X, X_val=None, seed=0, *, sem="linear", quick=False, **settings) -> np.ndarray:
    """DiBS: the particle graphs, equally weighted, ``(n_particles, p, p)`` (``settings``:
    those of ``dibs_particles``, e.g. ``interventions``)."""
    graphs, _ = dibs_particles(X, seed, sem=sem, **(_dibs_settings(quick) | settings))
    return graphs


def systematic_resample(samples: np.ndarray, weights: np.ndarray, size: int,
                        seed=None) -> np.ndarray:
    """``size`` draws from ``samples (L, ...)`` with probabilities ``weights (L,)`` by
    systematic resampling: each sample appears ⌊size·w⌋ or ⌈size·w⌉ times."""
    weights = np.asarray(weights, dtype=np.float64)
    cumulative = np.cumsum(weights / weights.sum())
    cumulative[-1] = 1.0
    offset = np.random.default_rng(seed).random()
    positions = (np.arange(size) + offset) / size
    return np.asarray(samples)[np.searchsorted(cumulative, positions, side="right")]


def fit_dibs_plus(X, X_val=None, seed=0, *, sem="linear", quick=False,
                  draws=DIBS_PLUS_DRAWS, **settings) -> np.ndarray:
    """DiBS+: the particles weighted by their posterior probability, as ``draws`` samples."""
    graphs, weights = dibs_particles(X, seed, sem=sem, **(_dibs_settings(quick) | settings))
    return systematic_resample(graphs, weights, draws, seed=seed)


# ---------------------------------------------------------------------------------------------
# Running peers


_FITTERS = {"dagma": fit_dagma, "dibs": fit_dibs, "dibs+": fit_dibs_plus}


DAGMA_LIBRARY_DEFAULTS = {"lambdas": [0.02], "fit_options": {"lambda2": 0.005}}
"""DAGMA as its library fits by default (λ1 = 0.02, λ2 = 0.005, ``w_threshold`` = 0.3): no
λ chosen on held-out rows."""


def fit_peer(name: str, data, *, sem: str = "linear", seed: int = 0,
             quick: bool = False, **options) -> np.ndarray:
    """Fit peer ``name`` on ``data`` (anything with ``X`` and ``X_val``): samples (L, p, p).
    ``options`` go to the peer's fitter (e.g. ``DAGMA_LIBRARY_DEFAULTS`` for DAGMA)."""
    _check_name(name)
    return _FITTERS[name](data.X, data.X_val, seed, sem=sem, quick=quick, **options)


def evaluate_peer(name: str, seeds, *, quick: bool = False, peer_options: dict | None = None,
                  on_row=None, **dataset_settings) -> list[dict]:
    """Fit peer ``name`` on ``prodag.simulate.dataset(**dataset_settings, seed=seed)`` for each
    seed and score it with ``prodag.metrics.evaluate``.

    Returns one dict per seed: ``peer``, ``seed``, the dataset settings, ``seconds`` (the fit)
    and the metrics ``brier``, ``eshd``, ``ef1`` (%), ``auroc`` (%). ``on_row(rows)`` is
    called with the rows so far after every seed (to print or save them as they come).
    """
    from prodag import metrics, simulate

    _require(name)
    rows = []
    for seed in seeds:
        data = simulate.dataset(**dataset_settings, seed=seed)
        start = time.perf_counter()
        samples = fit_peer(name, data, sem=data.sem, seed=seed, quick=quick,
                           **(peer_options or {}))
        seconds = time.perf_counter() - start
        rows.append({"peer": name, "seed": seed, **dataset_settings, "seconds": seconds,
                     **metrics.evaluate(data.adjacency, samples)})
        if on_row is not None:
            on_row(rows)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Score one peer over simulated datasets.")
    parser.add_argument("peer", choices=list(PEERS))
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--s", type=int, default=10)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--graph", default="er")
    parser.add_argument("--sem", default="linear", choices=SEMS)
    parser.add_argument("--noise", default="gaussian")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--library-defaults", action="store_true",
                        help="DAGMA with its library's defaults (lambda1 0.02, lambda2 0.005, "
                             "threshold 0.3) instead of lambda chosen on held-out rows")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="first dataset seed; other than 0 it is named in the file name")
    args = parser.parse_args(argv)
    if args.library_defaults and args.peer != "dagma":
        parser.error("--library-defaults applies to dagma only")
    if not is_available(args.peer):
        print(f"{args.peer} skipped: {install_command(args.peer)}")
        return
    settings = dict(p=args.p, s=args.s, n=args.n, graph=args.graph, sem=args.sem,
                    noise=args.noise)
    columns = ("seed", "seconds", *METRICS)
    RESULTS_DIR.mkdir(exist_ok=True)
    tag = (f"{args.peer.replace('+', 'plus')}_{args.sem}_p{args.p}_n{args.n}"
           + ("_library_defaults" if args.library_defaults else "")
           + (f"_seeds{args.first_seed}-{args.first_seed + args.seeds - 1}"
              if args.first_seed else ""))
    out = RESULTS_DIR / f"peers_{tag}.json"
    print(f"{args.peer} on {settings}, quick={args.quick}, versions {versions()}")
    print(" | ".join(f"{c:>8}" for c in columns), flush=True)

    def save(rows):  # the file is rewritten after every dataset
        row = rows[-1]
        print(" | ".join(f"{row[c]:8.2f}" if c != "seed" else f"{row[c]:8d}" for c in columns),
              flush=True)
        means = {c: float(np.mean([row[c] for row in rows])) for c in columns[1:]}
        out.write_text(json.dumps({"settings": settings, "quick": args.quick,
                                   "library_defaults": args.library_defaults,
                                   "versions": versions(), "rows": rows, "mean": means},
                                  indent=2))
        return means

    rows = evaluate_peer(args.peer, range(args.first_seed, args.first_seed + args.seeds),
                         quick=args.quick,
                         peer_options=DAGMA_LIBRARY_DEFAULTS if args.library_defaults else None,
                         on_row=save, **settings)
    means = {c: float(np.mean([row[c] for row in rows])) for c in columns[1:]}
    print(" | ".join([f"{'mean':>8}"] + [f"{means[c]:8.2f}" for c in columns[1:]]))
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

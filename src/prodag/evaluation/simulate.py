"""Synthetic structural equation models, as in Appendix E of the ProDAG paper.

Graphs
    ``random_dag(p, s, kind)`` draws an undirected graph with exactly ``s`` edges and orients it
    by a uniformly random topological order. ``[j, k] = 1`` means the edge j → k.

    * ``"er"`` (Erdős–Rényi): the ``s`` edges are a uniformly random subset of the
      ``p(p−1)/2`` node pairs.
    * ``"sf"`` (scale-free): a Chung–Lu model. Node ``i`` (in a random labelling) gets the
      weight ``w_i ∝ i^{−1/(γ−1)}``, i = 1..p, and the ``s`` edges are ``s`` distinct pairs drawn
      one after another without replacement, pair {i, j} with probability ∝ ``w_i w_j``. The
      expected degrees are then roughly ∝ ``w_i``, whose distribution is a power law with degree
      exponent ``γ`` (``exponent``; the paper uses 2 and 3). Hubs are placed independently of
      the topological order, so a hub may be a cause or an effect.

SEMs (``x`` a row of the data, ``ε`` its noise; weights uniform on [−0.7, −0.3] ∪ [0.3, 0.7])
    * ``"linear"``: ``x = Wᵀx + ε``, solved for all rows at once as ``X = E (I − W)^{−1}``.
    * ``"mlp"``: ``x_k = f_k(x) + ε_k`` with ``f_k(x) = relu(x W1[:, k, :]) W2[k]``, one hidden
      layer of ``hidden_units`` ReLU units per node, input weights of non-parents zero. As in
      Zheng et al. (2020, NOTEARS-MLP simulator) the networks have **no biases**, so
      ``f_k(0) = 0``. The weight layout is that of ``prodag.models.mlp.MLPSEM`` without biases:
      ``W1 (p, p, d)`` with ``[j, k, :]`` the weights of input j into node k's hidden units, and
      ``W2 (p, d)`` the output weights of each node's network.

Noise (independent across rows and variables)
    ``"gaussian"`` N(0, 1); ``"exponential"`` Exponential(1); ``"gumbel"`` Gumbel(0, 1);
    ``"heteroscedastic"`` N(0, σ_j²) with σ_j ~ Uniform(2/3, 4/3) drawn once per variable.
    Following the paper, non-Gaussian noise is **not centred**: Exponential(1) has mean 1 and
    Gumbel(0, 1) has mean ≈ 0.5772 (Euler's constant). ``noise_mean`` and ``noise_std`` of the
    returned dataset give each variable's true noise mean and standard deviation.

Every draw comes from ``numpy.random.default_rng(seed)``: the same seed gives the same dataset.
"""

from __future__ import annotations


from dataclasses import dataclass, field, replace

import numpy as np

from prodag.graph import topological_order
from prodag.inference.radius_selection import validation_size
from prodag.inputs.checks import check_choice, check_integer, check_positive

GRAPH_KINDS = ("er", "sf")
SEMS = ("linear", "mlp")
"""The SEMs the simulator draws from (the fitted models are ``prodag.models.SEM_NAMES``)."""
NOISES = ("gaussian", "exponential", "gumbel", "heteroscedastic")
WEIGHT_RANGE = (0.3, 0.7)
"""Absolute values of SEM weights are uniform on this range, with a random sign."""
HETEROSCEDASTIC_STD_RANGE = (2.0 / 3.0, 4.0 / 3.0)

_EULER_GAMMA = 0.5772156649015329


@dataclass(frozen=True, eq=False)
class SimulatedData:
    """A simulated dataset and the SEM that generated it.

    Attributes
    ----------
    X : (n, p) float64 array, the training data.
    X_val : (n_val, p) float64 array, a validation set drawn from the same SEM.
    adjacency : (p, p) int array of 0/1; ``[j, k] = 1`` means j → k. Always a DAG.
    weights : for ``sem="linear"`` the (p, p) weighted adjacency matrix ``W``; for
        ``sem="mlp"`` a dict ``{"W1": (p, p, hidden_units), "W2": (p, hidden_units)}``.
    noise_mean, noise_std : (p,) arrays, the true mean and standard deviation of each
        variable's noise.
    p, s, n, n_val, graph, sem, noise, hidden_units, exponent, seed : the settings used
        (``graph`` is ``"given"`` for ``semi_synthetic``).
    """

    X: np.ndarray
    X_val: np.ndarray
    adjacency: np.ndarray
    weights: np.ndarray | dict[str, np.ndarray]
    noise_mean: np.ndarray
    noise_std: np.ndarray
    p: int
    s: int
    n: int
    n_val: int
    graph: str
    sem: str
    noise: str
    hidden_units: int | None = None
    exponent: float | None = None
    seed: int | None = field(default=None)
    interventions: np.ndarray | None = None
    """``(rows of X, p)`` bool mask of the intervened variable of each row, or None."""
    targets: np.ndarray | None = None
    """The intervened variables, in the order their rows follow the observational ones."""


# ---------------------------------------------------------------------------------------------
# Graphs


def random_dag(p: int, s: int, kind: str = "er", exponent: float = 2.0,
               seed=None) -> np.ndarray:
    """A random DAG with ``p`` nodes and exactly ``s`` edges (see the module docstring).

    Parameters
    ----------
    p : number of nodes (>= 1).
    s : number of edges, 0 <= s <= p(p−1)/2.
    kind : ``"er"`` (Erdős–Rényi) or ``"sf"`` (scale-free, Chung–Lu).
    exponent : degree exponent γ > 1 of the scale-free model (ignored for ``"er"``).
    seed : int, None or ``numpy.random.Generator``.

    Returns
    -------
    (p, p) int64 array of 0/1 with ``[j, k] = 1`` for the edge j → k.
    """
    rng = np.random.default_rng(seed)
    p, s = _check_graph_size(p, s)
    check_choice("kind", kind, GRAPH_KINDS)
    rows, cols = np.triu_indices(p, k=1)
    if kind == "sf":
        exponent = check_positive("exponent", exponent)
        if exponent <= 1:
            raise ValueError(f"exponent (the degree exponent γ) must be > 1, got {exponent}.")
    if s == 0:
        chosen = np.zeros(0, dtype=np.int64)
    elif kind == "er":
        chosen = rng.choice(rows.size, size=s, replace=False)
    else:
        node_weight = rng.permutation(np.arange(1, p + 1) ** (-1.0 / (exponent - 1.0)))
        pair_weight = node_weight[rows] * node_weight[cols]
        chosen = rng.choice(rows.size, size=s, replace=False, p=pair_weight / pair_weight.sum())
    rank = np.empty(p, dtype=np.int64)
    rank[rng.permutation(p)] = np.arange(p)  # rank[node] = position in the topological order
    first, second = rows[chosen], cols[chosen]
    forward = rank[first] < rank[second]
    adjacency = np.zeros((p, p), dtype=np.int64)
    adjacency[np.where(forward, first, second), np.where(forward, second, first)] = 1
    return adjacency


def _check_graph_size(p, s) -> tuple[int, int]:
    p = check_integer("p", p, minimum=1)
    s = check_integer("s", s, minimum=0)
    max_edges = p * (p - 1) // 2
    if s > max_edges:
        raise ValueError(f"s = {s} edges is more than a DAG on p = {p} nodes can have "
                         f"(at most p(p-1)/2 = {max_edges}). Lower s or raise p.")
    return p, s


# ---------------------------------------------------------------------------------------------
# SEMs


def dataset(p: int, s: int, n: int, graph: str = "er", sem: str = "linear",
            noise: str = "gaussian", hidden_units: int = 10, n_val: int | None = None,
            exponent: float = 2.0, seed=None, interventions=None,
            rows_per_target: int = 10) -> SimulatedData:
    """Simulate a random DAG and data from an SEM on it (paper Appendix E).

    ``n_val`` defaults to ⌊0.1 n⌉ (rounded half up). See the module docstring for the graph,
    SEM and noise models; ``seed`` (int, None or Generator) makes the dataset reproducible.

    ``interventions``: an int k (k distinct random targets) or a sequence of target indices;
    after the ``n`` observational rows of ``X`` come ``rows_per_target`` rows per target
    under a perfect intervention on it: its equation is replaced by independent N(0, 1)
    values, every other variable follows the SEM. ``data.interventions`` is the ``(rows,
    p)`` mask of the intervened variable per row (``prodag.ProDAG.fit(..., interventions=)``
    takes it as it is); ``X_val`` stays observational.
    """
    rng = np.random.default_rng(seed)
    check_choice("graph", graph, GRAPH_KINDS)
    adjacency = random_dag(p, s, kind=graph, exponent=exponent, seed=rng)
    data = _simulate_on(adjacency, n, sem, noise, hidden_units, n_val, rng, graph=graph,
                        exponent=exponent if graph == "sf" else None, seed=seed)
    if interventions is None:
        return data
    return _with_interventions(data, interventions, rows_per_target, rng)


def _with_interventions(data: SimulatedData, interventions, rows_per_target: int,
                        rng: np.random.Generator) -> SimulatedData:
    """``data`` with ``rows_per_target`` rows per target appended (see ``dataset``)."""
    p = data.p
    if isinstance(interventions, (int, np.integer)) and not isinstance(interventions, bool):
        count = check_integer("interventions", interventions, minimum=1)
        if count > p:
            raise ValueError(f"interventions = {count} targets, but there are only {p} "
                             "variables.")
        targets = rng.choice(p, count, replace=False)
    else:
        targets = np.asarray(interventions, dtype=int).reshape(-1)
        if targets.size == 0 or np.any((targets < 0) | (targets >= p)):
            raise ValueError(f"intervention targets must be indices in 0..{p - 1}; got "
                             f"{list(targets)}.")
    rows_per_target = check_integer("rows_per_target", rows_per_target, minimum=1)
    order = topological_order(data.adjacency)
    blocks, masks = [data.X], [np.zeros((data.n, p), dtype=bool)]
    for target in targets:
        noise_samples = (data.noise_std * rng.standard_normal((rows_per_target, p))
                         if data.noise == "heteroscedastic"
                         else _noise(rng, data.noise, rows_per_target, p)[0])
        noise_samples[:, target] = rng.standard_normal(rows_per_target)
        weights = _without_parents(data.weights, target)
        blocks.append(linear_sem(weights, noise_samples) if data.sem == "linear"
                      else mlp_sem(weights, noise_samples, order))
        mask = np.zeros((rows_per_target, p), dtype=bool)
        mask[:, target] = True
        masks.append(mask)
    return replace(data, X=np.concatenate(blocks), interventions=np.concatenate(masks),
                   targets=targets)


def _without_parents(weights, target: int):
    """The SEM's weights with every edge into ``target`` removed (a perfect intervention)."""
    if isinstance(weights, dict):
        cut = {name: value.copy() for name, value in weights.items()}
        cut["W1"][:, target, :] = 0.0
        return cut
    cut = weights.copy()
    cut[:, target] = 0.0
    return cut


def semi_synthetic(adjacency, n: int, sem: str = "linear", noise: str = "gaussian",
                   n_val: int | None = None, hidden_units: int = 10, seed=None) -> SimulatedData:
    """Data from an SEM on a given DAG (e.g. MUNIN1), with the weight and noise scheme of
    ``dataset``. ``adjacency (p, p)``: nonzero entries are the edges j → k."""
    adjacency = np.asarray(adjacency)
    if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"adjacency must be a square (p, p) matrix, got shape {adjacency.shape}.")
    if np.any(np.diag(adjacency) != 0):
        raise ValueError("adjacency has nonzero diagonal entries (self-loops); set them to 0.")
    adjacency = (adjacency != 0).astype(np.int64)
    return _simulate_on(adjacency, n, sem, noise, hidden_units, n_val,
                        np.random.default_rng(seed), graph="given", exponent=None, seed=seed)


def _simulate_on(adjacency, n, sem, noise, hidden_units, n_val, rng, *, graph, exponent,
                 seed) -> SimulatedData:
    n = check_integer("n", n, minimum=1)
    n_val = validation_size(n) if n_val is None else check_integer("n_val", n_val, minimum=0)
    check_choice("sem", sem, SEMS)
    check_choice("noise", noise, NOISES)
    order = topological_order(adjacency)
    p = adjacency.shape[0]
    if sem == "linear":
        weights = adjacency * _uniform_weights(rng, (p, p))
        hidden_units = None
    else:
        hidden_units = check_integer("hidden_units", hidden_units, minimum=1)
        weights = {"W1": adjacency[:, :, None] * _uniform_weights(rng, (p, p, hidden_units)),
                   "W2": _uniform_weights(rng, (p, hidden_units))}
    noise_samples, noise_mean, noise_std = _noise(rng, noise, n + n_val, p)
    if sem == "linear":
        data = linear_sem(weights, noise_samples)
    else:
        data = mlp_sem(weights, noise_samples, order)
    return SimulatedData(X=data[:n], X_val=data[n:], adjacency=adjacency, weights=weights,
                         noise_mean=noise_mean, noise_std=noise_std, p=p,
                         s=int(adjacency.sum()), n=n, n_val=n_val, graph=graph, sem=sem,
                         noise=noise, hidden_units=hidden_units, exponent=exponent,
                         seed=seed if not isinstance(seed, np.random.Generator) else None)


def _uniform_weights(rng: np.random.Generator, shape) -> np.ndarray:
    """Uniform on [−0.7, −0.3] ∪ [0.3, 0.7]."""
    magnitude = rng.uniform(*WEIGHT_RANGE, size=shape)
    return np.where(rng.random(shape) < 0.5, -magnitude, magnitude)


def _noise(rng: np.random.Generator, noise: str, n: int, p: int):
    """Noise ``(n, p)`` and the true per-variable mean and standard deviation ``(p,)``."""
    if noise == "gaussian":
        return rng.standard_normal((n, p)), np.zeros(p), np.ones(p)
    if noise == "exponential":
        return rng.exponential(1.0, size=(n, p)), np.ones(p), np.ones(p)
    if noise == "gumbel":
        return (rng.gumbel(0.0, 1.0, size=(n, p)), np.full(p, _EULER_GAMMA),
                np.full(p, np.pi / np.sqrt(6.0)))
    std = rng.uniform(*HETEROSCEDASTIC_STD_RANGE, size=p)
    return std * rng.standard_normal((n, p)), np.zeros(p), std


def linear_sem(weights: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Rows ``x = Wᵀx + ε`` for a DAG's weights ``W (p, p)`` and noise ``E (n, p)``.

    Returns ``X = E (I − W)^{−1}`` of shape (n, p), by one linear solve.
    """
    p = weights.shape[0]
    return np.linalg.solve((np.eye(p) - weights).T, noise.T).T


def mlp_sem(weights: dict[str, np.ndarray], noise: np.ndarray,
            order: np.ndarray) -> np.ndarray:
    """Rows ``x_k = relu(x W1[:, k, :]) W2[k] + ε_k`` generated node by node in ``order``.

    ``weights``: ``W1 (p, p, d)``, ``W2 (p, d)``; ``noise (n, p)``; ``order (p,)`` a
    topological order of the graph. Each step is vectorised over the n rows.
    """
    X = np.zeros_like(noise)
    for k in order:
        hidden = np.maximum(X @ weights["W1"][:, k, :], 0.0)
        X[:, k] = hidden @ weights["W2"][k] + noise[:, k]
    return X

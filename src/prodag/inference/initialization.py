"""Data-driven starting points for the variational means (linear SEM; ReLU MLP via the same
linear fit, see ``relu_network_start``).

The ELBO has local optima, one per topological order roughly, and a fit started at the prior
can lock into a wrong order. For the linear-Gaussian SEM with known noise variances there is a
cheap, consistent estimate of the order to start from: the *top-down* rule for equal-variance
SEMs (Chen, Drton & Wang, 2019). Each step places the unplaced variable whose variance given
the placed ones, divided by its noise variance, is smallest; under the model every source of
the remaining graph has exactly its noise variance left while every other variable has more
(``prodag.inference.order_search.top_down_order``). The start ``loc`` is then the ridge regression
of every variable on the variables before it.

The rule is greedy, so the linear SEM has a second start along the order of a BIC search over
orders under the same noise variances (``prodag.inference.order_search``). A fit that learns one
noise variance per variable gives the rule nothing to go on; its one linear start follows the
search's scale-free order instead.

The additive SEM gets a second start made the same way with its own features
(``additive_start``): the top-down rule with each variable's variance left after a ridge
regression on the features ``(x_j, |x_j|)`` of the placed variables, then those regressions
as strengths and shapes. A relation that is a V (``y = |x|``) has no linear correlation, so
the linear start leaves it out; this start has it.

It runs once per fit on the ``(p, p)`` Gram matrix (``(2p + 1, 2p + 1)`` for the additive
start), plus the order searches of ``prodag.inference.order_search``.
"""

from __future__ import annotations

import numpy as np

from prodag.config.starts import MANY_STARTS_UP_TO, n_searched_graphs
from prodag.inference.order_search import best_order, searched_orders, top_down, top_down_order

ORDER_SEARCH_STARTS = 24
"""Starting orders of the order search for the searched graphs (``n_searched_graphs``; up to
``MANY_STARTS_UP_TO`` variables; its default above)."""


def ordered_regression(covariance: np.ndarray, order: np.ndarray, ridge: float,
                       candidates: np.ndarray | None = None) -> np.ndarray:
    """Weights ``W (p, p)`` regressing each variable on those before it in ``order``.

    ``W[j, k]`` is the ridge coefficient of ``x_j`` in the regression of ``x_k`` on its
    predecessors (penalty ``ridge`` on the covariance scale); backward entries are zero. With
    ``candidates (p, p)`` (bool, ``[j, k]``: ``j`` may parent ``k``), on its predecessors
    among its candidate parents only: with fewer rows than predecessors the regression on
    all of them would fit the rows exactly.
    """
    p = covariance.shape[0]
    W = np.zeros((p, p))
    for place in range(1, p):
        parents, child = order[:place], order[place]
        if candidates is not None:
            parents = parents[candidates[parents, child]]
            if len(parents) == 0:
                continue
        block = covariance[np.ix_(parents, parents)] + ridge * np.eye(len(parents))
        W[parents, child] = np.linalg.solve(block, covariance[parents, child])
    return W


def linear_start(X: np.ndarray, noise_variance: np.ndarray, ridge: float = 0.01,
                 order: np.ndarray | None = None,
                 candidates: np.ndarray | None = None) -> np.ndarray:
    """Start ``loc (p, p)`` for the linear SEM from centred data ``X (n, p)``: the ridge
    regressions along ``order (p,)``, by default the top-down order. The ridge penalty is
    ``ridge`` times the mean noise variance, so the start scales with the data when the
    noise variance does. With ``candidates (p, p)`` (bool, ``[j, k]``: ``j`` may parent
    ``k``; a candidate screen's support) the top-down order and the regressions condition
    each variable on its candidate parents only."""
    covariance = X.T @ X / X.shape[0]
    if order is None:
        order = top_down_order(covariance, noise_variance, candidates)
    return ordered_regression(covariance, order, ridge * float(np.mean(noise_variance)),
                              candidates)


def noise_variance_start(X: np.ndarray) -> float:
    """A start for a learned noise variance from centred data ``X (n, p)``: the mean over
    variables of the variance left after regressing each on its predecessors in the top-down
    equal-variance order. It scales with the data (``X·c`` gives ``c²`` times it), so a fit
    that learns its noise variance starts in the data's units."""
    covariance = X.T @ X / X.shape[0]
    left = top_down(covariance, np.ones(covariance.shape[0]))[1]
    return float(max(np.mean(left), np.finfo(float).tiny))


def relu_network_start(linear: np.ndarray, hidden_units: int,
                       hidden_layers: int) -> dict[str, np.ndarray]:
    """First, further and output layer weights of ``MLPSEM`` (ReLU, no biases) under which
    node ``k``'s network computes ``Σ_j linear[j, k] x_j`` exactly.

    Units come in pairs: ``h = hidden_units // 2`` units see ``+c·z_k`` and ``h`` see
    ``−c·z_k`` with ``z_k = Σ_j linear[j, k] x_j`` and ``c = 1/√(2h)``, and the output layer
    takes ``(relu(c z) − relu(−c z)) / c = z``; an odd unit out gets zero weights. Further
    hidden layers are identities (ReLU of a nonnegative value is itself). So the first-layer
    group norm ``‖ω_jk‖₂`` equals ``|linear[j, k]|``.

    Returns ``{"W1": (p, p, d), "W2" … "W{H}": (p, d, d), "W{H+1}": (p, d)}``.
    """
    p, d = linear.shape[0], hidden_units
    if d < 2:
        raise ValueError("the network start needs hidden_units >= 2 (a +/- pair of units).")
    half = d // 2
    c = 1.0 / np.sqrt(2 * half)
    direction = np.zeros(d)
    direction[:half], direction[half:2 * half] = c, -c
    output = np.zeros(d)
    output[:half], output[half:2 * half] = 1.0 / (c * half), -1.0 / (c * half)
    weights = {"W1": linear[:, :, None] * direction}
    for layer in range(2, hidden_layers + 1):
        weights[f"W{layer}"] = np.broadcast_to(np.eye(d), (p, d, d)).copy()
    weights[f"W{hidden_layers + 1}"] = np.broadcast_to(output, (p, d)).copy()
    return weights


def additive_start(X: np.ndarray, noise_variance: np.ndarray,
                   ridge: float = 0.01) -> dict[str, np.ndarray]:
    """Start ``{"W": (p, p), "V": (p, p, 2), "b": (p,)}`` of the additive SEM from centred
    data ``X (n, p)``.

    The order is the top-down rule with the additive SEM's features: each step places the
    unplaced variable whose mean squared residual, after a ridge regression on the features
    ``(x_j, |x_j|)`` of the placed variables and an intercept, divided by its noise variance,
    is smallest. That regression, taken when the variable is placed, is its start
    (``prodag.models.additive.weights_of``). The penalty is ``ridge`` times the mean noise
    variance, on every feature but the intercept.
    """
    from prodag.models import additive  # imported when asked for, as ``make_model`` does

    n, p = X.shape
    F = additive.features(np.asarray(X, dtype=float), xp=np)
    gram, cross, squares = F.T @ F / n, F.T @ X / n, np.sum(X * X, axis=0) / n
    penalty = ridge * float(np.mean(noise_variance))
    theta = np.zeros((2 * p + 1, p))
    placed: list[int] = []
    remaining = list(range(p))
    for _ in range(p):
        columns = [2 * j + a for j in placed for a in (0, 1)] + [2 * p]
        coefficients, residual = _ridge_regressions(gram[np.ix_(columns, columns)],
                                                    cross[columns], squares, penalty)
        scores = residual[remaining] / np.asarray(noise_variance)[remaining]
        node = remaining[int(np.argmin(scores))]
        theta[columns, node] = coefficients[:, node]
        placed.append(node)
        remaining.remove(node)
    return additive.weights_of(theta)


def _ridge_regressions(gram: np.ndarray, cross: np.ndarray, squares: np.ndarray,
                       penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regressions of every variable on one design whose last column is the intercept
    (not penalised): ``gram (m, m)`` and ``cross (m, p)`` are the design's moments over rows,
    ``squares (p,)`` the variables' mean squares. Returns the coefficients ``(m, p)`` and the
    mean squared residuals ``(p,)``."""
    diagonal = np.full(gram.shape[0], penalty)
    diagonal[-1] = 0.0
    coefficients = np.linalg.solve(gram + np.diag(diagonal), cross)
    residual = (squares - 2 * np.sum(coefficients * cross, axis=0)
                + np.sum(coefficients * (gram @ coefficients), axis=0))
    return coefficients, residual


def start_means(X: np.ndarray, noise_variance: np.ndarray, sem: str, hidden_units: int = 10,
                hidden_layers: int = 1, per_variable_noise: bool = False,
                candidates: np.ndarray | None = None) -> list[dict[str, np.ndarray]]:
    """The data starts' means for the weights of ``sem`` from centred data ``X (n, p)``, in the
    order the restarts take them (weights not named, e.g. shapes and biases, start at 0):

    - linear SEM: ``linear_start`` along the top-down order, then along each of the
      ``n_searched_graphs`` best distinct orders of
      ``prodag.inference.order_search.searched_orders`` under the same noise variances;
    - MLP: ``relu_network_start`` of the top-down linear start;
    - additive SEM: the top-down linear start, then ``additive_start``.

    With ``per_variable_noise`` (one learned noise variance per variable, where the variances
    say nothing of the order) every linear start regresses along the scale-free
    ``best_order`` instead, and the linear SEM has that one start. With ``candidates (p, p)``
    (a candidate screen's support) every linear start's top-down order and regressions
    condition each variable on its candidate parents only (``linear_start``)."""
    if per_variable_noise:
        linear = linear_start(X, noise_variance, order=best_order(X), candidates=candidates)
    else:
        linear = linear_start(X, noise_variance, candidates=candidates)
    if sem == "mlp":
        return [relu_network_start(linear, hidden_units, hidden_layers)]
    if sem == "additive":
        return [{"W": linear}, additive_start(X, noise_variance)]
    if per_variable_noise:
        return [{"W": linear}]
    p = X.shape[1]
    orders = searched_orders(X, noise_variance, n_graphs=n_searched_graphs(p),
                             n_starts=ORDER_SEARCH_STARTS if p <= MANY_STARTS_UP_TO else None,
                             candidates=candidates)
    return [{"W": linear}] + [{"W": linear_start(X, noise_variance, order=order,
                                                 candidates=candidates)}
                              for order in orders]

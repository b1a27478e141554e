"""NumPyro integration: the projected prior on a DAG as two sites of a NumPyro model.

Needs the optional extra: ``pip install 'prodag[numpyro]'``.

Why there is no ``log_prob`` for ``W``: the projection ``W = pro_λ(W̃)`` maps sets of positive
measure onto lower-dimensional faces (every ``W̃`` that is zeroed on the same entries, or
soft-thresholded by the same ℓ1 step, lands on one sparse support), so the law of ``W`` puts
positive mass on sparse supports and has no density with respect to Lebesgue measure on the
``p × p`` matrices. Inference therefore runs on ``W̃``, whose density is the Gaussian, and
``W`` is recorded as a deterministic function of it. Guides (``AutoNormal``, ...) and MCMC
(NUTS) see only the ``W̃`` site; gradients reach it through the projection (Prop. 3 of the
paper).
"""

from __future__ import annotations

import jax.numpy as jnp

try:
    import numpyro
    import numpyro.distributions as dist
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "prodag.numpyro needs NumPyro, which is not installed: "
        "pip install 'prodag[numpyro]'") from err

from prodag.projection import make_projector

__all__ = ["projected_dag"]


def projected_dag(name: str, loc, scale, lam=jnp.inf, method: str = "auto",
                  prune: float = 0.0, **options):
    """Draw a sparse DAG ``W`` from the projected Normal prior inside a NumPyro model.

    Creates the sample site ``f"{name}_tilde"``, ``W̃ ~ Normal(loc, scale).to_event(2)``, and
    the deterministic site ``name``, ``W = prodag.project(W̃, lam, method=method, **options)``
    with entries ``|W| ≤ prune`` set to zero when ``prune > 0``. See the module docstring for
    why ``W`` itself has no density.

    Args:
        name: name of the deterministic site of ``W``.
        loc, scale: prior mean and scale of ``W̃``, broadcastable to each other, the last two
            axes ``(p, p)`` (``[j, k]`` is the edge j → k); leading axes are batch axes
            (e.g. under a ``numpyro.plate``).
        lam: ℓ1 radius λ, scalar or broadcastable to the batch shape; ``inf`` for none. It
            may itself be a sample (e.g. ``numpyro.sample("lam", dist.Exponential(0.1))``).
        method, **options: passed to ``prodag.project``.
        prune: magnitude at or below which an entry of ``W`` is set to zero (0: none).

    Returns:
        ``W``, shape ``broadcast(loc, scale).shape = (..., p, p)``; every slice an exact DAG.

    Example::

        def model(X):                                    # X: (n, p)
            p = X.shape[1]
            W = projected_dag("W", jnp.zeros((p, p)), jnp.ones((p, p)), lam=2.0)
            with numpyro.plate("rows", X.shape[0]):
                numpyro.sample("X", dist.Normal(X @ W, 1.0).to_event(1), obs=X)

        # fit with SVI(model, AutoNormal(model), ...) or MCMC(NUTS(model), ...);
        # Predictive(model, guide=guide, params=params, num_samples=1000)(key, X)["W"]
        # gives (1000, p, p) DAGs.
    """
    loc, scale = jnp.broadcast_arrays(
        *(jnp.asarray(a, dtype=jnp.result_type(a, float)) for a in (loc, scale)))
    if loc.ndim < 2:
        raise ValueError(f"loc and scale must broadcast to (..., p, p); got shape {loc.shape}.")
    W_tilde = numpyro.sample(f"{name}_tilde", dist.Normal(loc, scale).to_event(2))
    W = make_projector(method, prune, **options)(W_tilde, lam)
    return numpyro.deterministic(name, W)

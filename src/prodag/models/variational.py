"""Mean-field Gaussian variational family over a pytree of weights.

``q(ω̃) = Π N(loc, softplus(rho)²)`` with the prior ``p(ω̃) = Π N(prior_mean, prior_std²)``.
The variational parameters are a ``VariationalParams(loc, rho)`` where ``loc`` and ``rho`` are
dicts of arrays with the shapes of one sample (no sample axis).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class VariationalParams(NamedTuple):
    """Means ``loc`` and unconstrained scales ``rho`` (``σ = softplus(rho)``) of ``q``, each a
    dict of arrays keyed by weight name (a JAX pytree)."""

    loc: dict[str, jax.Array]
    rho: dict[str, jax.Array]


def inverse_softplus(y: jax.Array) -> jax.Array:
    """The ``x`` with ``softplus(x) = y`` for ``y > 0``, stable for small and large ``y``."""
    y = jnp.asarray(y)
    return y + jnp.log(-jnp.expm1(-y))


def init_at_prior(shapes: dict[str, tuple[int, ...]], prior_mean: float, prior_std: float,
                  dtype=jnp.float32) -> VariationalParams:
    """Variational parameters equal to the prior: ``loc = prior_mean``, ``σ = prior_std``."""
    rho = inverse_softplus(jnp.asarray(prior_std, dtype))
    return VariationalParams(
        loc={name: jnp.full(shape, prior_mean, dtype) for name, shape in shapes.items()},
        rho={name: jnp.full(shape, rho, dtype) for name, shape in shapes.items()})


def stddev(params: VariationalParams) -> dict[str, jax.Array]:
    """``σ = softplus(rho)`` for every weight array."""
    return jax.tree.map(jax.nn.softplus, params.rho)


def sample(params: VariationalParams, key: jax.Array, n_samples: int) -> dict[str, jax.Array]:
    """Reparameterised draws ``loc + σ ε``: each array gets a leading axis of ``n_samples``."""
    names = sorted(params.loc)
    keys = dict(zip(names, jax.random.split(key, len(names))))
    scales = stddev(params)

    def draw(name):
        loc = params.loc[name]
        noise = jax.random.normal(keys[name], (n_samples, *loc.shape), loc.dtype)
        return loc + scales[name] * noise

    return {name: draw(name) for name in names}


def kl_to_prior(params: VariationalParams, prior_mean: float, prior_std: float) -> jax.Array:
    """Closed-form ``KL(q ‖ p)`` summed over every weight (a scalar).

    Per element: ``log(s₀/σ) + (σ² + (μ − m₀)²) / (2 s₀²) − ½``.
    """
    scales = stddev(params)

    def kl(loc, scale):
        return jnp.sum(jnp.log(prior_std / scale)
                       + (scale ** 2 + (loc - prior_mean) ** 2) / (2 * prior_std ** 2) - 0.5)

    return sum(kl(params.loc[name], scales[name]) for name in params.loc)

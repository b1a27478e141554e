"""``ProjectedNormal``: a Gaussian over continuous matrices pushed through the DAG projection.

``W̃ ~ N(loc, scale²)`` elementwise, ``W = project(W̃, λ)``. Sampling is reparameterised
(``W̃ = loc + scale · ε``), so gradients of any function of the samples reach ``loc``, ``scale``
and ``λ`` through the projection's implicit gradients. Shapes follow NumPyro: ``event_shape`` is
``(p, p)``, ``batch_shape`` the broadcast leading shape of ``loc``/``scale``, and
``sample(key, sample_shape)`` returns ``sample_shape + batch_shape + event_shape``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.projection import project


class ProjectedNormal:
    """Distribution of ``project(W̃, lam, method)`` with ``W̃ ~ N(loc, scale²)``.

    Args:
        loc: mean of ``W̃``, shape ``(..., p, p)``.
        scale: standard deviation of ``W̃`` (positive), broadcastable with ``loc``.
        lam: ℓ1 radius, scalar or broadcastable to the batch shape; ``inf`` for none.
        method: projection method (``"auto"``, ``"exact"``, ``"search"``, ``"path"``).
        **options: options passed to ``prodag.project`` for that method.
    """

    def __init__(self, loc, scale, lam=jnp.inf, method: str = "auto", **options):
        loc, scale = jnp.asarray(loc), jnp.asarray(scale)
        dtype = jnp.result_type(loc.dtype, scale.dtype, float)
        shape = jnp.broadcast_shapes(loc.shape, scale.shape)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(
                f"loc and scale must broadcast to a shape (..., p, p); got {loc.shape} and "
                f"{scale.shape}.")
        if not isinstance(scale, jax.core.Tracer) and not np.all(np.asarray(scale) > 0):
            raise ValueError("scale must be positive everywhere (use e.g. softplus of a parameter).")
        self.loc = jnp.broadcast_to(loc.astype(dtype), shape)
        self.scale = jnp.broadcast_to(scale.astype(dtype), shape)
        self.batch_shape = tuple(shape[:-2])
        self.event_shape = tuple(shape[-2:])
        self.lam = jnp.broadcast_to(jnp.asarray(lam, dtype=dtype), self.batch_shape)
        self.method = method
        self.options = options

    def sample(self, key: jax.Array, sample_shape: tuple[int, ...] = (),
               return_continuous: bool = False):
        """Draw projected DAGs.

        Args:
            key: a JAX PRNG key.
            sample_shape: leading shape of the draw.
            return_continuous: also return the continuous draws ``W̃``.

        Returns:
            ``W`` of shape ``sample_shape + batch_shape + (p, p)`` (every slice an exact DAG),
            or ``(W̃, W)`` when ``return_continuous``.
        """
        sample_shape = tuple(sample_shape)
        noise = jax.random.normal(key, sample_shape + self.loc.shape, dtype=self.loc.dtype)
        W_tilde = self.loc + self.scale * noise
        lam = jnp.broadcast_to(self.lam, sample_shape + self.batch_shape)
        W = project(W_tilde, lam, self.method, **self.options)
        return (W_tilde, W) if return_continuous else W

    def __repr__(self) -> str:
        return (f"ProjectedNormal(batch_shape={self.batch_shape}, event_shape={self.event_shape}, "
                f"method={self.method!r})")

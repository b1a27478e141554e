"""``ProjectedNormal``: a Gaussian over continuous matrices pushed through the DAG projection.

``W̃ ~ N(loc, scale²)`` elementwise, ``W = project(W̃, λ)``. Sampling is reparameterised
(``W̃ = loc + scale · ε``), so gradients of any function of the samples reach ``loc``, ``scale``
and ``λ`` through the projection's implicit gradients. Shapes follow NumPyro: ``event_shape`` is
``(p, p)``, ``batch_shape`` the broadcast leading shape of ``loc``/``scale``, and
``sample(key, sample_shape)`` returns ``sample_shape + batch_shape + event_shape``.

This is what the inference engine draws the linear SEM's graphs from.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.projection import Projector, make_projector


class ProjectedNormal:
    """Distribution of ``project(W̃, lam, method)`` with ``W̃ ~ N(loc, scale²)``.

    Args:
        loc: mean of ``W̃``, shape ``(..., p, p)``.
        scale: standard deviation of ``W̃`` (positive), broadcastable with ``loc``.
        lam: ℓ1 radius; ``inf`` for none. A scalar, an array broadcastable to the batch shape,
            or one radius per sample: an array broadcastable to ``sample_shape + batch_shape``.
        method: projection method (``"auto"``, ``"exact"``, ``"search"``, ``"path"``).
        prune: after projecting, zero the entries with ``|W| ≤ prune``.
        projector: a ready projection ``(W̃, λ) -> W`` (``prodag.projection.make_projector``)
            used instead of ``method``, ``prune`` and ``options``.
        **options: options passed to ``prodag.project`` for that method.

    The paper's exponential prior on λ is a per-sample radius::

        k1, k2 = jax.random.split(jax.random.PRNGKey(0))
        lam = 5.0 * jax.random.exponential(k1, (1000,))    # λ ~ Exponential(mean 5)
        W = ProjectedNormal(loc, scale, lam).sample(k2, (1000,))   # (1000, p, p)
    """

    def __init__(self, loc, scale, lam=jnp.inf, method: str = "auto", prune: float = 0.0, *,
                 projector: Projector | None = None, **options):
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
        self.lam = jnp.asarray(lam, dtype=dtype)
        try:
            jnp.broadcast_shapes(self.lam.shape, self.batch_shape)
        except ValueError:
            raise ValueError(f"lam of shape {self.lam.shape} does not broadcast to the batch "
                             f"shape {self.batch_shape} (with leading sample axes).") from None
        self.method = method
        self.project = projector if projector is not None else make_projector(method, prune,
                                                                               **options)

    def sample_with_continuous(self, key: jax.Array,
                               sample_shape: tuple[int, ...] = ()) -> tuple[jax.Array, jax.Array]:
        """``(W̃, W)``: the continuous draws and their projections, each of shape
        ``sample_shape + batch_shape + (p, p)``."""
        sample_shape = tuple(sample_shape)
        noise = jax.random.normal(key, sample_shape + self.loc.shape, dtype=self.loc.dtype)
        W_tilde = self.loc + self.scale * noise
        lam = jnp.broadcast_to(self.lam, sample_shape + self.batch_shape)
        return W_tilde, self.project(W_tilde, lam)

    def sample(self, key: jax.Array, sample_shape: tuple[int, ...] = ()) -> jax.Array:
        """Projected DAGs ``W`` of shape ``sample_shape + batch_shape + (p, p)``, every slice
        an exact DAG."""
        return self.sample_with_continuous(key, sample_shape)[1]

    def __repr__(self) -> str:
        return (f"ProjectedNormal(batch_shape={self.batch_shape}, event_shape={self.event_shape}, "
                f"method={self.method!r})")

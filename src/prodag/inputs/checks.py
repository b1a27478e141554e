"""Checks of single setting values (numbers, integers, seeds, choices, vectors), each raising a
``ValueError`` that names the setting and the value it got: the parts ``prodag.config.parameters``'s
rules, ``prodag.evaluation.simulate`` and ``prodag.effects`` are made of. Pure numpy."""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

SEED_LIMIT = 2 ** 32
"""Seeds are integers in ``[0, SEED_LIMIT)``: what ``jax.random.PRNGKey`` takes whole."""


def check_positive(name: str, value, *, allow_zero: bool = False,
                   allow_inf: bool = False) -> float:
    """``value`` as a float, if it is a real number > 0 (>= 0 with ``allow_zero``); ``inf``
    only with ``allow_inf``; NaN and booleans never. ``ValueError`` naming ``name`` else."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r} of type "
                         f"{type(value).__name__}.")
    value = float(value)
    bound = ">= 0" if allow_zero else "> 0"
    if np.isnan(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {bound}, got {value!r}.")
    if np.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return value


def check_integer(name: str, value, *, minimum: int | None = None,
                  maximum: int | None = None) -> int:
    """``value`` as an int, if it is an integer (not a bool) within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} of type "
                         f"{type(value).__name__}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}.")
    return value


def check_seed(value, name: str = "seed") -> int:
    """``value`` as an int seed in ``[0, 2³²)``; a ``ValueError`` naming ``name`` otherwise
    (a float such as 1.5, a string, or an integer out of range is not silently changed)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer in [0, 2**32) or None, got {value!r} of "
                         f"type {type(value).__name__}.")
    if not 0 <= int(value) < SEED_LIMIT:
        raise ValueError(f"{name} must be in [0, 2**32 - 1 = {SEED_LIMIT - 1}], got {value}.")
    return int(value)


def check_choice(name: str, value, choices: Iterable):
    """``value`` if it is one of ``choices``; otherwise a ``ValueError`` listing them."""
    choices = list(choices)
    if isinstance(value, (list, dict, set)) or value not in choices:
        listed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}.")
    return value


def check_probability(name: str, value) -> float:
    """A number in ``[0, 1)`` (an edge-probability threshold), else ``ValueError``."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not 0 <= value < 1):
        raise ValueError(f"{name} is an edge probability: it must be in [0, 1), got {value!r}.")
    return float(value)


def check_positive_vector(name: str, value, length: int) -> np.ndarray:
    """A float64 vector ``(length,)``, all finite and > 0 (a scalar is broadcast); a
    ``ValueError`` for a wrong length, non-numeric, non-finite or non-positive entries."""
    try:
        vector = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number or an array of {length} positive "
                         f"numbers, got {value!r}.") from None
    if vector.ndim == 0:
        vector = np.full(length, float(vector))
    if vector.shape != (length,):
        raise ValueError(f"{name} must be a scalar or have shape ({length},) (one entry per "
                         f"variable), got shape {vector.shape}.")
    bad = np.flatnonzero(~(np.isfinite(vector) & (vector > 0)))
    if bad.size:
        raise ValueError(f"{name} must be finite and > 0 everywhere; entries at positions "
                         f"{bad[:8].tolist()} are {vector[bad[:8]].tolist()}.")
    return vector

"""Choosing the ℓ1 radius λ: the grid, the criteria, and the validation split rule."""

from __future__ import annotations

import math

VALIDATION_FRACTION = 0.1
"""Share of rows held out to choose λ by validation (the paper's protocol)."""


def validation_size(n: int, fraction: float = VALIDATION_FRACTION) -> int:
    """Rows held out of ``n``: ``⌊fraction · n⌉``, halves rounded up (the paper's ⌊0.1n⌉)."""
    return math.floor(fraction * n + 0.5)

"""The units results are read in: the data's own, or standardised.

A fit with ``standardize=True`` divided every centred column by its standard deviation
(``scale_``). In *standardised units* a weight or total effect ``j → k`` is the change of
``x_k``, in its standard deviations, per standard deviation of ``x_j``: ``value · sd_j /
sd_k`` of the value in data units. It does not change with the unit of any column (a column
measured in grams instead of kilograms gives the same number) and compares across columns in
different units, where data units rank by whichever column has the largest numbers.

The API reports data units unless asked (``units="standardized"`` on ``total_effects``,
``effect`` and ``to_networkx``); ``prodag fit --standardize`` and ``prodag effects`` on such a
fit print and draw standardised units unless given ``--units data``. Tables of effects are
ranked by the standardised mean whenever the standard deviations are known, in either units,
so the ranking is the same whatever the columns' units.
"""

from __future__ import annotations

import numpy as np

UNITS = ("data", "standardized")
"""The units a result can be reported in."""


def column_sd(scale: np.ndarray, standardized_fit: bool) -> np.ndarray | None:
    """The standard deviations ``(p,)`` of the columns a fit saw, known when it standardised
    them (``standardize=True``: its column divisors ``scale (p,)``), else None."""
    return np.asarray(scale, dtype=float) if standardized_fit else None


def default_units(sd) -> str:
    """``"standardized"`` where the columns' standard deviations ``sd`` are known, else
    ``"data"``."""
    return "data" if sd is None else "standardized"


def check_units(units, sd, option: str = "units") -> str:
    """``units`` checked: one of ``UNITS``, and ``"standardized"`` only where the columns'
    standard deviations ``sd`` are known; ``option`` names the argument in the error."""
    if units not in UNITS:
        raise ValueError(f"{option} must be 'data' or 'standardized', got {units!r}.")
    if units == "standardized" and sd is None:
        raise ValueError(
            f"{option}='standardized' needs a fit on standardised columns (its column standard "
            "deviations are the unit): fit with standardize=True (prodag fit --standardize), "
            "or ask for data units.")
    return units


def standardized(values: np.ndarray, sd: np.ndarray, causes: slice = slice(None)) -> np.ndarray:
    """``values (..., c, p)`` in data units (``[..., i, k]``: the ``i``-th of the causes
    ``causes``, every variable by default, → k) in standardised units,
    ``values_jk · sd_j / sd_k``."""
    sd = np.asarray(sd, dtype=float)
    return np.asarray(values) * sd[causes, None] / sd[None, :]


def in_units(values: np.ndarray, sd, units: str, causes: slice = slice(None)) -> np.ndarray:
    """``values (..., c, p)`` of the causes ``causes`` given in data units, in ``units``
    (checked by ``check_units``)."""
    if check_units(units, sd) == "standardized":
        return standardized(values, sd, causes)
    return values

"""Interventional data with known targets: which variables were set from outside in each row.

``intervention_mask(interventions, columns, n)`` reads the targets as a boolean ``(n, p)``
mask (``True``: variable k was intervened on in row i) from

* a boolean or 0/1 array or DataFrame of shape ``(n, p)`` (a DataFrame's columns must be the
  variables, in any order);
* one entry per row naming its targets: ``""`` (or None/NaN) for an observational row,
  ``"akt"``, or several joined by ``;`` (``"pkc;akt"``).

In a row where k is intervened, k's structural equation is left out of the likelihood (its
value is set from outside; it still acts as a parent of the others), for the linear and the
MLP SEM; the projected prior and the variational family do not change. Intervened values get
no model of their own: they are conditioned on, not explained.

Errors (``DataError``): a mask of the wrong shape, unknown variable names, a variable
intervened on in every row (its parents could not be learned). With no purely observational
row, a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prodag.validation import DataError

SEPARATOR = ";"


def intervention_mask(interventions, columns: Sequence[str], n: int) -> np.ndarray:
    """The ``(n, p)`` boolean mask of intervened variables per row (module docstring)."""
    names = [str(c) for c in columns]
    if isinstance(interventions, pd.DataFrame):
        missing = sorted(set(names) - {str(c) for c in interventions.columns})
        if missing or interventions.shape[1] != len(names):
            raise DataError("the interventions table must have one column per variable "
                            f"({', '.join(names)}); it has "
                            f"{', '.join(map(str, interventions.columns))}")
        interventions = interventions.rename(columns=str)[names].to_numpy()
    if isinstance(interventions, pd.Series):
        interventions = interventions.to_list()
    array = np.asarray(interventions, dtype=object)
    if array.ndim == 2:
        mask = _boolean_mask(array, names, n)
    elif array.ndim == 1:
        mask = _mask_from_targets(array, names, n)
    else:
        raise DataError(f"interventions must be an (n, p) mask or one entry per row; got "
                        f"an array of shape {array.shape}")
    _check(mask, names)
    return mask


def _boolean_mask(array: np.ndarray, names: list[str], n: int) -> np.ndarray:
    if array.shape != (n, len(names)):
        raise DataError(f"the interventions mask must have the data's shape ({n}, "
                        f"{len(names)}); got {array.shape}")
    values = pd.DataFrame(array).apply(pd.to_numeric, errors="coerce").to_numpy(float)
    if np.any(~np.isin(values, (0.0, 1.0))):
        raise DataError("the interventions mask must hold only True/False or 1/0")
    return values == 1.0


def _mask_from_targets(entries: np.ndarray, names: list[str], n: int) -> np.ndarray:
    if len(entries) != n:
        raise DataError(f"interventions name the targets of {len(entries)} rows; the data "
                        f"have {n}")
    mask = np.zeros((n, len(names)), dtype=bool)
    unknown = set()
    for row, entry in enumerate(entries):
        if entry is None or (isinstance(entry, float) and np.isnan(entry)):
            continue
        for target in str(entry).split(SEPARATOR):
            target = target.strip()
            if not target:
                continue
            if target not in names:
                unknown.add(target)
            else:
                mask[row, names.index(target)] = True
    if unknown:
        raise DataError(f"interventions name unknown variable(s) {', '.join(sorted(unknown))}; "
                        f"the variables are {', '.join(names)}")
    return mask


def _check(mask: np.ndarray, names: list[str]) -> None:
    always = [names[k] for k in np.flatnonzero(mask.all(axis=0))]
    if always:
        raise DataError(f"variable(s) {', '.join(always)} are intervened on in every row: no "
                        "row tells how they depend on the others. Drop them, or add rows "
                        "where they are observed.")
    if mask.any(axis=1).all():
        warnings.warn("every row has an intervention target: there are no purely "
                      "observational rows (each variable's equation is still learned from the "
                      "rows where it is not intervened on).", UserWarning, stacklevel=3)

"""Interventional data with known targets: which variables were set from outside in each row.

``intervention_mask(interventions, columns, n)`` reads the targets as a boolean ``(n, p)``
mask (``True``: variable k was intervened on in row i) from

* a boolean or 0/1 array or DataFrame of shape ``(n, p)`` (a DataFrame's columns must be the
  variables, in any order);
* one entry per row naming its targets: ``""`` (or None/NaN) for an observational row,
  ``"akt"``, or several joined by ``;`` (``"pkc;akt"``).

In a row where k is intervened, k's structural equation is left out of the likelihood (its
value is set from outside), for the linear and the MLP SEM; the projected prior and the
variational family do not change. Intervened values get no model of their own: they are
conditioned on, not explained. What the intervened variable passes on to its children depends
on the kind of intervention (``INTERVENTION_KINDS``):

* ``"do"``: the measured value is the value set from outside, and the children respond to it
  (a perfect intervention on the measured quantity, as in ``prodag.evaluation.simulate``);
* ``"activity"``: the intervention sets an unmeasured activity of k (as an inhibiting or
  activating drug acts on a protein's activity, not on its measured phosphorylation): the
  measured value is a read-out, and the children see one constant level per condition, taken
  up by the condition intercepts (``hide_intervened``).

Experimental conditions (``condition_groups``): every condition has its own intercept for
every variable, so that a condition's shift of the baselines (a stimulation applied to every
cell of it) is not read as edges. For the linear SEM, profiling out these intercepts is exactly
centring each variable within each condition (``centre_within``); for the MLP it is the same
preprocessing, an approximation.

Errors (``DataError``): a mask of the wrong shape, unknown variable names, a variable
intervened on in every row (its parents could not be learned). With no purely observational
row, a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prodag.inputs.validation import DataError

SEPARATOR = ";"
INTERVENTION_KINDS = ("do", "activity")


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
    bad = np.argwhere(~np.isin(values, (0.0, 1.0)))
    if len(bad):
        row, column = bad[0]
        value = array[row, column]
        shown = "nothing (a missing value)" if pd.isna(value) else repr(value)
        more = f" ({len(bad)} such entries in all)" if len(bad) > 1 else ""
        raise DataError(f"the interventions mask must hold only True/False or 1/0; row {row} "
                        f"(counting from 0), column {names[column]!r} holds {shown}{more}.")
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


def condition_groups(conditions, mask: np.ndarray | None, kind: str, n: int) -> np.ndarray | None:
    """The condition of every row as integer codes ``(n,)``, or None for one condition.

    ``conditions``: one label per row (any hashable values; a pandas Series or sequence). When
    it is None, the rows form one condition, except with ``kind="activity"``, where each
    distinct set of targets of ``mask (n, p)`` is a condition (the hidden activity level is
    one constant per set)."""
    if conditions is None:
        if kind != "activity" or mask is None:
            return None
        return np.unique(mask, axis=0, return_inverse=True)[1].reshape(n)
    labels = pd.Series(np.asarray(conditions, dtype=object).reshape(-1))
    if len(labels) != n:
        raise DataError(f"conditions name {len(labels)} rows; the data have {n}")
    if labels.isna().any():
        raise DataError(f"conditions are missing for {int(labels.isna().sum())} row(s); give "
                        "every row a condition label")
    codes, uniques = pd.factorize(labels.astype(str))
    sizes = np.bincount(codes)
    if sizes.min() < 2:
        raise DataError(f"condition {uniques[int(np.argmin(sizes))]!r} has a single row: a "
                        "condition needs at least two rows for its own intercepts")
    return codes


def centre_within(data: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``data (n, p)`` centred within each group of ``groups (n,)`` (integer codes
    0 … G-1), and the group means ``(G, p)``."""
    means = np.stack([data[groups == g].mean(axis=0) for g in range(groups.max() + 1)])
    return data - means[groups], means


def hide_intervened(Z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``Z (n, p)`` (centred within conditions) with every intervened entry set to 0, the
    condition's level: under ``kind="activity"`` the children of an intervened variable see
    no within-condition variation of it. Its own equation is left out of those rows anyway."""
    return np.where(mask, 0.0, Z)


def condition_labels(conditions, mask: np.ndarray | None, groups: np.ndarray,
                     columns: Sequence[str]) -> list[str]:
    """The label of each condition code of ``groups (n,)``: the given ``conditions`` as
    strings, or, for conditions made from the targets of ``mask (n, p)``, the targets joined
    by ``;`` (``""``: none)."""
    first = [int(np.flatnonzero(groups == g)[0]) for g in range(groups.max() + 1)]
    if conditions is not None:
        labels = label_strings(conditions)
        return [labels[i] for i in first]
    return [SEPARATOR.join(str(columns[k]) for k in np.flatnonzero(mask[i])) for i in first]


def label_strings(conditions) -> list[str]:
    """One condition label per row as strings (any hashable labels; a pandas Series or a
    sequence): how fitted conditions are named and looked up."""
    return pd.Series(np.asarray(conditions, dtype=object).reshape(-1)).astype(str).to_list()


def condition_offsets(fitted_conditions: list[str] | None,
                      condition_means: np.ndarray | None, conditions,
                      n: int) -> np.ndarray | float:
    """The fitted condition means ``(n, p)`` of each of ``n`` rows given their ``conditions``
    labels, from a fit's condition labels ``fitted_conditions`` (``G``) and their means
    ``condition_means (G, p)`` (0 for a fit without conditions)."""
    if fitted_conditions is None:
        if conditions is not None:
            raise ValueError("this model was fitted without conditions; predict takes "
                             "none.")
        return 0.0
    if conditions is None:
        raise ValueError("this model was fitted with one intercept per condition: give "
                         "predict each row's condition, one of "
                         f"{', '.join(map(repr, fitted_conditions))}.")
    labels = label_strings(conditions)
    unknown = sorted(set(labels) - set(fitted_conditions))
    if len(labels) != n or unknown:
        raise ValueError(f"conditions must name one fitted condition per row ({n} rows; "
                         f"fitted: {', '.join(map(repr, fitted_conditions))}); got "
                         f"{len(labels)} labels" + (f", unknown {unknown}" if unknown else ""))
    return condition_means[[fitted_conditions.index(label) for label in labels]]

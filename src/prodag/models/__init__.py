"""Structural equation models: the likelihood of the data given sampled weights.

``LinearSEM`` lives in ``linear.py``; ``MLPSEM`` in ``mlp.py`` and ``AdditiveSEM`` in
``additive.py`` are imported only when asked for.
Every model fulfils the contract in ``base.py``.
"""

from __future__ import annotations

from prodag.models.base import StructuralEquationModel, Weights
from prodag.models.linear import LinearSEM

SEM_NAMES = ("linear", "mlp", "additive")
LIKELIHOODS = ("gaussian", "student")
"""Noise distributions every SEM takes (``"student"``: ``prodag.models.robust``)."""

__all__ = ["LIKELIHOODS", "LinearSEM", "SEM_NAMES", "StructuralEquationModel", "Weights",
           "make_model"]


def make_model(sem: str, *, hidden_units: int = 10, hidden_layers: int = 1,
               activation: str = "relu", bias: bool = True, likelihood: str = "gaussian",
               parents: tuple[tuple[int, ...], ...] | None = None) -> StructuralEquationModel:
    """The model named ``sem`` (``"linear"``, ``"mlp"`` or ``"additive"``) with Gaussian or
    Student-t noise (``likelihood``); MLP options are ignored for the others. ``parents``:
    each variable's candidate parents, which make the Gaussian linear SEM's likelihood
    cheaper (``LinearSEM``); the other models compute theirs as before."""
    if likelihood == "student":
        from prodag.models.robust import StudentTNoise

        return StudentTNoise(make_model(sem, hidden_units=hidden_units,
                                        hidden_layers=hidden_layers, activation=activation,
                                        bias=bias))
    if likelihood != "gaussian":
        raise ValueError(f"likelihood={likelihood!r} is not known; use one of {LIKELIHOODS}.")
    if sem == "linear":
        return LinearSEM(parents)
    if sem == "additive":
        from prodag.models.additive import AdditiveSEM

        return AdditiveSEM()
    if sem == "mlp":
        from prodag.models.mlp import MLPSEM

        return MLPSEM(hidden_units=hidden_units, activation=activation, bias=bias,
                      hidden_layers=hidden_layers)
    raise ValueError(f"sem={sem!r} is not a known model; use one of {SEM_NAMES}.")

"""When a fit's training stops: the Adam steps of an epoch, the epochs without gain a fit
waits and the warm-up before they count, resolved for the fit (the linear SEM on candidate
parents has its own, measured on those fits; ``prodag.inference.kernels`` runs the epochs)."""

from prodag.config import parameters
from prodag.config.starts import screened_linear

PATIENCE = 5
"""Epochs without improvement after which a fit stops, but for a linear fit on candidate
parents (``SCREENED_PATIENCE``)."""
STEPS_PER_EPOCH = 10
"""Adam steps an epoch, but for a linear fit on candidate parents (``SCREENED_STEPS_PER_EPOCH``)."""
SCREENED_PATIENCE = 3
"""Epochs without improvement after which a linear fit on candidate parents stops (5
otherwise: ``PATIENCE``). Over ten p = 100, n = 100 datasets its posteriors
score as those of 5 (Brier −0.1 ± 0.3, E-SHD −0.2 ± 0.3, paired) for a sixth less training
(docs/findings.md, 2026-11-29, "three epochs' patience on candidate parents")."""
SCREENED_STEPS_PER_EPOCH = 5
"""Adam steps an epoch of a linear fit on candidate parents (10 otherwise: ``STEPS_PER_EPOCH``):
the patience and the λ path's screen then act after half as many steps, and on the p = 100 and
MUNIN1 tables the posteriors scored as well or better in a fifth to a quarter less time
(docs/findings.md, 2026-11-30, "five Adam steps an epoch"). It relies on
``SCREENED_WARMUP_STEPS`` at the largest sizes."""
SCREENED_WARMUP_STEPS = 30
"""Adam steps from a fit's start within which an epoch without gain does not count toward the
patience, for a linear fit on candidate parents (none otherwise). From a data start the
objective can rise for some steps after Adam's first ones before it falls (seen at p = 1000);
``SCREENED_PATIENCE`` epochs of ``SCREENED_STEPS_PER_EPOCH`` steps would stop a fit inside that
rise, far from its optimum (docs/findings.md, 2026-11-30, "a warm-up of 30 steps")."""


def _resolved(settings, screened: bool, name: str, on_candidates: int, otherwise: int) -> int:
    """``training.<name>`` if it is set, else ``on_candidates`` for the linear SEM on candidate
    parents (``screened``), the fits that value was measured on, and ``otherwise`` elsewhere."""
    value = getattr(parameters.training_options(settings), name)
    if value is not None:
        return int(value)
    return on_candidates if screened_linear(settings, screened) else otherwise


def resolved_patience(settings, screened: bool) -> int:
    """``training.patience`` with ``None`` resolved: ``SCREENED_PATIENCE`` or ``PATIENCE``."""
    return _resolved(settings, screened, "patience", SCREENED_PATIENCE, PATIENCE)


def resolved_steps_per_epoch(settings, screened: bool) -> int:
    """``training.steps_per_epoch`` with ``None`` resolved: ``SCREENED_STEPS_PER_EPOCH`` or
    ``STEPS_PER_EPOCH``."""
    return _resolved(settings, screened, "steps_per_epoch", SCREENED_STEPS_PER_EPOCH,
                     STEPS_PER_EPOCH)


def resolved_warmup_steps(settings, screened: bool) -> int:
    """``training.warmup_steps`` with ``None`` resolved: ``SCREENED_WARMUP_STEPS`` or none."""
    return _resolved(settings, screened, "warmup_steps", SCREENED_WARMUP_STEPS, 0)

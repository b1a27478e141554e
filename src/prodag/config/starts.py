"""How many starts a linear fit takes from the data, and whether its restarts take them in
turn without the prior: the rules ``prodag.config.spec`` resolves ``n_restarts`` by and the
fit's starts follow (``prodag.inference.initialization``, ``prodag.inference.fitting``)."""

MANY_STARTS_UP_TO = 30
"""Largest number of variables searched from 8 starting orders by default (2 above): the cost
of one search grows quickly with p, so large graphs get fewer starts."""
SEARCHED_GRAPHS = 6
"""Distinct searched graphs whose orders start the linear SEM (besides the top-down order),
at most ``SEARCHED_GRAPHS_ABOVE`` above ``MANY_STARTS_UP_TO`` variables: the posterior's best
modes often lie along an order that is not the BIC-best one."""
SEARCHED_GRAPHS_ABOVE = 1


SCREENED_RESTARTS = 8
"""Starts of a linear fit on candidate parents (``prodag.inputs.candidates``) that takes its
data starts in turn: each data start four times, with other training keys. At p = 100 the
ELBOs of the two best radii differ by less than the spread of the optimiser's runs at one of
them, and a seed's posterior is carried by the few fits that came out ahead; with fewer
starts two seeds chose different radii, then different modes (docs/findings.md). With
``select_by="elbo-sparse"`` the first ``DECIDING_STARTS`` decide the radius and the others
run at it only (``prodag.inference.radius_selection``)."""
SCREENED_LR = 0.1
"""Adam's rate of a linear fit on candidate parents: at p = 100 its fits stop in about two
thirds of the epochs they take at ``prodag.config.spec.LINEAR_LR``, choose the same radii and
score a lower E-SHD, and the epochs saved pay for the starts above (docs/findings.md)."""
SCREENED_PATIENCE = 3
"""Epochs without improvement after which a linear fit on candidate parents stops (5
otherwise: ``prodag.config.spec.PATIENCE``). Over ten p = 100, n = 100 datasets its posteriors
score as those of 5 (Brier −0.1 ± 0.3, E-SHD −0.2 ± 0.3, paired) for a sixth less training
(docs/findings.md, 2026-11-29, "three epochs' patience on candidate parents")."""
SCREENED_STEPS_PER_EPOCH = 5
"""Adam steps an epoch of a linear fit on candidate parents of at most
``SHORT_EPOCHS_UP_TO_P`` variables (10 otherwise: ``prodag.config.spec.STEPS_PER_EPOCH``). Over
ten p = 100, n = 100 datasets its posteriors score as those of 10 (Brier −0.01 ± 0.27, E-SHD
−0.07 ± 0.32, paired, the same radii) in a quarter less time, and over ten MUNIN1 datasets
better (Brier −5.7 ± 3.3) in a fifth less (docs/findings.md, 2026-11-30, "five Adam steps an
epoch")."""
SHORT_EPOCHS_UP_TO_P = 500
"""The most variables whose fits on candidate parents take ``SCREENED_STEPS_PER_EPOCH`` steps an
epoch. At p = 1000 Adam's first steps from a data start overshoot: the objective rises for
about 15 steps after its 10th, so 3 epochs of 5 steps without gain stopped 17 of the 20 fits
at the polished radii after 25 steps, about 30 nats a row above where they converge, and the
posterior scored E-SHD 139.7 instead of 96.9; epochs of 10 steps ride the rise out. Up to
p = 500 the fits trained through it (docs/findings.md, 2026-11-30)."""


def n_searched_graphs(p: int) -> int:
    """How many searched orders start a linear fit of ``p`` variables."""
    return SEARCHED_GRAPHS if p <= MANY_STARTS_UP_TO else SEARCHED_GRAPHS_ABOVE


def takes_two_orders(sem: str, from_data: bool, per_variable_noise: bool) -> bool:
    """Whether the fit's restarts take the linear SEM's two data starts (the top-down and the
    searched order, ``prodag.inference.initialization.start_means``) in turn, without the prior."""
    return sem == "linear" and from_data and not per_variable_noise

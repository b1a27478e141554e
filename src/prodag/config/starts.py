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


def n_searched_graphs(p: int) -> int:
    """How many searched orders start a linear fit of ``p`` variables."""
    return SEARCHED_GRAPHS if p <= MANY_STARTS_UP_TO else SEARCHED_GRAPHS_ABOVE


def takes_two_orders(sem: str, from_data: bool, per_variable_noise: bool) -> bool:
    """Whether the fit's restarts take the linear SEM's two data starts (the top-down and the
    searched order, ``prodag.inference.initialization.start_means``) in turn, without the prior."""
    return sem == "linear" and from_data and not per_variable_noise


def screened_linear(settings, screened: bool) -> bool:
    """Whether the fit is the linear SEM's on candidate parents (``screened``): the fits that
    the ``SCREENED_*`` defaults were measured on."""
    return screened and settings.sem == "linear"

"""Projection of continuous matrices onto sparse DAGs (the hot path of ProDAG).

``project(W̃, λ, method)`` = ℓ1-ball projection of the nearest DAG; ``acyclic_projection`` and
``l1_ball_projection`` are its two steps; ``make_projector(method, prune)`` fixes the method
and the pruning for the inference engine and ``ProjectedNormal``.
"""

from prodag.projection.api import METHODS, Projector, acyclic_projection, make_projector, project
from prodag.projection.exact import EXACT_MAX_NODES
from prodag.projection.l1 import l1_ball_projection

__all__ = ["project", "acyclic_projection", "l1_ball_projection", "make_projector", "Projector",
           "METHODS", "EXACT_MAX_NODES"]

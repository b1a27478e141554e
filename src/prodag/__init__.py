"""prodag: Bayesian structure learning of DAGs with projected variational inference.

The public names are resolved lazily, so ``import prodag`` (and ``prodag --help``) stays fast
and does not start JAX until a numerical routine is used.
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY_ATTRIBUTES = {
    "ProDAG": "prodag.estimator",
    "project": "prodag.projection",
    "ProjectedNormal": "prodag.distributions",
    "TrainingOptions": "prodag.config.parameters",
    "NetworkOptions": "prodag.config.parameters",
    "Tiers": "prodag.inputs.knowledge",
    "AssumptionWarning": "prodag.inputs.assumptions",
}
_LAZY_MODULES = {"simulate": "prodag.evaluation.simulate", "metrics": "prodag.evaluation.metrics",
                 "datasets": "prodag.evaluation.datasets", "graph": "prodag.graph",
                 "plotting": "prodag.evaluation.plotting"}

__all__ = [*_LAZY_ATTRIBUTES, *_LAZY_MODULES, "__version__"]


def __getattr__(name):
    if name in _LAZY_ATTRIBUTES:
        return getattr(import_module(_LAZY_ATTRIBUTES[name]), name)
    if name in _LAZY_MODULES:
        return import_module(_LAZY_MODULES[name])
    raise AttributeError(f"module 'prodag' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

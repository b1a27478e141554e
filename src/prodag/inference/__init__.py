"""Inference for projected DAG posteriors: the batched ELBO fit, its starts and radii, and the
samplers over ``ω̃``.

``kernels``: the pure functions over NamedTuple states (one epoch of every member, the
compiled loop, the scores); ``engine``: ``VariationalInference``, which compiles them for a
model and runs batches of members (``fit_members``); ``fitting``: one model's engines, starts
and batches of members; ``selection``: the λ grid and its choice; ``initialization`` and
``order_search``: starts from the data; ``draws``: projected draws of a fit; ``refinement``
and ``smc``: Metropolis refinement and tempered SMC towards the model's own posterior.

The names of ``engine`` and ``kernels`` are importable from here; they load on first use, so
importing a light module of this package (``selection``) does not start JAX.
"""

from importlib import import_module

_ENGINE = ("SCORE_CHUNK", "SECONDS_PER_CALL", "FitResult", "Screen", "VariationalInference",
           "epochs_per_call", "member_layout")
_KERNELS = ("FitState", "Members", "OptimiserOptions", "Params", "compacted_size", "elbo_loss",
            "epoch", "init_state", "member_data", "negative_elbos", "noise_variance_of",
            "over_members", "pad_members", "run_epochs", "running", "score_key_chunks", "stack")
_LAZY_ATTRIBUTES = {**dict.fromkeys(_ENGINE, "prodag.inference.engine"),
                    **dict.fromkeys(_KERNELS, "prodag.inference.kernels")}

__all__ = sorted(_LAZY_ATTRIBUTES)


def __getattr__(name):
    if name in _LAZY_ATTRIBUTES:
        return getattr(import_module(_LAZY_ATTRIBUTES[name]), name)
    raise AttributeError(f"module 'prodag.inference' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

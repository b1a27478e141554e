"""Inference for projected DAG posteriors: the batched ELBO fit, its starts and radii, and the
samplers over ``ω̃``.

``kernels``: the pure functions over NamedTuple states (one epoch of every member, the
compiled loop, the scores) and ``build_kernels``, which binds them to one model; ``compiled``:
the one place that compiles and caches every kernel; ``engine``: ``VariationalInference``, the
host loop that runs batches of members (``fit_members``) with the compiled kernels;
``fitting``: one model's starts and batches of members; ``radius_selection``: the λ grid and
its choice; ``parent_selection``: the order search's parent sets; ``initialization`` and
``order_search``: starts from the data; ``draws``: projected draws of a fit; ``refinement``
and ``smc``: Metropolis refinement and tempered SMC towards the model's own posterior.

The names of ``engine`` and ``kernels`` are importable from here (importing any module of this
package starts JAX).
"""

from prodag.inference.engine import (SCORE_CHUNK, SECONDS_PER_CALL, FitResult, Screen,
                                     VariationalInference, epochs_per_call, member_layout)
from prodag.inference.kernels import (FitState, Members, Params, VariationalKernels,
                                      build_kernels, compacted_size, elbo_loss, epoch,
                                      init_state, member_data, negative_elbos, noise_variance_of,
                                      over_members, pad_members, run_epochs, running,
                                      score_key_chunks, stack)

__all__ = ["SCORE_CHUNK", "SECONDS_PER_CALL", "FitResult", "FitState", "Members", "Params",
           "Screen", "VariationalInference", "VariationalKernels", "build_kernels",
           "compacted_size", "elbo_loss", "epoch", "epochs_per_call", "init_state",
           "member_data", "member_layout", "negative_elbos", "noise_variance_of",
           "over_members", "pad_members", "run_epochs", "running", "score_key_chunks", "stack"]

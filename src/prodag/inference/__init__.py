"""Variational inference for projected DAG posteriors: the ELBO and its batched optimisation.

``kernels``: the pure functions over NamedTuple states (one epoch of every member, the
compiled loop, the scores); ``engine``: ``VariationalInference``, which compiles them for a
model and runs batches of members (``fit_members``).
"""

from prodag.inference.engine import (SCORE_CHUNK, SECONDS_PER_CALL, FitResult,  # noqa: F401
                                     Screen, VariationalInference, epochs_per_call,
                                     member_layout)
from prodag.inference.kernels import (FitState, Members, OptimiserOptions, Params,  # noqa: F401
                                      compacted_size, elbo_loss, epoch, init_state,
                                      member_data, negative_elbos, noise_variance_of,
                                      over_members, pad_members, run_epochs, running,
                                      stack)

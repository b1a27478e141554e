"""Every ``fold_in`` stream of a fit's key, in one table, so no two uses share random numbers.

A fit's key is ``PRNGKey(seed)``. Chain ``c`` trains with ``fold_in(key, c)`` (``c`` <
``FIRST_STREAM``); the other uses fold the fit's key (or, where said, a chain's or a
component's) with one of the indices below. ``tests/test_streams.py`` checks that they are
distinct and clear of the chains' indices.
"""

FIRST_STREAM = 2 ** 20
"""Chain indices stay below this (``n_chains`` is checked against it)."""
SAMPLE_STREAM = 2 ** 20
"""Draws of ``sample`` / ``edge_probabilities`` without a seed (from ``PRNGKey(seed_)``)."""
ASSIGNMENT_STREAM = 2 ** 21
"""Which mixture component each draw comes from (``prodag.posterior.mixture``)."""
DIAGNOSTIC_STREAM = 2 ** 22
"""Common random numbers that re-score the components and the chains' diagnostic draws."""
REFINEMENT_STREAM = 2 ** 23
"""The refinement's starting draws and its Metropolis steps (``prodag.inference.refinement``)."""
SMC_STREAM = 2 ** 24
"""The tempered SMC's particles and moves (``prodag.inference.smc``)."""
SCORE_STREAM = 2 ** 31 - 1
"""Scores a finished member of a batched fit (folded into that member's training key)."""

NUMPY_NOISE_STREAM = 3
"""Not a JAX stream: ``numpy.random.default_rng([seed, NUMPY_NOISE_STREAM])`` seeds the noise
of interventional simulations (``prodag.effects``)."""

FIT_STREAMS = {"sample": SAMPLE_STREAM, "assignment": ASSIGNMENT_STREAM,
               "diagnostic": DIAGNOSTIC_STREAM, "refinement": REFINEMENT_STREAM,
               "smc": SMC_STREAM, "score": SCORE_STREAM}
"""The streams folded into the fit's key, by use."""

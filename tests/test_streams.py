"""The fold_in streams of a fit's key: one table, every stream distinct."""

import jax
import numpy as np

from prodag import streams
from prodag.config.parameters import rules


def test_the_streams_are_distinct_and_clear_of_the_chains():
    values = list(streams.FIT_STREAMS.values())
    assert len(set(values)) == len(values)
    assert min(values) >= streams.FIRST_STREAM
    keys = [np.asarray(jax.random.key_data(jax.random.fold_in(jax.random.PRNGKey(0), v)))
            for v in values]
    assert len({k.tobytes() for k in keys}) == len(values)


def test_no_number_of_chains_reaches_the_first_stream():
    """Chain c trains with fold_in(key, c): the largest allowed ``n_chains`` stays below the
    streams."""
    import pytest

    check = rules()["n_chains"]
    with pytest.raises(ValueError):
        check(streams.FIRST_STREAM + 1)

"""The fit's second step: the plan of what the chains run — the compiled engine and, for
every chain, its rows with their starts (the order search runs here).

On all rows; on the training rows of a validation split and again on all (``lam="auto"``
with ``select_by="validation"``); or, bagged, on each chain's own bootstrap resample.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prodag.config.spec import FitSpec, ModelConfig
from prodag.fit.prepare import Prepared
from prodag.inference import compiled, fitting, radius_selection


class ChainRows(NamedTuple):
    """The rows one chain fits: its λ path's (``fitting.Rows``), those of the refit at the
    chosen radius after a validation split (or None) and the held-out rows that score the
    radii, ``(Z_val, observed_val)`` (``(None, None)`` when there are none)."""

    path: fitting.Rows
    refit: fitting.Rows | None
    validation: tuple


class FitPlan(NamedTuple):
    """What the chains run: the compiled engine, each chain's rows with their starts (the
    same ``ChainRows`` for every chain unless ``bagged``), the starts per chain and the number
    of fits (for the progress bar)."""

    engine: object
    config: ModelConfig
    rows: list[ChainRows]
    restarts: int
    n_fits: int
    bagged: bool


def plan_fit(spec: FitSpec, prepared: Prepared) -> FitPlan:
    """Compile the engine and compute the starts once for every chain (the order search runs
    here): on all rows, or on the training rows of a validation split and again on all."""
    config, dtype, restarts = spec.config, spec.dtype, spec.restarts
    engine = compiled.variational(config, spec.optimiser, spec.prior_mean,
                                  spec.prior_std, spec.learns_noise)
    from_data = spec.from_data
    split = spec.split and prepared.Z_val is None

    def rows_of(Z, observed) -> fitting.Rows:
        return fitting.rows(engine, Z, observed, prepared.noise, dtype, config, from_data,
                            restarts)

    if spec.bootstrap:
        rows = [ChainRows(rows_of(*resample(prepared, prepared.seed, chain)), None,
                          (None, None)) for chain in range(spec.n_chains)]
    elif not split:
        rows = [ChainRows(rows_of(prepared.Z, prepared.observed), None,
                          (prepared.Z_val, None))] * spec.n_chains
    else:
        fraction, seed = spec.validation_fraction, prepared.seed
        train, held_out = radius_selection.split_rows(prepared.Z, fraction, seed)
        observed_train, observed_val = (
            (None, None) if prepared.observed is None else
            radius_selection.split_rows(prepared.observed, fraction, seed))
        rows = [ChainRows(rows_of(train, observed_train),
                          rows_of(prepared.Z, prepared.observed),
                          (held_out, observed_val))] * spec.n_chains
    return FitPlan(engine, config, rows, restarts, n_fits(spec, split), spec.bootstrap)


def narrows(spec: FitSpec) -> bool:
    """Whether the path gives its starts beyond ``radius_selection.DECIDING_STARTS`` to one
    polished radius only: with ``select_by="elbo-sparse"``, whose near-tie rule pools one
    radius's fits (``prodag.fit.chains.tie_radius``)."""
    return spec.select_by == "elbo-sparse"


def n_fits(spec: FitSpec, split: bool) -> int:
    """The fits of a whole fit (every chain's): the starts at a fixed radius, or the λ path
    (λ = ∞ and ``n_lambdas`` radii) and then its restarts: at the chosen radius after a
    validation ``split``, else at the ``radius_selection.POLISHED_RADII`` best radii (all of them
    when the path has fewer); with ``select_by="elbo-sparse"`` the starts beyond
    ``radius_selection.DECIDING_STARTS`` at one of them only."""
    n_lambdas, restarts = spec.n_lambdas, spec.restarts
    polished = min(radius_selection.POLISHED_RADII, n_lambdas)
    deciding = (min(restarts, radius_selection.DECIDING_STARTS) if narrows(spec)
                else restarts)
    per_chain = (restarts if spec.lam != "auto" else 1 + n_lambdas + (
        restarts if split else (deciding - 1) * polished + restarts - deciding))
    return spec.n_chains * per_chain


def resample(prepared: Prepared, seed: int, chain: int) -> tuple:
    """Chain ``chain``'s bootstrap resample of the rows, ``(Z (n, p), observed or None)``,
    drawn by a generator of ``(seed, chain)`` (BayesBag: Huggins & Miller, 2023)."""
    rows = np.random.default_rng([seed, chain]).integers(0, len(prepared.Z), len(prepared.Z))
    return (prepared.Z[rows],
            None if prepared.observed is None else prepared.observed[rows])


"""The fit's third step: every chain run (``prodag.posterior.chains``), each with its own
training key, through the λ path or at the fixed radius, from every start of its rows.
"""

from __future__ import annotations

import jax

from prodag.config.spec import FitSpec
from prodag.fit.plan import FitPlan, narrows
from prodag.inference import fitting, radius_selection
from prodag.posterior.chains import CONTENDER_NATS, Chain


def run_chains(spec: FitSpec, fit_plan: FitPlan, noise, keys: list,
               progress) -> list[Chain]:
    """Every chain (chain ``c`` trains with ``keys[c]``; ``noise``: the fixed noise variances
    ``(p,)`` or the start of the learned ones): the λ path, or the fixed radius, from every
    start of its rows; each stage of all chains is one batch of members
    (``prodag.inference.radius_selection.select_lambda``)."""
    rows = fit_plan.rows
    fit_members = fitting.member_fitter(fit_plan.engine, [r.path for r in rows], noise, progress)
    if spec.lam != "auto":
        lam, starts = spec.lam, fit_plan.restarts
        fits = fit_members([radius_selection.MemberSpec(c, lam, r, jax.random.fold_in(keys[c], r))
                         for c in range(len(rows)) for r in range(starts)], f"λ={lam:.3g}")
        return [Chain([(lam, fit) for fit in sorted(
            fits[c * starts:(c + 1) * starts], key=lambda fit: fit.objective)], None)
            for c in range(len(rows))]
    refit = (fitting.member_fitter(fit_plan.engine, [r.refit for r in rows], noise, progress)
             if rows[0].refit is not None else None)
    # by the near-tie rule only one polished radius's fits are pooled: the starts beyond
    # those that decide it go to it alone
    narrow = ((lambda c, scored: tie_radius(scored, rows[c].path.Z.shape[0]))
              if narrows(spec) else None)
    selections = fitting.fit_lambda_path(
        fit_plan.engine, fit_plan.config, fit_members, [r.validation for r in rows], noise, keys,
        spec.select_by, spec.n_lambdas, fit_plan.restarts, refit, narrow, spec.path_screen)
    # by the ELBO, every fit of the path is pooled by its evidence (radii that tie share it)
    if spec.select_by == "elbo-sparse":
        return [Chain(sparse_fits(chosen, row.path.Z.shape[0]), chosen.path)
                for chosen, row in zip(selections, rows)]
    return [Chain(chosen.path_fits if spec.select_by == "elbo" and chosen.path_fits
                  else [(chosen.lam, fit) for fit in chosen.results], chosen.path)
            for chosen in selections]


def sparse_fits(chosen: radius_selection.Selection, n_rows: int) -> list:
    """``select_by="elbo-sparse"``: the path's fits ``[(lam, fit), ...]`` at radii up to the
    smallest polished radius (every radius of the path without polishing) whose best fit's
    ELBO is within ``CONTENDER_NATS`` of the best; ``n_rows``: the rows the path fitted."""
    scored = chosen.path.get("polished") or list(zip(chosen.path["lambdas"],
                                                      chosen.path["scores"]))
    tie = tie_radius(scored, n_rows)
    return [(lam, fit) for lam, fit in chosen.path_fits if lam <= tie]


def tie_radius(scored: list, n_rows: int) -> float:
    """The smallest radius of ``scored = [(lam, ELBO per row), ...]`` whose ELBO is within
    ``CONTENDER_NATS`` of the best (over ``n_rows`` rows): the near-tie rule's choice."""
    best = max(value for _, value in scored)
    return min(lam for lam, value in scored if n_rows * (best - value) <= CONTENDER_NATS)

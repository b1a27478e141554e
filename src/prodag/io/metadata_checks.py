"""Checks of a model file's JSON metadata that describe the fit's outcome: the λ path and the
chains' (and the SMC populations') diagnostics (``prodag.io.persistence.load`` calls them)."""

from __future__ import annotations

import math

from prodag.config.spec import FitSpec
from prodag.io.model_file import Checker


def lambda_path(path, spec: FitSpec, lam: float, check: Checker) -> dict | None:
    """The λ path of a fit with settings ``spec`` whose first component has radius ``lam``
    (None for a fixed radius), checked against the grid and criterion of ``spec``."""
    if spec.lam != "auto":
        check.that(path is None, "'lambda_path_' must be null for a fixed lam")
        return None
    from prodag.config.parameters import CRITERIA
    from prodag.inference.radius_selection import BELOW_GRID, BELOW_GRID_ROUNDS

    n_lambdas, select_by = spec.n_lambdas, spec.select_by

    check.that(isinstance(path, dict) and {"lambdas", "criterion", "scores", "lam_max"}
               <= set(path) <= {"lambdas", "criterion", "scores", "lam_max", "polished"},
               "'lambda_path_' must have the fields lambdas, criterion, scores, lam_max "
               "(and polished)")
    lambdas, scores = path["lambdas"], path["scores"]
    numbers = (int, float)
    most = n_lambdas + BELOW_GRID_ROUNDS * len(BELOW_GRID)  # with the radii below the grid
    check.that(isinstance(lambdas, list) and n_lambdas <= len(lambdas) <= most
               and all(isinstance(v, numbers) and 0 < v < math.inf for v in lambdas),
               f"'lambda_path_.lambdas' must be {n_lambdas} to {most} positive radii")
    check.that(isinstance(scores, list) and len(scores) == len(lambdas)
               and all(isinstance(v, numbers) for v in scores),
               "'lambda_path_.scores' must be one number per radius")
    check.that(path["criterion"] in CRITERIA and path["criterion"] == select_by,
               "'lambda_path_.criterion' does not match the parameter select_by")
    check.that(isinstance(path["lam_max"], numbers) and path["lam_max"] >= max(lambdas),
               "'lambda_path_.lam_max' must be the largest radius")
    check.that(lam in lambdas, f"'lam_' = {lam} is not one of the path's radii")
    polished = path.get("polished", [])
    check.that(isinstance(polished, list) and all(
        isinstance(pair, list) and len(pair) == 2 and pair[0] in lambdas
        and isinstance(pair[1], numbers) for pair in polished),
        "'lambda_path_.polished' must be [radius, score] pairs of the path's radii")
    return path


def diagnostics(found, columns: list[str], check: Checker,
                 extra=("populations", "sortability", "chain_weights", "refinement")):
    """The chains' diagnostics (``prodag.posterior.chains.diagnose``; the SMC's populations' in
    ``"populations"``, with ``"ess"`` and ``"temperatures"``; the refinement's report in
    ``"refinement"``, ``prodag.fit.draws.refinement_report``) or None, checked."""
    if found is None:
        return None
    fields = {"n_chains", "max_difference", "mean_difference", "threshold",
              "disagreeing_edges", "chain_elbos"}
    check.that(isinstance(found, dict) and fields <= set(found) <= fields | {*extra},
               f"'diagnostics_' must be an object with the fields {sorted(fields)} "
               f"(and optionally {list(extra)})")
    if "populations" in found:
        diagnostics(found["populations"], columns, check,
                     ("ess", "temperatures", "chain_weights"))
    report = found.get("sortability", {})
    check.that(isinstance(report, dict) and all(
        value is None or isinstance(value, (int, float)) for value in report.values()),
        "'diagnostics_.sortability' must map names to numbers or null")
    refined = found.get("refinement", {"steps": 1})
    check.that(isinstance(refined, dict) and isinstance(refined.get("steps"), int)
               and refined["steps"] >= 1,
               "'diagnostics_.refinement' must be an object with its steps (>= 1)")
    n_chains = found["n_chains"]
    check.that(isinstance(n_chains, int) and n_chains >= 1
               and isinstance(found["chain_elbos"], list)
               and len(found["chain_elbos"]) == n_chains,
               "'diagnostics_' must give one ELBO per chain")
    shares = found.get("chain_weights", [0.0] * n_chains)
    check.that(isinstance(shares, list) and len(shares) == n_chains,
               "'diagnostics_.chain_weights' must give one share per chain")
    check.that(isinstance(found["disagreeing_edges"], list) and all(
        isinstance(edge, dict) and edge.get("source") in columns
        and edge.get("target") in columns
        and len(edge.get("probabilities", [])) == n_chains
        for edge in found["disagreeing_edges"]),
        "'diagnostics_.disagreeing_edges' must name columns and give one probability per "
        "chain")
    return found

"""``prodag fit``: learn a posterior over DAGs from a CSV table and write its files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from prodag.cli import options as o
from prodag.cli.errors import friendly_errors
from prodag.cli.files import (log_transform, parse_sep, read_table, split_conditions,
                              split_interventions)
from prodag.cli.folders import check_out, results_folder
from prodag.cli.results import (RESULT_FILES, check_settings, echo_done, fit_posterior,
                                lam_used, planned_drawing, stage_seconds, write_json,
                                write_results)
from prodag.cli.tables import UnitsOption, echo_chains, print_edges, ranked_edges
from prodag.inputs.interventions import intervention_mask
from prodag.inputs.units import check_units, column_sd
from prodag.resources import check_draws

FitUnitsOption = Annotated[UnitsOption.__origin__, typer.Option(
    show_default=UnitsOption.__metadata__[0].show_default,
    help=UnitsOption.__metadata__[0].help, rich_help_panel=o.OUTPUT)]
"""``--units`` in the fit's Output panel."""


FIT_FILES = [*RESULT_FILES.values(), "summary.json"]
"""The files of a ``prodag fit`` results folder."""


@friendly_errors
def fit(
    data: Annotated[Path, typer.Argument(
        metavar="DATA", help="CSV file: a header row of variable names, then one row per observation. A "
             "first column holding a saved row index is dropped with a warning.")],
    out: o.OutOption = Path("prodag-results"),
    sep: Annotated[str, typer.Option(
        rich_help_panel=o.DATA,
        help="Column separator of the CSV file ('tab' for tabs).")] = ",",
    decimal: Annotated[str, typer.Option(
        rich_help_panel=o.DATA,
        help="Decimal mark of the numbers (',' for 3,14; then --sep is usually ';').")] = ".",
    thousands: Annotated[Optional[str], typer.Option(
        rich_help_panel=o.DATA,
        help="Thousands separator inside numbers (',' for \"53,456\"; in a comma-separated "
             "file such numbers must be quoted).")] = None,
    encoding: Annotated[str, typer.Option(
        rich_help_panel=o.DATA,
        help="Text encoding of the file (e.g. latin-1 or cp1252 for files saved by "
             "spreadsheet programs).")] = "utf-8",
    header: Annotated[bool, typer.Option(
        "--header/--no-header", rich_help_panel=o.DATA,
        help="--no-header: the file has no header row; the columns are named X0, X1, "
             "...")] = True,
    sem: o.SemOption = o.Sem(o.API["sem"]),
    lam: o.LamOption = o.lam_text(o.API["lam"]),
    select_by: o.SelectByOption = o.SelectBy(o.API["select_by"]),
    restarts: o.RestartsOption = o.API["n_restarts"],
    chains: o.ChainsOption = o.API["n_chains"],
    bootstrap: o.BootstrapOption = o.API["bootstrap"],
    refine_steps: o.RefineStepsOption = o.API["refine_steps"],
    sampler: o.SamplerOption = o.Sampler(o.API["sampler"]),
    candidate_parents: o.CandidateParentsOption = str(o.API["candidate_parents"]),
    hidden_units: o.HiddenUnitsOption = o.API["hidden_units"],
    bias: o.BiasOption = o.API["bias"],
    n_samples: o.NSamplesOption = o.API["n_samples"],
    max_epochs: o.MaxEpochsOption = o.API["max_epochs"],
    seed: o.FitSeedOption = o.API["seed"],
    projection: o.ProjectionOption = o.Projection(o.API["projection"]),
    standardize: o.StandardizeOption = o.API["standardize"],
    units: FitUnitsOption = None,
    prune: o.PruneOption = o.API["prune"],
    noise_variance: o.NoiseVarianceOption = o.noise_variance_text(o.API["noise_variance"]),
    likelihood: o.LikelihoodOption = o.Likelihood(o.API["likelihood"]),
    interventions: o.InterventionsOption = None,
    intervention_kind: o.InterventionKindOption = o.InterventionKind(o.API["intervention_kind"]),
    conditions: o.ConditionsOption = None,
    forbid: o.ForbidOption = None,
    require: o.RequireOption = None,
    tiers: o.TiersOption = None,
    forbid_within_tiers: o.WithinTiersOption = o.API["forbid_within_tiers"],
    log_transform_data: Annotated[bool, typer.Option(
        "--log-transform", rich_help_panel=o.DATA,
        help="Take the natural log of every value first (for positive data spanning orders "
             "of magnitude, e.g. flow cytometry).")] = False,
    threshold: o.ThresholdOption = 0.5,
    n_draws: o.NDrawsOption = o.N_DRAWS,
    top: o.TopOption = 20,
    progress: o.ProgressOption = o.API["progress"],
):
    """Learn a posterior over DAGs from a CSV table and write it to --out.

    Every setting shared with the Python API defaults to the API's value (ProDAG(...)):
    in particular the data are not standardised unless --standardize is given.

    Writes into --out: edge_probabilities.csv (row = parent, column = child), samples.npz
    (arrays 'samples' of shape (n_draws, p, p), weighted DAGs with entry j, k the edge
    j -> k, and 'variables'; where those graphs would take over 256 MiB, e.g. 1000 draws
    from 184 variables on, their nonzero entries instead: 'draw', 'parent', 'child' and
    'weight', in draw order, with 'shape' and 'variables'), posterior.npz (reload with
    prodag.ProDAG.load), heatmap.png, graph.png, disagreeing_edges.csv (edges the independent
    chains disagree on, with each chain's probability) and summary.json; then prints the most
    probable edges (weights in standardised units after --standardize) and the l1 radius used.
    """
    check_out(out, FIT_FILES)
    shown_units = units.value if units else ("standardized" if standardize else "data")
    check_units(shown_units, standardize or None, "--units")  # sd known iff standardised
    radius = o.parse_lam(lam)
    noise = o.parse_noise_variance(noise_variance)
    frame = read_table(data, sep=parse_sep(sep), header=header, decimal=decimal,
                       thousands=thousands, encoding=encoding)
    frame, targets = split_interventions(frame, interventions, sep=parse_sep(sep))
    frame, labels = split_conditions(frame, conditions)
    if log_transform_data:
        frame = log_transform(frame)
    variables = [str(name) for name in frame.columns]
    settings = {"sem": sem.value, "lam": radius, "select_by": select_by.value,
                "n_restarts": restarts, "n_chains": chains, "bootstrap": bootstrap,
                "refine_steps": refine_steps, "sampler": sampler.value,
                "candidate_parents": o.parse_candidate_parents(candidate_parents),
                "hidden_units": hidden_units, "bias": bias,
                "n_samples": n_samples, "max_epochs": max_epochs, "seed": seed,
                "projection": projection.value, "standardize": standardize, "prune": prune,
                "noise_variance": noise, "likelihood": likelihood.value, "forbidden": forbid,
                "required": require, "tiers": tiers,
                "forbid_within_tiers": forbid_within_tiers,
                "intervention_kind": intervention_kind.value, "progress": progress}
    check_settings(frame, interventions=targets, conditions=labels, **settings)
    check_draws(n_draws, len(variables), **planned_drawing(settings, len(variables)))
    model = {"mlp": "an MLP", "additive": "an additive"}.get(sem.value, "a linear")
    typer.echo(f"Fitting {model} ProDAG posterior to {data} ({len(frame)} rows, "
               f"{len(variables)} variables)...")
    estimator, seconds = fit_posterior(frame, interventions=targets, conditions=labels,
                                       **settings)
    with results_folder(out, FIT_FILES) as folder:
        results = write_results(estimator, variables, folder, threshold=threshold,
                                n_draws=n_draws)
        write_summary(folder, estimator, results, data=data, frame=frame, variables=variables,
                      targets=targets, settings=settings, options={
                          "interventions": interventions, "conditions": conditions, "lam": lam,
                          "log_transform": log_transform_data, "threshold": threshold,
                          "n_draws": n_draws, "units": shown_units}, seconds=seconds)
    print_edges(results["ranked"], threshold, top, units=shown_units)
    echo_chains(estimator.diagnostics_, bagged=estimator.bootstrap)
    echo_done(seconds, estimator, out, FIT_FILES)


def write_summary(folder: Path, estimator, results: dict, *, data: Path, frame, variables,
                  targets, settings: dict, options: dict, seconds: float) -> None:
    """Write ``summary.json`` (the data, the settings, the radius used and the edges at the
    threshold) into ``folder``; add the ranked edge table to ``results``."""
    threshold = options["threshold"]
    knowledge = estimator.knowledge_
    sd = column_sd(estimator.scale_, estimator.spec_.standardize)
    ranked = ranked_edges(results["probabilities"], variables, results["entries"],
                          required=None if knowledge is None else knowledge.required_mask(),
                          sd=sd if options["units"] != "data" else None)
    summary = {
        "data": str(data), "n": len(frame), "p": len(variables), "variables": variables,
        "interventional_rows": 0 if targets is None else int(
            intervention_mask(targets, variables, len(frame)).any(axis=1).sum()),
        "conditions": estimator.conditions_,
        "options": {**settings, **options, "n_restarts": estimator.n_restarts_,
                    "refine_steps": estimator.spec_.refine_steps, "seed": estimator.seed_},
        "knowledge": None if knowledge is None else knowledge.as_names(variables),
        "lam_used": lam_used(estimator),
        "mixture_weights": estimator.mixture_weights_.tolist(), "fit_seconds": round(seconds, 2),
        "stage_seconds": stage_seconds(estimator), "chains": estimator.diagnostics_,
        "sortability": estimator.diagnostics_.get("sortability"),
        "refinement": estimator.diagnostics_.get("refinement"),
        "expected_edges": float(results["probabilities"].sum()),
        "edges": ranked[ranked["probability"] >= threshold].to_dict(orient="records"),
        "files": RESULT_FILES,
    }
    results["ranked"] = ranked
    write_json(folder / "summary.json", summary)

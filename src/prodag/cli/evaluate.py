"""``prodag evaluate``: score a posterior against a known graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from prodag.cli import options as o
from prodag.cli.errors import friendly_errors
from prodag.cli.files import npz_names, read_graph, require_file
from prodag.cli.results import RESULT_FILES, write_json
from prodag.cli.tables import posterior_metrics, print_metrics_table
from prodag.inputs.validation import DataError
from prodag.io.samples_file import holds_samples, read_entries, read_variables


@friendly_errors
def evaluate(
    posterior: Annotated[Path, typer.Argument(
        metavar="POSTERIOR", help="A results folder of 'prodag fit', its samples.npz, or its posterior.npz.")],
    truth: Annotated[Path, typer.Option(
        help="True graph CSV: an edge list with columns source,target, or a p × p adjacency "
             "matrix with variable names as header and first column.")],
    n_draws: Annotated[int, typer.Option(
        min=1, help="Graphs drawn from a posterior.npz (a folder or samples.npz is scored "
                    "as written).")] = o.N_DRAWS,
    seed: Annotated[Optional[int], typer.Option(
        min=0, show_default="the fit's own sampling key",
        help="Seed for drawing from a posterior.npz. By default its draws are those of "
             "samples.npz, so a results folder and its posterior.npz score the same.")] = None,
    json_out: Annotated[Optional[Path], typer.Option(
        "--json", help="Also write the metrics to this JSON file.")] = None,
):
    """Score a posterior against a known graph with the paper's four metrics.

    Brier score, expected SHD, expected F1 (%) and AUROC (%); lower Brier/E-SHD and higher
    E-F1/AUROC are better.
    """
    blocks, n_graphs, variables = posterior_blocks(posterior, n_draws=n_draws, seed=seed)
    scores = posterior_metrics(blocks, read_graph(truth, variables))
    typer.echo(f"{n_graphs} posterior graphs over {len(variables)} variables vs {truth}:\n")
    print_metrics_table({"posterior": scores})
    if json_out is not None:
        write_json(json_out, {"posterior": str(posterior), "truth": str(truth),
                              "n_graphs": n_graphs, **scores})


def posterior_blocks(path: Path, *, n_draws: int, seed: int | None):
    """``(blocks, their number of graphs, variable names)``: the posterior graphs as blocks
    ``(b, p, p)`` of a results folder (its samples.npz), a samples.npz file of either layout
    (``prodag.io.samples_file``), or a saved posterior: ``sample_batches(n_draws, seed)`` of
    ``ProDAG.load``, whose default key (``seed=None``) is the one ``fit`` drew samples.npz
    with."""
    if path.is_dir():
        if not (path / RESULT_FILES["samples"]).is_file():
            raise DataError(f"{path} is a directory without {RESULT_FILES['samples']}: give a "
                            "results folder of 'prodag fit', a samples.npz or a posterior.npz.")
        path = path / RESULT_FILES["samples"]
    require_file(path)
    if holds_samples(npz_names(path)):
        entries = read_entries(path)
        return entries.blocks(), entries.shape[0], read_variables(path)
    from prodag import ProDAG
    from prodag.inference.draws import PROJECT_BATCH
    from prodag.resources import check_draws

    estimator = ProDAG.load(path)
    check_draws(n_draws, estimator.n_features_in_,
                screened=estimator.candidate_parents_ is not None,
                block=None if estimator.refined_ is None else PROJECT_BATCH)
    return (estimator.sample_batches(n_draws, seed=seed), n_draws,
            [str(v) for v in estimator.columns_])

"""Tables printed on the terminal: ranked edges and posterior metrics."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import numpy as np
import pandas as pd
import typer

from prodag.evaluation.metrics import METRICS
from prodag.inputs.units import UNITS


Units = Enum("Units", [(value, value) for value in UNITS], type=str)
UnitsOption = Annotated[Optional[Units], typer.Option(
    show_default="standardized for a fit with --standardize, else data",
    help="Units of the printed weights and effects: 'standardized' (standard deviations of "
         "the target per standard deviation of the source, the same whatever each column's "
         "unit; needs a fit with --standardize) or 'data' (each column's own units).")]
"""``--units`` of ``prodag fit`` and ``prodag effects`` (``prodag.inputs.units``)."""
FALLBACK_EDGES = 10
"""How many edges ``print_edges`` lists when none reaches the probability threshold."""


def ranked_edges(probs: np.ndarray, variables: list[str], entries,
                 truth: np.ndarray | None = None,
                 required: np.ndarray | None = None, sd=None) -> pd.DataFrame:
    """Every edge of some sample, most probable first, with the mean weight of the samples
    that contain it (``entries``: the samples' nonzero ``prodag.io.samples_file.Entries``): in
    data units, or given the columns' standard deviations ``sd (p,)`` in standardised units
    (``prodag.inputs.units``). Given ``truth``, whether it is a true edge; given ``required
    (p, p)``, whether the user required it."""
    sd = None if sd is None else np.asarray(sd, dtype=float)
    rows = []
    for (j, k), weights in entries.edge_weights():
        if sd is not None:  # each weight as standardized() gives it, in float64
            weights = np.asarray(weights, dtype=float) * sd[j] / sd[k]
        row = {"source": variables[j], "target": variables[k],
               "probability": float(probs[j, k]), "mean_weight": float(weights.mean())}
        if truth is not None:
            row["true_edge"] = bool(truth[j, k])
        if required is not None:
            row["required"] = bool(required[j, k])
        rows.append(row)
    columns = (["source", "target", "probability", "mean_weight"]
               + (["true_edge"] if truth is not None else [])
               + (["required"] if required is not None else []))
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values("probability", ascending=False, kind="stable").reset_index(drop=True)


def print_edges(table: pd.DataFrame, threshold: float, top: int,
                truth_name: str = "true graph", units: str = "data") -> None:
    """Print the ``top`` most probable edges of ``table`` (``ranked_edges``) that reach
    ``threshold``; if none does, the ``min(top, FALLBACK_EDGES)`` most probable instead, so a
    diffuse posterior still shows where its mass lies. ``truth_name`` names the graph of the
    ``true_edge`` column (e.g. which consensus graph); ``units`` those of its weights."""
    above = table[table["probability"] >= threshold]
    if above.empty:
        shown = table.head(min(top, FALLBACK_EDGES))
        typer.echo(f"\nNo edge has posterior probability >= {threshold:g}"
                   + (f"; the {len(shown)} most probable:" if len(shown) else
                      "; no sampled graph has any edge."))
    else:
        shown = above.head(top)
        typer.echo(f"\n{len(above)} edge(s) with posterior probability >= {threshold:g}"
                   + (f" (top {top} shown)" if len(above) > top else "") + ":")
    if shown.empty:
        return
    truth = "true_edge" in table
    typer.echo(f"  {'rank':>4}  {'edge':<28} {'P(edge)':>8} {'mean weight':>12}"
               + (f"  in {truth_name}" if truth else ""))
    if units == "standardized":
        typer.echo("  (weights in standardised units: standard deviations of the target per "
                   "standard deviation of the source)")
    for rank, row in enumerate(shown.to_dict(orient="records"), start=1):
        edge = f"{row['source']} -> {row['target']}"
        typer.echo(f"  {rank:>4}  {edge:<28} {row['probability']:>8.3f} "
                   f"{row['mean_weight']:>12.3f}"
                   + (f"  {'yes' if row['true_edge'] else 'no'}" if truth else "")
                   + ("  (required)" if row.get("required") else ""))


def posterior_metrics(blocks, truth: np.ndarray) -> dict[str, float]:
    """Brier score, expected SHD, expected F1 and AUROC vs ``truth`` of posterior samples given
    as blocks ``(b, p, p)``, scored a block at a time (``metrics.evaluate_batches``)."""
    from prodag.evaluation import metrics

    return {name: float(value)
            for name, value in metrics.evaluate_batches(truth, blocks).items()}


def format_metric(name: str, value: float) -> str:
    return f"{value:.1f}" if name in ("ef1", "auroc") else f"{value:.2f}"


def print_metrics_table(rows: dict[str, dict[str, float]]) -> None:
    """Print one line per labelled metric dict, one column per metric of ``METRICS``."""
    width = max(len(label) for label in rows) + 2
    typer.echo(" " * width + "".join(f"{title:>12}" for title in METRICS.values()))
    for label, values in rows.items():
        typer.echo(f"{label:<{width}}" + "".join(
            f"{format_metric(name, values[name]):>12}" for name in METRICS))


def echo_chains(diagnostics: dict | None, bagged: bool = False) -> None:
    """One line on the chains' agreement (``prodag.posterior.chains.diagnose``). Where they disagree
    the fit's warning has said how and what helps (once): this line says where the edges are
    marked. ``bagged`` chains fit different resamples and differ by design."""
    if diagnostics is None or diagnostics["n_chains"] < 2:
        return
    chains = f"\n{diagnostics['n_chains']} independent chains"
    largest = f"largest difference in an edge probability {diagnostics['max_difference']:.2f}"
    if bagged:
        typer.echo(f"{chains}, each on its own resample of the rows, differ by design; "
                   f"{largest}.")
    elif diagnostics["disagreeing_edges"]:
        typer.echo(f"{chains}: the edges they disagree on (see the warning) are in "
                   "disagreeing_edges.csv with each chain's probability, hatched in "
                   "heatmap.png and dashed in graph.png.")
    else:
        typer.echo(f"{chains} agree; {largest}.")

"""Tables printed on the terminal: ranked edges and posterior metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import typer

from prodag.metrics import METRICS

FALLBACK_EDGES = 10
"""How many edges ``print_edges`` lists when none reaches the probability threshold."""


def ranked_edges(probs: np.ndarray, variables: list[str], samples: np.ndarray,
                 truth: np.ndarray | None = None,
                 required: np.ndarray | None = None) -> pd.DataFrame:
    """Every edge of some sample, most probable first, with the mean weight of the samples
    that contain it (and, given ``truth``, whether it is a true edge; given ``required
    (p, p)``, whether the user required it)."""
    present = samples != 0
    rows = []
    for j, k in zip(*np.nonzero(probs > 0)):
        weights = samples[:, j, k][present[:, j, k]]
        row = {"source": variables[j], "target": variables[k],
               "probability": float(probs[j, k]),
               "mean_weight": float(weights.mean()) if weights.size else 0.0}
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
                truth_name: str = "true graph") -> None:
    """Print the ``top`` most probable edges of ``table`` (``ranked_edges``) that reach
    ``threshold``; if none does, the ``min(top, FALLBACK_EDGES)`` most probable instead, so a
    diffuse posterior still shows where its mass lies. ``truth_name`` names the graph of the
    ``true_edge`` column (e.g. which consensus graph)."""
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
    for rank, row in enumerate(shown.to_dict(orient="records"), start=1):
        edge = f"{row['source']} -> {row['target']}"
        typer.echo(f"  {rank:>4}  {edge:<28} {row['probability']:>8.3f} "
                   f"{row['mean_weight']:>12.3f}"
                   + (f"  {'yes' if row['true_edge'] else 'no'}" if truth else "")
                   + ("  (required)" if row.get("required") else ""))


def posterior_metrics(samples: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Brier score, expected SHD, expected F1 and AUROC of posterior ``samples`` vs ``truth``."""
    from prodag import metrics

    return {name: float(value) for name, value in metrics.evaluate(truth, samples).items()}


def format_metric(name: str, value: float) -> str:
    return f"{value:.1f}" if name in ("ef1", "auroc") else f"{value:.2f}"


def print_metrics_table(rows: dict[str, dict[str, float]]) -> None:
    """Print one line per labelled metric dict, one column per metric of ``METRICS``."""
    width = max(len(label) for label in rows) + 2
    typer.echo(" " * width + "".join(f"{title:>12}" for title in METRICS.values()))
    for label, values in rows.items():
        typer.echo(f"{label:<{width}}" + "".join(
            f"{format_metric(name, values[name]):>12}" for name in METRICS))


def echo_chains(diagnostics: dict | None, file: str = "summary.json") -> None:
    """One line on the chains' agreement (``prodag.chains.diagnose``); the edges they
    disagree on were named in the fit's warning and are listed in ``file``."""
    if diagnostics is None or diagnostics["n_chains"] < 2:
        return
    flagged = len(diagnostics["disagreeing_edges"])
    verdict = ("agree" if flagged == 0 else
               f"disagree by more than {diagnostics['threshold']:g} on {flagged} edge(s) "
               f"(listed in {file} under 'chains')")
    typer.echo(f"\n{diagnostics['n_chains']} independent chains {verdict}; largest difference "
               f"in an edge probability {diagnostics['max_difference']:.2f}.")

"""Figures of a learned posterior over DAGs and of benchmark results.

Every function draws with matplotlib's object API (``matplotlib.figure.Figure``, rendered by
the Agg canvas), so nothing here touches pyplot's global state or needs a display. Each
function returns the :class:`~matplotlib.figure.Figure` it drew on; pass ``ax=`` to draw into
an existing axes instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from prodag.evaluation.metrics import METRICS
from prodag.graph import adjacency_from_edges

METRIC_LABELS = METRICS
"""Axis titles of the four posterior metrics, keyed by their names in benchmark results: the
table ``prodag.evaluation.metrics.METRICS`` (this name is kept for existing callers)."""


def plot_edge_probabilities(probs, variables: Sequence[str] | None = None, ax: Axes | None = None,
                            true_graph=None, annotate: bool | None = None,
                            title: str | None = "Posterior edge probabilities",
                            truth_name: str = "true edges", disagreeing=None) -> Figure:
    """Heatmap of posterior edge probabilities; cell ``[j, k]`` is the edge ``j → k``.

    Args:
        probs: ``(p, p)`` probabilities in ``[0, 1]`` (array or DataFrame; a DataFrame's index
            gives the variable names when ``variables`` is not given).
        variables: ``p`` names for the rows (sources) and columns (targets).
        ax: axes to draw into; a new figure is made when ``None``.
        true_graph: optional ``(p, p)`` adjacency (nonzero = edge) or ``networkx.DiGraph`` over
            ``variables``; its edges are outlined in black.
        annotate: write each probability in its cell; by default only when ``p ≤ 25``.
        title: axes title (``None`` for none).
        truth_name: what the boxes mark, named in the title (e.g. which consensus graph).
        disagreeing: edges the fit's chains disagree on (``(p, p)`` mask or ``(source,
            target)`` pairs, as ``true_graph``); their cells are hatched.

    Returns:
        The figure drawn on. Cells shrink so that the figure stays within about 12 inches,
        and beyond ``LABELLED_UP_TO`` variables only every k-th label is written, so labels
        stay legible at any ``p``.
    """
    probs, variables = _probabilities_and_names(probs, variables)
    p = probs.shape[0]
    cell = _cell_inches(p)
    fig, ax = _figure_and_axes(ax, figsize=(1.6 + cell * max(p, 6), 1.0 + 0.9 * cell * max(p, 6)))
    image = ax.imshow(probs, cmap="Blues", vmin=0.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="P(edge)")
    every = max(1, -(-p // LABELLED_UP_TO))
    ticks = list(range(0, p, every))
    names = [variables[j] for j in ticks]
    ax.set_xticks(ticks, names, rotation=90 if p > 12 else 45,
                  ha="center" if p > 12 else "right", fontsize=_tick_size(p))
    ax.set_yticks(ticks, names, fontsize=_tick_size(p))
    ax.set_xlabel("target (child)")
    ax.set_ylabel("source (parent)")
    if annotate if annotate is not None else p <= 25:
        for (j, k), value in np.ndenumerate(probs):
            if j != k:
                ax.text(k, j, _cell_text(value),
                        ha="center", va="center", fontsize=_tick_size(p) - 1,
                        color="white" if value > 0.6 else "black")
    if true_graph is not None:
        truth = adjacency_matrix(true_graph, variables)
        for j, k in zip(*np.nonzero(truth)):
            ax.add_patch(Rectangle((k - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="black",
                                   linewidth=1.8))
        if title:
            title = f"{title}\n(boxed: {truth_name})"
    marked = _marked(disagreeing, variables)
    for j, k in zip(*np.nonzero(marked)):
        ax.add_patch(Rectangle((k - 0.5, j - 0.5), 1, 1, fill=False, hatch="///",
                               edgecolor="#d95f02", linewidth=0.8))
    if title and marked.any():
        title = f"{title}\n(hatched: the chains disagree)"
    if title:
        ax.set_title(title)
    return fig


def _marked(edges, variables: Sequence[str]) -> np.ndarray:
    """``(p, p)`` bool of ``edges`` (``None``, a mask or pairs; ``adjacency_matrix``)."""
    p = len(variables)
    if edges is None or (not isinstance(edges, np.ndarray) and len(edges) == 0):
        return np.zeros((p, p), bool)
    return adjacency_matrix(edges, variables) != 0


def plot_graph(graph, threshold: float = 0.5, variables: Sequence[str] | None = None,
               ax: Axes | None = None, layout: str = "circular", edge_labels: bool = True,
               title: str | None = None, disagreeing=None) -> Figure:
    """Draw the edges whose posterior probability is at least ``threshold``.

    Edge width and opacity grow with the probability; with ``edge_labels`` each edge carries
    its probability. Beyond ``LABELLED_EDGES`` edges the picture stays readable: edges are
    thinner and coloured by their source (follow a colour out of a node), the probabilities
    are left to ``edge_probabilities.csv`` (the title says so), and the figure grows with p.

    Args:
        graph: ``(p, p)`` edge probabilities (array or DataFrame), or a ``networkx.DiGraph``
            whose edges carry a ``probability`` attribute (as ``ProDAG.to_networkx`` gives;
            edges without one count as probability 1).
        threshold: smallest probability drawn, in ``[0, 1]``.
        variables: node names when ``graph`` is an array.
        ax: axes to draw into; a new figure is made when ``None``.
        layout: ``"circular"``, ``"spring"`` or ``"layered"`` (topological layers; falls back to
            circular when the drawn graph has a cycle).
        edge_labels: write the probability on each edge (up to ``LABELLED_EDGES`` edges).
        title: axes title; by default it states the threshold and the number of edges.
        disagreeing: edges the fit's chains disagree on (``(source, target)`` pairs or a
            ``(p, p)`` mask over ``variables``); drawn dashed.

    Returns:
        The figure drawn on.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    digraph = _thresholded_digraph(graph, threshold, variables)
    side = min(12.0, 6.0 + 0.3 * max(0, digraph.number_of_nodes() - 10))
    fig, ax = _figure_and_axes(ax, figsize=(side + 1.0, side))
    positions = _layout(digraph, layout)
    probabilities = [digraph.edges[e]["probability"] for e in digraph.edges]
    dense = digraph.number_of_edges() > LABELLED_EDGES
    from matplotlib import colormaps

    palette = colormaps["tab20"]
    # the ten strong colours first, then their light partners: neighbours differ in hue
    source_colour = {node: palette((2 * j) % 20 + (j // 10) % 2)
                     for j, node in enumerate(digraph.nodes)}
    nx.draw_networkx_nodes(digraph, positions, ax=ax, node_color="#dbe9f6",
                           edgecolors="#2b5d8a", node_size=900)
    nx.draw_networkx_labels(digraph, positions, ax=ax, font_size=9)
    names = list(digraph.nodes)
    marked = _marked(disagreeing, names)
    for edge, probability in zip(digraph.edges, probabilities):
        dashed = marked[names.index(edge[0]), names.index(edge[1])]
        nx.draw_networkx_edges(digraph, positions, edgelist=[edge], ax=ax, node_size=900,
                               width=(0.3 + 1.7 * probability) if dense
                               else (0.5 + 3.5 * probability),
                               alpha=0.25 + 0.75 * probability,
                               edge_color="#d95f02" if dashed else (
                                   [source_colour[edge[0]]] if dense else "#1f3b57"),
                               style="dashed" if dashed else "solid",
                               arrowsize=11 if dense else 14, connectionstyle="arc3,rad=0.08")
    if edge_labels and digraph.number_of_edges() and not dense:
        nx.draw_networkx_edge_labels(
            digraph, positions, ax=ax, font_size=7, label_pos=0.4,
            connectionstyle="arc3,rad=0.08",
            edge_labels={e: f"{pr:.2f}" for e, pr in zip(digraph.edges, probabilities)})
    ax.set_axis_off()
    ax.set_title(title if title is not None else
                 f"Edges with P(edge) ≥ {threshold:g}  ({digraph.number_of_edges()} edges"
                 + (", coloured by their source)\nprobabilities: edge_probabilities.csv"
                    if dense else ")")
                 + ("\ndashed: the chains disagree" if marked.any() else ""))
    return fig


LABELLED_EDGES = 20
"""``plot_graph`` writes each edge's probability up to this many edges; beyond, it colours
the edges by their source instead."""


def plot_benchmark(results, metrics: Sequence[str] = tuple(METRICS), x: str = "n",
                   title: str | None = None) -> Figure:
    """Each metric against sample size: mean ± standard error over seeds, one line per method.

    Args:
        results: a DataFrame (or list of dicts) with one row per fit and the columns
            ``method``, ``x`` (default ``"n"``) and each of ``metrics``.
        metrics: metric columns, one panel each (``brier``, ``eshd``, ``ef1``,
            ``auroc`` get the paper's titles; F1 and AUROC are in percent, as
            :mod:`prodag.evaluation.metrics` gives them).
        x: the column on the horizontal axis (log scale when it spans a factor ≥ 10).
        title: figure title.

    Returns:
        The figure, one panel per metric, side by side.
    """
    frame = pd.DataFrame(results)
    missing = {"method", x, *metrics} - set(frame.columns)
    if missing:
        raise ValueError(f"benchmark results lack the column(s) {sorted(missing)}; "
                         f"they have {sorted(frame.columns)}")
    fig = Figure(figsize=(3.4 * len(metrics), 3.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, metric in zip(axes, metrics):
        summary = summarize(frame, metric, by=("method", x))
        for method, rows in summary.groupby("method", sort=False):
            ax.errorbar(rows[x], rows["mean"], yerr=rows["se"].fillna(0.0),
                        marker="o", markersize=4, capsize=3, linewidth=1.2, label=method)
        values = frame[x].astype(float)
        if values.min() > 0 and values.max() / values.min() >= 10:
            ax.set_xscale("log")
        ax.set_xlabel(x)
        ax.set_title(METRICS.get(metric, metric))
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=max(len(labels), 1),
               frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def plot_reliability(true_adjacency, edge_probabilities, n_bins: int = 10,
                     ax: Axes | None = None, label: str | None = None) -> Figure:
    """Reliability diagram of edge probabilities ``(p, p)`` against a true graph: the share of
    true edges against the mean predicted probability per bin
    (``prodag.evaluation.metrics.reliability``), marker area ∝ the entries in the bin, beside
    the diagonal of perfect calibration; the expected calibration error is in the legend."""
    from prodag.evaluation.metrics import calibration_error, reliability

    table = reliability(true_adjacency, edge_probabilities, n_bins)
    ece = calibration_error(true_adjacency, edge_probabilities, n_bins)
    fig, ax = _figure_and_axes(ax, (3.6, 3.6))
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1)
    filled = table["count"] > 0
    sizes = 20 + 200 * table["count"][filled] / table["count"].max()
    ax.plot(table["mean_probability"][filled], table["frequency"][filled], color="C0",
            linewidth=1)
    ax.scatter(table["mean_probability"][filled], table["frequency"][filled], s=sizes,
               color="C0", label=f"{label + ': ' if label else ''}ECE {ece:.3f}", zorder=3)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel("posterior edge probability")
    ax.set_ylabel("share of true edges")
    ax.legend(loc="upper left", frameon=False)
    return fig


def summarize(results, metric: str, by: Sequence[str] = ("method",)) -> pd.DataFrame:
    """Mean, standard error (std / √count) and count of ``metric`` within each group ``by``."""
    frame = pd.DataFrame(results)
    grouped = frame.groupby(list(by), sort=False)[metric]
    summary = grouped.agg(["mean", "std", "count"]).reset_index()
    summary["se"] = summary["std"] / np.sqrt(summary["count"])
    return summary.drop(columns="std")


def _figure_and_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _probabilities_and_names(probs, variables) -> tuple[np.ndarray, list[str]]:
    if isinstance(probs, pd.DataFrame) and variables is None:
        variables = [str(v) for v in probs.index]
    array = np.asarray(probs, dtype=float)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"edge probabilities must be a square (p, p) matrix, got shape "
                         f"{array.shape}")
    if np.any(~np.isfinite(array)) or array.min() < 0 or array.max() > 1:
        raise ValueError("edge probabilities must be finite and within [0, 1]")
    p = array.shape[0]
    names = [str(v) for v in variables] if variables is not None else [f"X{j}" for j in range(p)]
    if len(names) != p:
        raise ValueError(f"got {len(names)} variable names for a {p}x{p} matrix")
    return array, names


def adjacency_matrix(graph, variables: Sequence[str]) -> np.ndarray:
    """``(p, p)`` float 0/1 adjacency over ``variables`` of a ``(p, p)`` array (nonzero entries
    are edges) or of anything ``prodag.graph.adjacency_from_edges`` reads (a DiGraph, a
    ``source,target`` table, pairs)."""
    if not isinstance(graph, np.ndarray) and not _is_nested_numbers(graph):
        return adjacency_from_edges(graph, variables).astype(float)
    adjacency = np.asarray(graph, dtype=float)
    if adjacency.shape != (len(variables), len(variables)):
        raise ValueError(f"true graph has shape {adjacency.shape}, expected "
                         f"{(len(variables), len(variables))}")
    return (adjacency != 0).astype(float)


def _is_nested_numbers(graph) -> bool:
    """Whether ``graph`` is a matrix given as nested lists of numbers (not edge pairs)."""
    try:
        return np.asarray(graph).dtype.kind in "biuf"
    except (TypeError, ValueError):
        return False


def _thresholded_digraph(graph, threshold: float, variables) -> nx.DiGraph:
    if isinstance(graph, nx.DiGraph):
        kept = nx.DiGraph()
        kept.add_nodes_from(graph.nodes)
        kept.add_edges_from((s, t, {"probability": float(d.get("probability", 1.0))})
                            for s, t, d in graph.edges(data=True)
                            if d.get("probability", 1.0) >= threshold)
        return kept
    probs, names = _probabilities_and_names(graph, variables)
    kept = nx.DiGraph()
    kept.add_nodes_from(names)
    for j, k in zip(*np.nonzero((probs >= threshold) & ~np.eye(len(names), dtype=bool))):
        kept.add_edge(names[j], names[k], probability=float(probs[j, k]))
    return kept


def _layout(digraph: nx.DiGraph, layout: str) -> Mapping:
    if layout == "circular":
        return nx.circular_layout(digraph)
    if layout == "spring":
        return nx.spring_layout(digraph, seed=0)
    if layout == "layered":
        if not nx.is_directed_acyclic_graph(digraph):
            return nx.circular_layout(digraph)
        for depth, nodes in enumerate(nx.topological_generations(digraph)):
            for node in nodes:
                digraph.nodes[node]["layer"] = depth
        return nx.multipartite_layout(digraph, subset_key="layer", align="horizontal",
                                      scale=-1)
    raise ValueError(f"layout must be 'circular', 'spring' or 'layered', got {layout!r}")


def _cell_text(value: float) -> str:
    """A probability in two decimals without the leading zero; exact-looking 0 and 1 short."""
    if value >= 0.995:
        return "1"
    return "0" if value < 0.005 else f"{value:.2f}".lstrip("0")


LABELLED_UP_TO = 60
"""Heatmaps label every variable up to this many, else every k-th one."""


def _cell_inches(p: int) -> float:
    """Side of a heatmap cell: 0.5 inch, smaller beyond 22 variables (figure ≤ ~12 inches)."""
    return min(0.5, 11.0 / max(p, 6))


def _tick_size(p: int) -> int:
    """Label size in points: at most 10, and no taller than about half a cell."""
    return max(5, min(10, int(0.5 * 72 * _cell_inches(p) * max(1, -(-p // LABELLED_UP_TO)))))

"""Figures: what is drawn must match the numbers given (cells, edges, means ± s.e.)."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from prodag import plotting

NAMES = ["a", "b", "c", "d"]
PROBS = np.array([[0.0, 0.9, 0.2, 0.6],
                  [0.05, 0.0, 0.7, 0.0],
                  [0.0, 0.1, 0.0, 0.55],
                  [0.3, 0.0, 0.0, 0.0]])


def test_heatmap_shows_the_probabilities_and_boxes_the_true_edges(tmp_path):
    truth = np.zeros((4, 4))
    truth[0, 1] = truth[1, 2] = truth[3, 0] = 1
    fig = plotting.plot_edge_probabilities(PROBS, NAMES, true_graph=truth)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), PROBS)
    boxes = [(int(r.get_y() + 0.5), int(r.get_x() + 0.5)) for r in ax.patches
             if isinstance(r, Rectangle) and not r.get_fill()]
    assert sorted(boxes) == [(0, 1), (1, 2), (3, 0)]
    cell_texts = {t.get_text() for t in ax.texts}
    assert {".90", ".55", ".05"} <= cell_texts and len(ax.texts) == 12  # off-diagonal cells
    assert [t.get_text() for t in ax.get_yticklabels()] == NAMES
    fig.savefig(tmp_path / "heatmap.png")
    assert (tmp_path / "heatmap.png").stat().st_size > 1000


def test_heatmap_takes_names_from_a_dataframe_and_truth_as_a_digraph():
    frame = pd.DataFrame(PROBS, index=NAMES, columns=NAMES)
    truth = nx.DiGraph([("d", "a")])
    ax = plotting.plot_edge_probabilities(frame, true_graph=truth, annotate=False).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == NAMES
    assert not ax.texts
    assert [(r.get_y() + 0.5, r.get_x() + 0.5) for r in ax.patches] == [(3, 0)]


@pytest.mark.parametrize("bad, message", [(np.ones((2, 3)), "square"),
                                          (PROBS * 2, r"\[0, 1\]")])
def test_heatmap_rejects_non_probabilities(bad, message):
    with pytest.raises(ValueError, match=message):
        plotting.plot_edge_probabilities(bad)


def _drawn_edges(fig):
    arrows = [a for a in fig.axes[0].patches if isinstance(a, FancyArrowPatch)]
    labels = {t.get_text() for t in fig.axes[0].texts if t.get_text()[:1].isdigit()}
    return arrows, labels


def test_graph_draws_exactly_the_edges_above_the_threshold_wider_when_likelier():
    fig = plotting.plot_graph(PROBS, threshold=0.55, variables=NAMES)
    arrows, labels = _drawn_edges(fig)
    assert labels == {"0.90", "0.60", "0.70", "0.55"}
    widths = sorted(a.get_linewidth() for a in arrows)
    assert len(widths) == 4 and widths[0] < widths[-1]
    assert "4 edges" in fig.axes[0].get_title()


def test_graph_accepts_a_digraph_with_probabilities():
    graph = nx.DiGraph()
    graph.add_edge("x", "y", probability=0.8, weight=1.0)
    graph.add_edge("y", "z", probability=0.3, weight=-1.0)
    arrows, labels = _drawn_edges(plotting.plot_graph(graph, threshold=0.5, layout="layered"))
    assert len(arrows) == 1 and labels == {"0.80"}
    with pytest.raises(ValueError, match="threshold"):
        plotting.plot_graph(graph, threshold=1.5)


def test_benchmark_panels_show_mean_and_standard_error_per_method():
    rows = [{"method": m, "n": n, "seed": s, "brier": b, "auroc": a}
            for m, offset in [("ProDAG", 0.0), ("DAGMA", 5.0)]
            for n in (10, 100, 1000) for s, (b, a) in enumerate([(1.0, 50), (3.0, 70),
                                                                 (8.0, 90)])
            for b, a in [(b + offset + n / 100, a)]]
    fig = plotting.plot_benchmark(rows, metrics=["brier", "auroc"])
    brier_ax, auroc_ax = fig.axes[:2]
    assert brier_ax.get_title() == "Brier" and auroc_ax.get_title() == "AUROC (%)"
    prodag_line = brier_ax.lines[0]
    np.testing.assert_allclose(np.asarray(prodag_line.get_xdata(), float), [10, 100, 1000])
    np.testing.assert_allclose(np.asarray(prodag_line.get_ydata(), float), [4.1, 5.0, 14.0])
    se = np.std([1.0, 3.0, 8.0], ddof=1) / np.sqrt(3)
    summary = plotting.summarize(rows, "brier", by=("method", "n"))
    np.testing.assert_allclose(summary["se"], se)
    np.testing.assert_allclose(np.asarray(auroc_ax.lines[0].get_ydata(), float), [70.0] * 3)
    assert brier_ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="eshd"):
        plotting.plot_benchmark(rows, metrics=["eshd"])


def test_reliability_diagram_draws_the_bins_and_names_the_error():
    from prodag.evaluation.plotting import plot_reliability

    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    probs = np.array([[0.0, 0.95, 0.05], [0.05, 0.0, 0.55], [0.05, 0.45, 0.0]])
    fig = plot_reliability(truth, probs, label="ProDAG")
    ax = fig.axes[0]
    assert len(ax.collections[0].get_offsets()) == 4  # four filled bins
    assert "ProDAG: ECE 0.183" in ax.get_legend().get_texts()[0].get_text()


def test_a_heatmap_of_many_variables_stays_legible():
    from prodag.evaluation.plotting import plot_edge_probabilities

    for p in (50, 150):
        names = [f"v{j}" for j in range(p)]
        figure = plot_edge_probabilities(np.zeros((p, p)), names, truth_name="the 18-edge graph")
        width, height = figure.get_size_inches()
        axes = figure.axes[0]
        labels = axes.get_xticklabels()
        assert width <= 13 and height <= 13
        points_per_label = width * 72 * 0.85 / len(labels)
        assert all(label.get_fontsize() <= points_per_label for label in labels)
        assert min(label.get_fontsize() for label in labels) >= 5
        assert "the 18-edge graph" not in axes.get_title()  # no true graph given, no boxes


def test_edges_the_chains_disagree_on_are_hatched_in_the_heatmap_and_dashed_in_the_graph():
    marked = [("a", "b"), ("c", "d")]
    ax = plotting.plot_edge_probabilities(PROBS, NAMES, disagreeing=marked).axes[0]
    hatched = sorted((int(r.get_y() + 0.5), int(r.get_x() + 0.5)) for r in ax.patches
                     if isinstance(r, Rectangle) and r.get_hatch())
    assert hatched == [(0, 1), (2, 3)] and "chains disagree" in ax.get_title()
    ax = plotting.plot_graph(PROBS, 0.5, NAMES, disagreeing=marked).axes[0]
    arrows = [a for a in ax.patches if isinstance(a, FancyArrowPatch)]
    dashed = [a for a in arrows if a.get_linestyle() not in ("-", "solid")]
    assert len(arrows) == 4 and len(dashed) == 2  # a->b, c->d of four
    plain = plotting.plot_edge_probabilities(PROBS, NAMES).axes[0]
    assert not any(isinstance(r, Rectangle) and r.get_hatch() for r in plain.patches)
    assert "disagree" not in plain.get_title()


def test_the_graph_picture_of_many_edges_colours_them_by_source_instead_of_labels():
    rng = np.random.default_rng(1)
    p = 14
    probabilities = np.triu(rng.uniform(0.5, 1.0, (p, p)), 1) * (rng.uniform(size=(p, p)) < 0.55)
    n_edges = int((probabilities >= 0.5).sum())
    assert n_edges > plotting.LABELLED_EDGES
    fig = plotting.plot_graph(probabilities, 0.5, [f"v{j}" for j in range(p)])
    ax = fig.axes[0]
    arrows = [a for a in ax.patches if isinstance(a, FancyArrowPatch)]
    assert len(arrows) == n_edges
    assert not [t for t in ax.texts if t.get_text()[:1] in "01."]  # no probability labels
    assert f"{n_edges} edges, coloured by their source" in ax.get_title()
    colours = {tuple(np.round(a.get_edgecolor()[:3], 3)) for a in arrows}
    sources = np.unique(np.nonzero(probabilities >= 0.5)[0])
    assert len(colours) == len(sources)  # one colour per source node
    assert fig.get_size_inches()[1] > 6.0  # grown beyond the small graphs' figure
    few = plotting.plot_graph(probabilities * (probabilities > 0.9), 0.5)
    assert [t for t in few.axes[0].texts if t.get_text()[:1] in "01"]  # labels when few
    assert to_rgba("#1f3b57")[:3] == pytest.approx(
        [a for a in few.axes[0].patches if isinstance(a, FancyArrowPatch)][0].get_edgecolor()[:3],
        abs=1e-3)

"""Slips of issue 41: the help groups its options and lists whole command summaries, the API
reference describes n_samples and max_epochs each in its own words, and the graph picture
stays readable at 50 edges. (The progress bar's are in test_progress.py.)"""

import re

import pytest
from cli_support import invoke

from prodag.cli.helpformat import PANELS


def sections(text):
    """``{title: [option names]}`` of a plain-text ``--help``."""
    found, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            title = line[:-1]
            found[title] = []
        elif title and re.match(r"^  --", line):
            found[title].append(line.split()[0])
    return found


def test_fit_help_groups_its_options_in_panels():
    listed = sections(invoke("fit", "--help", terminal_width=80).output)
    assert [title for title in listed if title.endswith(" options")] == \
        [f"{panel} options" for panel in PANELS] + ["Other options"]
    assert {"--sep", "--encoding", "--interventions", "--standardize"} <= \
        set(listed["Data options"])
    assert {"--sem", "--noise-variance"} <= set(listed["Model options"])
    assert {"--lam", "--chains", "--max-epochs"} <= set(listed["Fitting options"])
    assert {"--tiers", "--forbid"} <= set(listed["Knowledge options"])
    assert {"--out", "--n-draws", "--threshold"} <= set(listed["Output options"])
    assert listed["Other options"] == ["--help"]


def test_a_command_without_panels_lists_plain_options():
    assert "Options" in sections(invoke("evaluate", "--help", terminal_width=80).output)


def test_prodag_help_lists_each_command_whole():
    from prodag.cli import app

    output = invoke("--help", terminal_width=80).output
    text = " ".join(output.split("Commands:")[1].split())
    for command in app.registered_commands:
        first = command.callback.__doc__.strip().split("\n\n")[0]
        assert " ".join(first.split()) in text, first
    assert "..." not in text  # click cuts a summary at the terminal's width with "..."


def test_the_api_reference_describes_n_samples_and_max_epochs_apart():
    from prodag import ProDAG

    doc = ProDAG.__doc__
    assert "n_samples, max_epochs" not in doc
    n_samples = doc.split("    n_samples : int or None\n")[1].split("\n    ")[0]
    max_epochs = doc.split("    max_epochs : int\n")[1].split("\n    ")[0]
    assert "Monte Carlo samples" in n_samples and "epochs" not in n_samples
    assert "epochs" in max_epochs and "Monte Carlo" not in max_epochs


def test_the_graph_picture_of_many_edges_colours_them_by_source_instead_of_labels():
    import numpy as np
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyArrowPatch

    from prodag import plotting

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

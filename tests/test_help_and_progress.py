"""Slips of issue 41: the help groups its options and lists whole command summaries, the API
reference describes n_samples and max_epochs each in its own words, the progress bar says
what it counts and writes no carriage-return redraws into a file."""

import re

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
    n_samples = doc.split("    n_samples : int\n")[1].split("\n    ")[0]
    max_epochs = doc.split("    max_epochs : int\n")[1].split("\n    ")[0]
    assert "Monte Carlo samples" in n_samples and "epochs" not in n_samples
    assert "epochs" in max_epochs and "Monte Carlo" not in max_epochs

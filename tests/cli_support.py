"""Helpers shared by the command-line tests (test_cli*.py)."""

import pytest
from typer.testing import CliRunner

from prodag.cli import app

runner = CliRunner()


def invoke(*args, **extra):
    return runner.invoke(app, [str(a) for a in args], **extra)


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(error_lines) == 1, result.output
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


@pytest.fixture(scope="session")
def fitted(tmp_path_factory):
    """One tiny fit through the command line (simulated p = 4, n = 200): the folder holding
    data.csv, graph.csv and out/, and the fit's output."""
    folder = tmp_path_factory.mktemp("fit")
    assert invoke("simulate", "--p", 4, "--edges", 3, "--n", 200, "--seed", 1,
                  "--out", folder).exit_code == 0
    result = invoke("fit", folder / "data.csv", "--out", folder / "out", "--lam", "inf",
                    "--max-epochs", 15, "--n-samples", 8, "--n-draws", 60, "--threshold", 0.3,
                    "--seed", 0, "--no-progress")
    assert result.exit_code == 0, result.output
    return folder, result.output

"""The README stays a front door: short, with the CI's test command verbatim and no link to a
missing file."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_the_ci_runs_the_readmes_test_command_verbatim():
    ci_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_command.startswith("python3 -m venv .venv")
    assert f"\n{ci_command}\n" in README


def test_every_relative_link_of_the_readme_exists():
    links = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [link for link in links if "://" not in link]
    assert local, "the README links its docs pages"
    assert [link for link in local if not (ROOT / link).exists()] == []

"""The documentation site builds with ``mkdocs build --strict``: a page missing from the
navigation, a broken link or anchor, or an API reference that does not resolve fails."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("material")

ROOT = Path(__file__).resolve().parents[1]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        cwd=config.parent, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_site_builds_strictly_with_every_api_page(tmp_path):
    result = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    page = (tmp_path / "site" / "reference" / "estimator" / "index.html").read_text()
    assert "edge_probabilities" in page and "Parameters" in page  # rendered from docstrings
    for name in ("projection", "distributions", "simulate", "metrics", "datasets"):
        assert (tmp_path / "site" / "reference" / name / "index.html").is_file()


def test_the_site_settings_fail_on_a_broken_link_and_on_a_page_left_out(tmp_path):
    import yaml

    settings = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    small = {"site_name": "t", "strict": True, "validation": settings["validation"],
             "nav": [{"Home": "index.md"}]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [nowhere](no-such-page.md).\n")
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0 and "no-such-page.md" in result.stderr
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "docs" / "left-out.md").write_text("# Not in the navigation\n")
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0 and "left-out.md" in result.stderr

"""``benchmarks/results/INDEX.md`` names every result file: what wrote it and what it backs."""

from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_every_result_file_is_in_the_index():
    index = (RESULTS / "INDEX.md").read_text()
    files = [path.relative_to(RESULTS).as_posix() for path in RESULTS.rglob("*")
             if path.is_file() and path.name != "INDEX.md"]
    assert len(files) > 100
    missing = [name for name in files
               if f"`{name}`" not in index and f"`{Path(name).name}`" not in index]
    assert not missing, f"add these to benchmarks/results/INDEX.md: {missing}"


def test_every_study_is_listed_in_the_benchmarks_readme():
    studies = RESULTS.parent / "studies"
    readme = (RESULTS.parent / "README.md").read_text()
    names = [path.stem for path in studies.glob("*.py") if path.stem != "__init__"]
    assert len(names) > 20
    missing = [name for name in names if f"| `{name}` |" not in readme]
    assert not missing, f"add these to the studies table of benchmarks/README.md: {missing}"

"""``prodag bench``: the one loader of the benchmark suite and the experiments it lists."""

import sys

import pytest
from cli_support import invoke

from prodag.cli.bench import checkout_root, load_suite


@pytest.fixture
def fresh_benchmarks():
    """No ``benchmarks`` modules imported during the test; the earlier ones afterwards."""
    names = ("benchmarks", "benchmarks.suite", "benchmarks.helpers")
    saved = {name: sys.modules.pop(name) for name in names if name in sys.modules}
    yield
    for name in names:
        sys.modules.pop(name, None)
    sys.modules.update(saved)


def test_the_loader_imports_the_suite_as_a_package_without_touching_sys_path(tmp_path,
                                                                            fresh_benchmarks):
    package = tmp_path / "benchmarks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("NAME = 'from the package'\n")
    (package / "suite.py").write_text("from benchmarks.helpers import NAME\n")
    path = list(sys.path)
    suite = load_suite(tmp_path)
    assert suite.NAME == "from the package" and suite.__name__ == "benchmarks.suite"
    assert sys.path == path


def test_a_folder_without_the_benchmarks_package_is_no_checkout(tmp_path):
    with pytest.raises(FileNotFoundError, match="source checkout"):
        checkout_root([tmp_path])


def test_bench_lists_the_paper_experiments():
    result = invoke("bench", "--list")
    assert result.exit_code == 0, result.output
    for name in ("sachs", "munin", "linear-20-n100", "linear-er-100", "nonlinear-10-n100",
                 "nonlinear-er-10", "scale-free-3", "heteroscedastic-20"):
        assert name in result.output


def test_ray_flag_and_address_reach_the_executor(monkeypatch):
    suite = load_suite()
    made, ran = [], []

    class FakeExecutor:
        def __init__(self, address=None):
            made.append(address)

        def shutdown(self):
            made.append("shut")

    monkeypatch.setattr(suite, "RayExecutor", FakeExecutor)
    monkeypatch.setattr(suite, "run", lambda *a, **k: ran.append(k["executor"]))
    assert invoke("bench", "sachs", "--ray").exit_code == 0
    assert invoke("bench", "sachs", "--ray-address", "ray://head:10001").exit_code == 0
    assert invoke("bench", "sachs").exit_code == 0
    assert made == [None, "shut", "ray://head:10001", "shut"]
    assert ran[2] is None and isinstance(ran[0], FakeExecutor)

"""Structure of the code: no import cycle among the modules of ``src/prodag`` or of
``benchmarks``, no ``sys.path`` edits, the library's layers importing downwards only (``config/``
nothing of ``inference/``), no names loaded lazily by a package's ``__init__`` but the
documented ones, and no private name shared between test files (imports are read with ``ast``,
not executed)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"prodag": ROOT / "src" / "prodag", "benchmarks": ROOT / "benchmarks"}


def module_files(package: str) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of ``package`` (``__init__`` = the
    package)."""
    folder = PACKAGES[package]
    modules = {}
    for path in folder.rglob("*.py"):
        parts = [package, *path.relative_to(folder).with_suffix("").parts]
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_modules(module: str, path: Path, modules: set[str]) -> set[str]:
    """The ``modules`` that ``module`` imports anywhere in its file (relative imports resolved).

    ``from package import submodule`` depends on the submodule; ``from package import name``
    on the package.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = {f"{base}.{alias.name}" for alias in node.names}
            found |= submodules & modules or {base}
    return (found & modules) - {module}


def import_graph(package: str) -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``."""
    files = module_files(package)
    return {name: imported_modules(name, path, set(files)) for name, path in files.items()}


def edits_sys_path(path: Path) -> bool:
    """Whether the code (not its docstrings) of ``path`` touches ``sys.path``."""
    return any(isinstance(node, ast.Attribute) and node.attr == "path"
               and isinstance(node.value, ast.Name) and node.value.id == "sys"
               for node in ast.walk(ast.parse(path.read_text())))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules, or ``None`` (depth-first search)."""
    state = {}

    def visit(name, trail):
        if state.get(name) == "open":
            return [*trail[trail.index(name):], name]
        if name in state:
            return None
        state[name] = "open"
        for imported in sorted(graph[name]):
            cycle = visit(imported, [*trail, name])
            if cycle:
                return cycle
        state[name] = "done"
        return None

    for name in sorted(graph):
        cycle = visit(name, [])
        if cycle:
            return cycle
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle(package):
    graph = import_graph(package)
    assert len(graph) > 5  # the walk found the package's modules
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_sys_path_edits(package):
    edits = [path.name for path in module_files(package).values() if edits_sys_path(path)]
    assert edits == []


def test_the_checks_can_fail(tmp_path):
    assert edits_sys_path(_write(tmp_path, "import sys\nsys.path.insert(0, 'x')\n"))
    assert not edits_sys_path(_write(tmp_path, '"""No sys.path entry is needed."""\n'))


def _write(folder: Path, text: str) -> Path:
    path = folder / "module.py"
    path.write_text(text)
    return path


def test_the_cycle_finder_finds_a_cycle_and_the_walk_sees_relative_imports():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    graph = import_graph("benchmarks")
    assert {"benchmarks.suite.sachs", "benchmarks.suite.munin", "benchmarks.suite.synthetic"} <= graph["benchmarks.suite"]
    assert "prodag.projection.api" in import_graph("prodag")["prodag.projection"]


MAX_MODULE_LINES = 350
PIPELINE = (("prodag.inputs",), ("prodag.projection",), ("prodag.models",), ("prodag.config",),
            ("prodag.inference",), ("prodag.posterior",), ("prodag.io",), ("prodag.fit",))
"""The packages in the order the data flow through them (DESIGN.md): each imports only from
its own group and the groups before it (and the shared modules at the top of the package)."""
EVALUATION = ("prodag.evaluation",)
"""Simulated data, scores, bundled data sets and figures: built on the pipeline, used by the
estimator and the command line; no package of the pipeline imports them."""
FIT_STEPS = ("prodag.estimator", "prodag.effects", "prodag.cli")
"""The estimator and what uses a fitted posterior: no package of the pipeline, and nothing of
the evaluation, imports them."""
LAYERS = {  # a module of the first group imports none of the second
    **{" and ".join(name.removeprefix("prodag.") for name in group): (
        group, tuple(name for later in PIPELINE[i + 1:] for name in later) + EVALUATION
        + FIT_STEPS)
       for i, group in enumerate(PIPELINE)},
    "evaluation": (EVALUATION, FIT_STEPS),
    "the library": (("prodag",), ("prodag.cli",)),
}


def private_uses(path: Path, modules: set[str]) -> list[str]:
    """``alias._name`` in ``path`` where ``alias`` is a module of ``modules`` it imported (a
    private name reached across modules), as ``"alias._name"``."""
    tree = ast.parse(path.read_text())
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {alias.asname or alias.name for alias in node.names
                        if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases |= {alias.asname or alias.name for alias in node.names
                        if f"{node.module}.{alias.name}" in modules}
    return [f"{node.value.id}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in aliases and node.attr.startswith("_")
            and not node.attr.startswith("__")]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_reaches_another_modules_private_names(package):
    modules = set(module_files("prodag")) | set(module_files("benchmarks"))
    found = {name: uses for name, path in module_files(package).items()
             if (uses := private_uses(path, modules))}
    assert found == {}


def test_no_module_of_the_library_is_over_its_length():
    long = {name: n for name, path in module_files("prodag").items()
            if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the module ``name`` is one of ``prefixes`` or inside one of them."""
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def imports_across(graph: dict[str, set[str]], lower: tuple[str, ...],
                   upper: tuple[str, ...]) -> dict[str, list[str]]:
    """``{module of lower (not of upper): the modules of upper it imports}``, where any."""
    wrong = {name: sorted(m for m in imported if within(m, upper))
             for name, imported in graph.items()
             if within(name, lower) and not within(name, upper)}
    return {name: m for name, m in wrong.items() if m}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_the_layers_import_downwards_only(layer):
    lower, upper = LAYERS[layer]
    assert imports_across(import_graph("prodag"), lower, upper) == {}


HOLD_THE_ESTIMATOR = ("prodag.estimator", "prodag.cli")
"""The modules that may hold a ``ProDAG``: the estimator itself and the command line (and
``prodag``'s ``__init__``, which names it). Everything below takes the fitted posterior
(``prodag.posterior.fitted.FittedPosterior``), the resolved ``FitSpec`` or the parameters
(``settings``), never the estimator."""
ESTIMATOR_NAMES = ("est", "estimator")


def estimator_parameters(path: Path) -> list[str]:
    """``"function(parameter)"`` for every function (or lambda) of ``path`` with a parameter
    named as the estimator is (``ESTIMATOR_NAMES``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            names = [a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                     *arguments.kwonlyargs, arguments.vararg,
                                     arguments.kwarg) if a is not None]
            found += [f"{getattr(node, 'name', 'lambda')}({name})" for name in names
                      if name in ESTIMATOR_NAMES]
    return found


def test_nothing_below_the_estimator_takes_or_imports_it():
    graph = import_graph("prodag")
    below = {name: path for name, path in module_files("prodag").items()
             if name != "prodag" and not within(name, HOLD_THE_ESTIMATOR)}
    assert "prodag.fit" in below and "prodag.effects" in below  # the walk found them
    takes = {name: found for name, path in below.items()
             if (found := estimator_parameters(path))}
    imports = sorted(name for name in below if "prodag.estimator" in graph[name])
    assert (takes, imports) == ({}, [])


def test_the_estimator_parameter_finder_finds_one(tmp_path):
    path = _write(tmp_path, "def draw(est, n):\n    return n\n\n"
                            "def save(fitted, *, estimator=None):\n    pass\n\n"
                            "fit = lambda estimator: estimator\n")
    assert sorted(estimator_parameters(path)) == ["draw(est)", "lambda(estimator)",
                                                  "save(estimator)"]
    assert estimator_parameters(_write(tmp_path, "def draw(fitted, estimate):\n    pass\n")) == []


def test_config_imports_nothing_of_inference():
    """``config/`` owns every option type (criteria, ``ModelConfig``, ``OptimiserOptions``):
    the inference takes them from there, so settings are checked without the numerical code."""
    assert imports_across(import_graph("prodag"), ("prodag.config",), ("prodag.inference",)) == {}


def test_the_layer_check_finds_an_import_across():
    graph = {"prodag.config.x": {"prodag.inference.y", "prodag.inputs"}, "prodag.inference.y": set()}
    assert imports_across(graph, ("prodag.config",), ("prodag.inference",)) == {
        "prodag.config.x": ["prodag.inference.y"]}


LAZY_PACKAGES = {
    "prodag": "the public names load on first use, so that ``import prodag`` and ``prodag "
              "--help`` do not start JAX",
    "prodag.cli": "``app`` loads on first use, so that the console script installs its Ctrl-C "
                  "handling (``prodag.cli.main``) before the application and JAX are imported",
}
"""The packages whose ``__init__`` resolves names on first use (a module-level
``__getattr__``), and why; every other ``__init__`` imports what it re-exports."""


def loads_lazily(path: Path) -> bool:
    """Whether the module ``path`` defines a module-level ``__getattr__``."""
    return any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
               for node in ast.parse(path.read_text()).body)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_package_loads_its_names_lazily_but_the_documented_ones(package):
    packages = {name: path for name, path in module_files(package).items()
                if path.name == "__init__.py"}
    lazy = {name for name, path in packages.items() if loads_lazily(path)}
    assert lazy == set(LAZY_PACKAGES) & set(packages)


TESTS = ROOT / "tests"


def private_test_imports(path: Path, test_modules: set[str]) -> list[str]:
    """``module._name`` for each private name that ``path`` imports from one of
    ``test_modules`` (the files of the test folder, also reached as ``tests.module``)."""
    return [f"{node.module.removeprefix('tests.')}.{alias.name}"
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.removeprefix("tests.") in test_modules
            for alias in node.names if alias.name.startswith("_")]


def test_no_test_file_imports_a_private_name_of_another():
    """Tests share helpers through support modules (``cli_support``, ``montecarlo``,
    ``oracles``), under public names."""
    files = sorted(TESTS.glob("*.py"))
    modules = {path.stem for path in files}
    found = {path.name: uses for path in files if (uses := private_test_imports(path, modules))}
    assert found == {}


def test_the_private_test_import_finder_finds_one(tmp_path):
    path = _write(tmp_path, "from test_a import _data, public\nfrom tests.test_b import _oracle\n"
                            "from numpy import _private\n")
    assert private_test_imports(path, {"test_a", "test_b"}) == ["test_a._data", "test_b._oracle"]


def test_the_lazy_loading_finder_finds_one(tmp_path):
    assert loads_lazily(_write(tmp_path, "def __getattr__(name):\n    return name\n"))
    assert not loads_lazily(_write(tmp_path, "class A:\n    def __getattr__(self, name):\n"
                                             "        return name\n"))


def test_the_private_use_finder_finds_one(tmp_path):
    path = _write(tmp_path,
                  "from prodag.inference import fitting\nfitting._secret(1)\nfitting.public()\n")
    assert private_uses(path, {"prodag.inference.fitting"}) == ["fitting._secret"]


def test_every_package_of_the_library_has_its_place_in_the_pipeline():
    folder = PACKAGES["prodag"]
    packages = {f"prodag.{path.name}" for path in folder.iterdir()
                if (path / "__init__.py").exists()}
    assert packages == ({name for group in PIPELINE for name in group} | set(EVALUATION)
                        | {"prodag.cli"})

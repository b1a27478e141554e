"""``prodag bench``: the benchmark suite of a source checkout, and the one loader of it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from prodag.cli.errors import friendly_errors

SOURCE_ROOT = Path(__file__).resolve().parents[3]
"""The checkout that holds this package's ``src/prodag`` (meaningful for a source install)."""


def checkout_root(candidates=None) -> Path:
    """The first of ``candidates`` (default: the working directory, then the checkout that
    holds the installed package) with a ``benchmarks/__init__.py``."""
    for root in candidates or (Path.cwd(), SOURCE_ROOT):
        if (root / "benchmarks" / "__init__.py").is_file():
            return root
    raise FileNotFoundError(2, "prodag bench needs a source checkout of prodag: no "
                               "benchmarks package here or beside the installed package",
                            "benchmarks/__init__.py")


def load_suite(root: Path | None = None):
    """Import ``benchmarks.suite`` from the checkout ``root`` (default ``checkout_root()``):
    the ``benchmarks`` package is registered in ``sys.modules`` from its own folder, so no
    ``sys.path`` entry is needed."""
    if "benchmarks" not in sys.modules:
        folder = (root or checkout_root()) / "benchmarks"
        spec = importlib.util.spec_from_file_location(
            "benchmarks", folder / "__init__.py", submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["benchmarks"] = package
        spec.loader.exec_module(package)
    return importlib.import_module("benchmarks.suite")


@friendly_errors
def bench(
    experiments: Annotated[Optional[list[str]], typer.Argument(
        help="Experiments to run (see --list); all of them when none is given.")] = None,
    seeds: Annotated[Optional[int], typer.Option(
        min=1, help="Seeds (datasets or data splits) per setting; default: each experiment's "
                    "own (10, as in the paper).")] = None,
    quick: Annotated[bool, typer.Option(
        help="A fast smoke run: fewer sample sizes, seeds and epochs.")] = False,
    methods: Annotated[Optional[list[str]], typer.Option(
        "--method", help="Methods to compare (repeat the option); default ProDAG plus every "
                         "installed peer (DAGMA, DiBS).")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="Folder for the JSON results and figures; default: benchmarks/results of the "
             "checkout that holds the suite.")] = None,
    list_experiments: Annotated[bool, typer.Option(
        "--list", help="List the experiments and exit.")] = False,
    merge: Annotated[bool, typer.Option(
        help="Keep the rows of methods not run now from the existing results in --out "
             "(e.g. re-run ProDAG alone beside peers measured earlier).")] = False,
    resume: Annotated[bool, typer.Option(
        help="Reuse the fits that an interrupted run saved in --out "
             "(<experiment>.partial.json) and run only the rest.")] = False,
    ray: Annotated[bool, typer.Option(
        "--ray", help="Run the fits as Ray tasks on a new local Ray instance using every "
                      "core, or on the cluster at --ray-address (needs pip install "
                      "'prodag[ray]'). Default: one fit after another in this process.")] = False,
    ray_address: Annotated[Optional[str], typer.Option(
        "--ray-address", metavar="ADDRESS",
        help="Run the fits as Ray tasks on the Ray cluster at ADDRESS (implies --ray).")] = None,
):
    """Run the benchmark suite: the paper's experiments, ProDAG beside installed peers.

    Each experiment writes a JSON file of per-seed metrics, a summary table and a figure
    into --out. Needs a source checkout of prodag (its benchmarks package).
    """
    suite = load_suite()
    if list_experiments:
        for name, experiment in suite.EXPERIMENTS.items():
            typer.echo(f"{name:<28} {experiment.description}")
        return
    unknown = sorted(set(experiments or ()) - set(suite.EXPERIMENTS))
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(suite.EXPERIMENTS)} (see prodag bench --list)")
    executor = None
    if ray or ray_address is not None:
        executor = suite.RayExecutor(ray_address)
    try:
        suite.run(experiments or list(suite.EXPERIMENTS), seeds=seeds, quick=quick,
                  methods=methods, out=out or suite.RESULTS_DIR, merge=merge, resume=resume,
                  executor=executor)
    finally:
        if executor is not None:
            executor.shutdown()

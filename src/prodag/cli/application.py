"""The ``prodag`` application: its commands, and the console script's entry point."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from prodag.cli.bench import bench
from prodag.cli.demo import demo
from prodag.cli.effects import effects
from prodag.cli.evaluate import evaluate
from prodag.cli.fit import fit
from prodag.cli.simulate import simulate

app = typer.Typer(
    name="prodag",
    help=(
        "Bayesian structure learning of directed acyclic graphs (DAGs) with projected "
        "variational inference (ProDAG).\n\n"
        "Give it a CSV table (one row per observation, one column per variable): "
        "'prodag fit data.csv --out results/' learns a posterior over DAGs and writes "
        "edge probabilities, sampled graphs and pictures. 'prodag demo' does this on the "
        "bundled Sachs protein-signalling data and compares with the consensus graph."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: readable on an 80-column terminal
)
for command in (fit, demo, simulate, evaluate, effects, bench):
    app.command()(command)


def _print_version(value: bool) -> None:
    """``--version``: print the installed version and stop before any command runs."""
    if value:
        from prodag import __version__

        typer.echo(f"prodag {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print prodag's version and exit.")] = False,
) -> None:
    """Options that come before the command (``prodag --version``)."""


COMPILATION_CACHE_VARIABLE = "PRODAG_COMPILATION_CACHE"
"""Environment variable naming the folder for JAX's compiled programs, or ``off``."""


def compilation_cache_dir() -> Path | None:
    """Where the ``prodag`` command keeps JAX's compiled programs between runs.

    ``$PRODAG_COMPILATION_CACHE`` if set (``off`` for no cache), else
    ``$XDG_CACHE_HOME/prodag/jax`` (``~/.cache/prodag/jax``). Reusing them saves the
    compilation at the start of a fit, except for programs that call the CPU search kernel
    (p > 9 on a CPU), which JAX does not store (docs/guide/cli.md).
    """
    setting = os.environ.get(COMPILATION_CACHE_VARIABLE, "").strip()
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache_home) / "prodag" / "jax"


def main() -> None:
    """Entry point of the ``prodag`` console script: JAX's persistent compilation cache on
    (``compilation_cache_dir``; a ``JAX_COMPILATION_CACHE_DIR`` of the user's wins), then
    the command."""
    directory = compilation_cache_dir()
    if directory is not None:
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(directory))
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")
    app(prog_name="prodag")

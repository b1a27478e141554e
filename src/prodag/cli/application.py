"""The ``prodag`` application: its commands, and the console script's entry point.

The console script builds the application with only the command it is asked for
(``main``), so a quick command such as ``prodag effects`` does not import what the others
need (JAX, numba); ``app`` and ``prodag --help`` have every command."""

from __future__ import annotations

import functools
import os
import sys
from importlib import import_module
from pathlib import Path
from typing import Annotated

import typer

COMMANDS = ("fit", "demo", "simulate", "evaluate", "effects", "bench")
"""The commands, in the order of ``prodag --help``; command ``name`` is the function ``name``
of the module ``prodag.cli.<name>``."""
HELP = (
    "Bayesian structure learning of directed acyclic graphs (DAGs) with projected "
    "variational inference (ProDAG).\n\n"
    "Give it a CSV table (one row per observation, one column per variable): "
    "'prodag fit data.csv --out results/' learns a posterior over DAGs and writes "
    "edge probabilities, sampled graphs and pictures. 'prodag demo' does this on the "
    "bundled Sachs protein-signalling data and compares with the consensus graph."
)


def make_app(commands=COMMANDS) -> typer.Typer:
    """The ``prodag`` application with the named ``commands`` (each module imported here)."""
    from prodag.cli.helpformat import PanelledCommand, SummarisingGroup

    application = typer.Typer(
        name="prodag", help=HELP, no_args_is_help=True, add_completion=False,
        rich_markup_mode=None,  # plain help: readable on an 80-column terminal
        cls=SummarisingGroup,
    )
    for name in commands:
        application.command(cls=PanelledCommand)(
            getattr(import_module(f"prodag.cli.{name}"), name))
    application.callback()(_options)
    return application


@functools.cache
def full_app() -> typer.Typer:
    """The application with every command (``prodag.cli.app``)."""
    return make_app()


def __getattr__(name):
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def requested_commands(argv: list[str]) -> tuple[str, ...]:
    """The commands the console script needs for the arguments ``argv`` (without the program
    name): the one named first, else every one (``prodag --help``, a typo)."""
    named = next((argument for argument in argv if not argument.startswith("-")), None)
    return (named,) if named in COMMANDS else COMMANDS


def _print_version(value: bool) -> None:
    """``--version``: print the installed version and stop before any command runs."""
    if value:
        from prodag import __version__

        typer.echo(f"prodag {__version__}")
        raise typer.Exit()


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
    make_app(requested_commands(sys.argv[1:]))(prog_name="prodag")

"""One error handler for every command: a user-facing failure becomes one red
``Error: ...`` line and exit code 2, never a traceback."""

from __future__ import annotations

import functools
import warnings

import typer

USER_ERRORS = (ValueError, OSError, KeyError)
"""Failures caused by a bad file or value: ``ValueError`` covers
``prodag.inputs.validation.DataError`` and ``ProDAG.load``'s error for a file that is not a saved
model; ``OSError`` covers missing and unreadable files."""


def friendly_errors(command):
    """Wrap a command so that ``USER_ERRORS`` end it with one line on stderr and exit 2, and
    warnings show as ``show_warning`` prints them."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = show_warning
                return command(*args, **kwargs)
        except USER_ERRORS as error:
            typer.secho(f"Error: {message(error)}", fg="red", err=True)
            raise typer.Exit(code=2) from None
        except MemoryError:
            typer.secho("Error: out of memory: the data or the settings need more memory than "
                        "this machine has; use fewer variables, rows or samples "
                        "(--n-samples).", fg="red", err=True)
            raise typer.Exit(code=2) from None

    return wrapper


def message(error: BaseException) -> str:
    """The text of ``error`` on one line."""
    if isinstance(error, KeyError) and error.args:
        text = str(error.args[0])
    elif isinstance(error, OSError) and error.filename and error.strerror:
        text = f"{error.strerror}: {error.filename}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


_python_show_warning = warnings.showwarning


def warn(text: str) -> None:
    """Print one yellow ``Warning: ...`` line on stderr."""
    typer.secho(f"Warning: {text}", fg="yellow", err=True)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the command line: a ``UserWarning`` (prodag's warnings
    about the data and settings) as one ``Warning: ...`` line, without the source location
    that Python prints; other categories as Python shows them."""
    if issubclass(category, UserWarning):
        warn(" ".join(str(message).split()))
    else:
        _python_show_warning(message, category, filename, lineno, file, line)

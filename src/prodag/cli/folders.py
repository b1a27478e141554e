"""The results folder a command writes whole or not at all.

A command writes into a temporary folder ``.<out>.partial-<pid>-*`` beside ``--out`` and,
once everything is written, swaps it in: ``out`` is renamed into ``.<out>.old-<pid>-*``, the
new folder renamed to ``out``, and the old one deleted, all while Ctrl-C waits
(``prodag.cli.interrupts.critical``). So an interrupt leaves ``out`` as it was or complete,
and no hidden folder behind.

Only a process killed outright (``kill -9``, a power cut) can leave such folders; the process
id in their names tells whose they are. ``recover`` runs before a command touches ``out``: the
folders of processes that no longer run are deleted, and if ``out`` itself is missing because
the process died between the two renames, the old results are moved back first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

PARTIAL, OLD = "partial", "old"
"""The kinds of hidden folders beside ``out``: ``.<out>.<kind>-<pid>-<random>``."""


def hidden_folder_prefix(out: Path, kind: str, pid: int | None = None) -> str:
    """``.<out>.<kind>-`` (every process's), or ``.<out>.<kind>-<pid>-`` (one process's)."""
    return f".{out.name}.{kind}-" + ("" if pid is None else f"{pid}-")


def _owner(folder: Path, out: Path, kind: str) -> int | None:
    """The process id in a hidden folder's name, or None if it has none."""
    rest = folder.name[len(hidden_folder_prefix(out, kind)):]
    head = rest.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists
        return True
    return True


def recover(out: Path) -> None:
    """Tidy what a killed earlier run left beside ``out``: its old results moved back where
    ``out`` is missing, then its hidden folders deleted (those of running processes, such as a
    concurrent run into the same ``out``, are left alone)."""
    if not out.parent.is_dir():
        return
    for kind in (OLD, PARTIAL):
        for folder in sorted(out.parent.glob(hidden_folder_prefix(out, kind) + "*")):
            pid = _owner(folder, out, kind)
            if not folder.is_dir() or pid is None or pid == os.getpid() or _running(pid):
                continue
            kept = folder / out.name
            if kind == OLD and kept.is_dir() and not out.exists():
                os.replace(kept, out)
            shutil.rmtree(folder, ignore_errors=True)


def check_out(out: Path, known: Iterable[str]) -> None:
    """Refuse, before any work, an ``--out`` that ``results_folder`` must not replace: an
    existing file, the working folder or one above it, a folder holding files other than
    ``known`` (the files the command writes; earlier results are replaced whole, anything
    else would be lost with them), or a place that cannot be written. An earlier interrupted
    run's leftovers are tidied first (``recover``)."""
    from prodag.inputs.validation import DataError

    recover(out)
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} is an existing file; name a folder for the results "
                        "(it is created if missing).")
    resolved = out.resolve()
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise DataError(f"--out {out} is the working folder or one above it; name a new "
                        "folder for the results (it replaces the folder's content).")
    if out.is_dir():
        foreign = sorted(entry.name for entry in out.iterdir() if entry.name not in set(known))
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more"
                                              if len(foreign) > 5 else "")
            raise DataError(f"--out {out} holds files that this command does not write "
                            f"({shown}); the results replace the whole folder, so name a new "
                            "folder, an empty one, or one with earlier results of this command.")
    parent = next(folder for folder in resolved.parents if folder.exists())
    if not parent.is_dir():
        raise DataError(f"--out {out}: {parent} is a file, not a folder, so no folder can be "
                        "made inside it; name a folder elsewhere.")
    for folder in ([resolved] if out.is_dir() else []) + [parent]:
        _probe(out, folder)


def _probe(out: Path, folder: Path) -> None:
    """Refuse ``--out`` unless a folder can be made in ``folder`` and removed again: what the
    swap of the module docstring does there (``out`` itself is renamed, which needs it
    writable). Catches permissions, read-only file systems and places like ``/proc``."""
    from prodag.inputs.validation import DataError

    reason = None if os.access(folder, os.W_OK | os.X_OK) else "permission denied"
    if reason is None:
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".prodag-probe-", dir=folder))
        except OSError as error:
            reason = (error.strerror or type(error).__name__).lower()
    if reason is not None:
        which = "the folder itself" if folder == out.resolve() else str(folder)
        raise DataError(f"--out {out}: cannot write into {which} ({reason}); the results "
                        "are written beside it and swapped in, so name a folder you can "
                        "write to.")


def _hidden_folder(out: Path, kind: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=hidden_folder_prefix(out, kind, os.getpid()),
                                 dir=out.parent))


@contextlib.contextmanager
def results_folder(out: Path, known: Iterable[str]) -> Iterator[Path]:
    """A temporary folder beside ``out`` to write the results into; when the block ends
    without error it replaces ``out`` (the swap of the module docstring, which an interrupt
    waits for), else it is removed. So ``out`` holds either the old results or the new ones,
    never a mix or half a file (``prodag.cli.interrupts``)."""
    from prodag.cli import interrupts

    check_out(out, known)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = _hidden_folder(out, PARTIAL)
    umask = os.umask(0)
    os.umask(umask)
    temporary.chmod(0o777 & ~umask)  # mkdtemp's 0700 would otherwise become out's

    def remove() -> None:
        shutil.rmtree(temporary, ignore_errors=True)

    with interrupts.on_interrupt(remove):
        try:
            yield temporary
        except BaseException:
            remove()
            raise
        with interrupts.critical():
            old = None
            try:
                if out.exists():
                    old = _hidden_folder(out, OLD)
                    os.replace(out, old / out.name)
                os.replace(temporary, out)
            except OSError as error:  # out changed since check_out: leave nothing behind
                remove()
                if old is not None:
                    if (old / out.name).exists() and not out.exists():
                        os.replace(old / out.name, out)
                    shutil.rmtree(old, ignore_errors=True)
                raise OSError(error.errno, error.strerror, str(out)) from None
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            interrupts.finish()

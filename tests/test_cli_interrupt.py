"""Ctrl-C during ``prodag fit`` and ``prodag simulate``, in a real process: exit code 130 and
one line, never a traceback or a crash, and the results folder either as it was before or
complete (``prodag.cli.interrupts``, ``prodag.cli.folders.results_folder``)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from prodag.cli.interrupts import EXIT_CODE, MESSAGE, MESSAGE_AFTER_SAVING

SOURCE = Path(__file__).resolve().parents[1] / "src"


def run_and_interrupt(arguments, after: float, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``python -m prodag.cli ARGUMENTS`` and send it SIGINT ``after`` seconds in, unless
    it has finished by then (then no signal, as a signal to the finished process did nothing,
    and no idle wait for the rest of ``after``)."""
    env = {**os.environ, "PYTHONPATH": str(SOURCE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "prodag.cli", *map(str, arguments)],
                               cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        process.wait(timeout=after)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def assert_interrupted_cleanly(result, message=MESSAGE):
    assert result.returncode == EXIT_CODE, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout
    assert [line for line in result.stderr.splitlines() if line.strip()] == [message]


@pytest.fixture(scope="module")
def old_results(tmp_path_factory):
    """A small data file and an earlier, complete results folder ``out`` beside it."""
    folder = tmp_path_factory.mktemp("interrupt")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    x[:, 1] += x[:, 0]
    np.savetxt(folder / "data.csv", x, delimiter=",", header="a,b,c", comments="")
    out = folder / "out"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"old": True}))
    return folder


@pytest.mark.parametrize("after", [0.4, 2.5, 5.0])  # while it starts, compiles and fits; a
# folder replaced whole or left as it was is also checked alone (test_cli_files.py)
def test_ctrl_c_during_fit_exits_130_with_one_line_and_keeps_the_old_results(old_results,
                                                                             after):
    arguments = ["fit", "data.csv", "--out", "out", "--lam", "2", "--max-epochs", "30",
                 "--n-samples", "8", "--restarts", "1", "--no-progress"]
    result = run_and_interrupt(arguments, after, old_results)
    leftovers = [p.name for p in old_results.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    if result.returncode == 0:  # the fit finished first: the folder is the new one, whole
        summary = json.loads((old_results / "out" / "summary.json").read_text())
        assert "old" not in summary and (old_results / "out" / "posterior.npz").is_file()
        (old_results / "out" / "summary.json").write_text(json.dumps({"old": True}))
        return
    assert_interrupted_cleanly(result)
    assert sorted(p.name for p in (old_results / "out").iterdir()) == ["summary.json"]
    assert json.loads((old_results / "out" / "summary.json").read_text()) == {"old": True}


@pytest.mark.parametrize("after", [0.0, 0.3])
def test_ctrl_c_after_the_last_line_is_ignored(tmp_path, after):
    """An interrupt once the results are saved (while the last lines print, or during the
    interpreter's shut-down, when Python restores the default handler) leaves a successful
    command successful: exit 0, not 130 with a false message or death by signal 2."""
    env = {**os.environ, "PYTHONPATH": str(SOURCE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "prodag.cli", "simulate", "--p", "4",
                                "--edges", "3", "--n", "20", "--out", "sim"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in process.stdout:
        if "weights.csv" in line:  # the last line names the files written
            break
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (0, "")
    assert sorted(p.name for p in (tmp_path / "sim").iterdir()) == [
        "data.csv", "graph.csv", "weights.csv"]


def test_ctrl_c_during_simulate_leaves_no_folder(tmp_path):
    result = run_and_interrupt(["simulate", "--p", "5", "--edges", "4", "--n", "50",
                                "--out", "sim"], 0.8, tmp_path)
    if result.returncode == 0:
        assert sorted(p.name for p in (tmp_path / "sim").iterdir()) == [
            "data.csv", "graph.csv", "weights.csv"]
    else:
        assert_interrupted_cleanly(result)
        assert list(tmp_path.iterdir()) == []


SWAP_SCRIPT = """
import os, shutil, signal, sys, time
from pathlib import Path
from prodag.cli import interrupts
interrupts.install()
from prodag.cli import folders

out, replace, rmtree = Path(sys.argv[1]), os.replace, shutil.rmtree
renames = []

def interrupted_replace(source, target):  # Ctrl-C between the two renames of the swap
    replace(source, target)
    renames.append(target)
    if len(renames) == 1:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)

def slow_rmtree(path, *args, **kwargs):  # deleting the old results takes a while
    if ".old-" in str(path):
        time.sleep(0.5)
    return rmtree(path, *args, **kwargs)

os.replace, shutil.rmtree = interrupted_replace, slow_rmtree
with folders.results_folder(out, ["summary.json"]) as folder:
    (folder / "summary.json").write_text("new")
time.sleep(5)  # the interrupt ends the process here at the latest
"""


def test_ctrl_c_during_the_swap_leaves_the_new_folder_whole_and_nothing_hidden(tmp_path):
    """An interrupt between the renames waits for the whole swap, deleting the old results
    included: exit 130 with the line that says so, ``out`` complete and new, no
    ``.out.old-*`` or ``.out.partial-*``."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("old")
    env = {**os.environ, "PYTHONPATH": str(SOURCE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", SWAP_SCRIPT, str(out)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert_interrupted_cleanly(result, MESSAGE_AFTER_SAVING)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "summary.json").read_text() == "new"


def finished_pid() -> int:
    """The id of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_the_next_run_tidies_what_a_killed_run_left(tmp_path):
    """A run killed between the renames (its results in ``.out.old-PID-*``, ``out`` missing)
    and one killed while writing (``.out.partial-PID-*``): the next command's ``check_out``
    moves the old results back and deletes both; a running process's folder is kept."""
    from prodag.cli.folders import check_out

    out = tmp_path / "out"
    dead = finished_pid()
    old = tmp_path / f".out.old-{dead}-abc"
    (old / "out").mkdir(parents=True)
    (old / "out" / "summary.json").write_text("old")
    (tmp_path / f".out.partial-{dead}-def").mkdir()
    (tmp_path / f".out.partial-{dead}-def" / "summary.json").write_text("half")
    running = tmp_path / ".out.partial-1-ghi"  # process 1 always runs
    running.mkdir()
    check_out(out, ["summary.json"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name, "out"]
    assert (out / "summary.json").read_text() == "old"
    check_out(out, ["summary.json"])  # out present now: nothing left to restore
    assert (out / "summary.json").read_text() == "old" and running.is_dir()

"""Progress over a fit's sub-fits: on a terminal a bar that counts finished fits, says that it
counts fits and shows the stage; elsewhere (a log file) a plain line now and then, never a
carriage-return redraw; nothing when disabled."""

import io

import pytest

from prodag import progress as progress_module
from prodag.progress import Progress


class Terminal(io.StringIO):
    """Standard error as an interactive terminal."""

    def isatty(self):
        return True


def test_the_bar_counts_finished_fits_and_names_the_stage():
    with Progress(3, stream=Terminal()) as progress:
        progress.stage("radius 2/10")
        progress.update(7, 1.25)
        progress.fit_done([5])
        progress.fit_done([5])
        assert progress.bar.n == 2 and progress.bar.total == 3
        assert "radius 2/10" in progress.bar.desc
        assert progress.bar.postfix == "epoch 7, loss 1.25"
        assert "fits 2/3" in str(progress.bar)


def test_the_bar_says_nothing_of_a_count_it_does_not_know_yet():
    with Progress(None, stream=Terminal()) as progress:
        progress.stage("data starts (order search)")
        assert "?" not in str(progress.bar) and "fits" not in str(progress.bar)
        progress.set_total(46)
        assert "fits 0/46" in str(progress.bar)


def test_a_disabled_bar_writes_nothing(capsys):
    with Progress(3, enabled=False) as progress:
        progress.stage("λ=∞")
        progress.update(1, 0.0)
        progress.fit_done([5])
    assert progress.bar is None
    assert capsys.readouterr() == ("", "")


def test_the_clock_runs_on_between_updates():
    """A long epoch calls nothing, yet the bar is redrawn with its elapsed time."""
    import time

    from prodag.progress import TICK

    terminal = Terminal()
    with Progress(2, stream=terminal) as progress:
        time.sleep(2.5 * TICK)
        drawn = terminal.getvalue()
    assert "00:02" in drawn, drawn
    assert not progress._ticker.is_alive()


def test_into_a_file_it_writes_lines_not_redraws(monkeypatch):
    clock = iter([0.0, 0.0, 1.0, 2.0, 15.0, 16.0, 40.0, 41.0])
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock))
    log = io.StringIO()  # not a terminal
    with Progress(None, stream=log) as progress:
        progress.stage("data starts (order search)")  # t = 0: the first line
        progress.set_total(4)
        progress.stage("radius 1/3")  # t = 1: within LINE_SECONDS of the last line
        progress.update(3, 1.0)
        progress.fit_done([5])
        progress.stage("radius 2/3")  # t = 2: skipped
        progress.stage("radius 3/3")  # t = 15: written, with the fits done
        progress.fit_done([5])
    written = log.getvalue()
    assert "\r" not in written and progress.bar is None
    assert written.splitlines() == ["ProDAG: data starts (order search), 0 s",
                                    "ProDAG: radius 3/3 (fits done 1/4), 15 s",
                                    "ProDAG: 2 fits done in 16 s"]


@pytest.mark.parametrize("interactive", [True, False])
def test_a_fit_writes_carriage_returns_only_to_a_terminal(monkeypatch, interactive):
    import numpy as np

    from prodag import ProDAG, TrainingOptions

    stream = Terminal() if interactive else io.StringIO()
    monkeypatch.setattr(progress_module.sys, "stderr", stream)
    X = np.random.default_rng(0).normal(size=(40, 3))  # test_bad_inputs' fit: compiled once
    ProDAG(lam=2.0, max_epochs=2, n_samples=4, progress=True, seed=0,
           training=TrainingOptions(n_restarts=1, init="prior")).fit(X)
    assert ("\r" in stream.getvalue()) == interactive, stream.getvalue()


def test_each_phase_counts_the_time_until_another_phase_begins(monkeypatch):
    clock = iter([0.0, 1.0, 3.0, 4.0, 10.0, 12.5])
    monkeypatch.setattr(progress_module.time, "perf_counter", lambda: next(clock))
    with Progress(3, enabled=False) as progress:   # started at 0
        progress.stage("order search")              # 1
        progress.stage("step 1", "refinement")      # 3
        progress.stage("step 2", "refinement")      # the same phase: no clock read
        progress.stage("order search")              # 4: a phase may come back
        progress.stage("pooling")                   # 10
    assert progress.seconds == {"order search": 2.0 + 6.0, "refinement": 1.0,
                                "pooling": 2.5}     # closed at 12.5

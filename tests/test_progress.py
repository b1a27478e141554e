"""The progress bar over a fit's sub-fits: counts finished fits, shows the stage, and does
nothing when disabled."""

from prodag.inference import Progress as ReExported
from prodag.progress import Progress


def test_the_bar_counts_finished_fits_and_names_the_stage(capsys):
    with Progress(3) as progress:
        progress.stage("radius 2/10")
        progress.update(7, 1.25)
        progress.fit_done()
        progress.fit_done()
        assert progress.bar.n == 2 and progress.bar.total == 3
        assert "radius 2/10" in progress.bar.desc
        assert progress.bar.postfix == "epoch 7, loss 1.25"


def test_a_disabled_bar_writes_nothing(capsys):
    with Progress(3, enabled=False) as progress:
        progress.stage("λ=∞")
        progress.update(1, 0.0)
        progress.fit_done()
    assert progress.bar is None
    assert capsys.readouterr() == ("", "")


def test_the_inference_module_still_offers_it():
    assert ReExported is Progress


def test_the_clock_runs_on_between_updates(capsys):
    """A long epoch calls nothing, yet the bar is redrawn with its elapsed time."""
    import time

    from prodag.progress import TICK

    with Progress(2) as progress:
        time.sleep(2.5 * TICK)
        drawn = capsys.readouterr().err
    assert "00:02" in drawn, drawn
    assert not progress._ticker.is_alive()

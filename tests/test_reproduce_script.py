"""The reproduction check (``benchmarks/suite/reproduce.py``) reads a result file's settings
as the run that wrote it had them, and flags a metric that moved. The refit itself is a
benchmark (about a minute): ``python -m benchmarks.suite.reproduce``."""

import json

from benchmarks import RESULTS_DIR
from benchmarks.suite import reproduce, synthetic


def stored(file=reproduce.DEFAULT_FILE) -> dict:
    return json.loads((RESULTS_DIR / file).read_text())


def test_the_recorded_settings_are_those_of_the_run_that_wrote_the_file():
    recorded = stored()["settings"]
    settings = reproduce.recorded_settings(recorded)
    assert (settings.sem, settings.p, settings.s, settings.lam) == ("mlp", 10, 20, "auto")
    options = settings.estimator_options()
    for name, value in recorded["estimator"].items():
        if name != "lam":  # recorded in the spelling of its day (None: select)
            assert options[name] == value, name


def test_a_metric_that_moved_is_flagged_and_the_others_are_not(monkeypatch, capsys):
    rows = {row["seed"]: row for row in stored()["rows"]}

    def refit(settings, n, seed):
        return {**rows[seed], "ef1": rows[seed]["ef1"] + (0.01 if seed == 1 else 0.0)}

    monkeypatch.setattr(synthetic, "run_one", refit)
    assert reproduce.main(["--seed", "0"]) == 0
    assert reproduce.main(["--seed", "0", "1"]) == 1
    flagged = [line for line in capsys.readouterr().out.splitlines() if line.endswith("NO |")]
    assert flagged and all(line.startswith("| 1 | ef1 |") for line in flagged)

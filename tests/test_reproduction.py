"""A committed benchmark row is reproduced by today's code: a refactor must change no number.

The cheapest λ-selected row of the committed tables (the MLP with 2 hidden units and no
biases, nonlinear-10-n100, dataset 0: one fit of about 25 s) is refitted through the suite's
own runner and must match the committed metrics to the digits the tables print and beyond.
"""

import json

import pytest

from benchmarks import RESULTS_DIR
from benchmarks.suite import synthetic

ROW = {"file": "nonlinear-10-n100.json", "method": "ProDAG (2 units, no bias)", "seed": 0}


def committed_row() -> dict:
    rows = json.loads((RESULTS_DIR / ROW["file"]).read_text())["rows"]
    return next(r for r in rows if r["method"] == ROW["method"] and r["seed"] == ROW["seed"])


@pytest.mark.slow
def test_the_committed_mlp_row_is_reproduced():
    expected = committed_row()
    settings = synthetic.SyntheticSettings(p=10, s=20, sem="mlp").with_options(
        hidden_units=2, bias=False)
    row = synthetic.run_one(settings, n=expected["n"], seed=expected["seed"])
    for metric in ("brier", "eshd", "ef1", "auroc"):
        assert row[metric] == pytest.approx(expected[metric], abs=1e-4), metric

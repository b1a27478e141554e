"""A committed benchmark row is reproduced by today's code: a refactor must change no number.

A λ-selected row of a committed table (the additive SEM with its defaults on the MLP
simulator, p = 10, n = 100, dataset 1) is refitted through the suite's own runner and must
match the committed metrics to the digits the tables print and beyond.
It runs in a fresh process with XLA's default optimisation (the benchmarks' compiler
settings), not the fast-compiling ones the rest of the tests use (``conftest.py``).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAST_COMPILE

from benchmarks import RESULTS_DIR

ROW = {"file": "synthetic_mlp_er10_n100_additive.json", "seed": 1}


def committed_row() -> dict:
    rows = json.loads((RESULTS_DIR / ROW["file"]).read_text())["rows"]
    return next(r for r in rows if r["seed"] == ROW["seed"])


@pytest.mark.slow
def test_the_committed_additive_row_is_reproduced():
    expected = committed_row()
    script = (
        "import json; from benchmarks.suite import synthetic\n"
        "settings = synthetic.SyntheticSettings(p=10, s=20, sem='mlp').with_options(\n"
        "    sem='additive')\n"
        f"row = synthetic.run_one(settings, n={expected['n']}, seed={expected['seed']})\n"
        "print(json.dumps(row))\n")
    root = Path(__file__).resolve().parents[1]
    flags = os.environ.get("XLA_FLAGS", "").replace(FAST_COMPILE, "").strip()
    env = {**os.environ, "XLA_FLAGS": flags,
           "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root),
                                          os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    row = json.loads(done.stdout.strip().splitlines()[-1])
    for metric in ("brier", "eshd", "ef1", "auroc"):
        assert row[metric] == pytest.approx(expected[metric], abs=1e-4), metric

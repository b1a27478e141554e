"""The benchmark suite's bookkeeping (benchmarks/suite.py): merging re-runs with old rows."""

import importlib.util
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
_SPEC = importlib.util.spec_from_file_location("suite", BENCHMARKS / "suite.py")
suite = importlib.util.module_from_spec(_SPEC)
sys.modules["suite"] = suite  # its dataclasses look their module up while being defined
_SPEC.loader.exec_module(suite)


def test_kept_rows_keep_only_the_methods_not_run_again(tmp_path):
    old = [{"method": "ProDAG", "seed": 0, "brier": 9.0},
           {"method": "DAGMA", "seed": 0, "brier": 8.0},
           {"method": "DiBS", "seed": 0, "brier": 7.0}]
    path = tmp_path / "experiment.json"
    path.write_text(json.dumps({"rows": old}))
    new = [{"method": "ProDAG", "seed": 0, "brier": 5.0}]
    assert suite.kept_rows(path, new) == old[1:]
    assert suite.kept_rows(tmp_path / "missing.json", new) == []

"""prodag's benchmarks: the paper's experiments, ProDAG beside the installed peers.

Run from the repository root, as modules of this package:

* ``python -m benchmarks.suite`` (or ``prodag bench``): the experiments of ``suite.EXPERIMENTS``;
* ``python -m benchmarks.report``: ``results/RESULTS.md`` and the README's tables from their JSON;
* ``python -m benchmarks.synthetic``, ``python -m benchmarks.peers``,
  ``python -m benchmarks.projection``: one simulated setting, one peer, the projection methods;
* the questions behind the defaults, each its own script: ``lambda_path`` (where restarts pay),
  ``stability`` (two seeds per dataset), ``units`` (noise models and the data's units),
  ``order_start`` (the search against the model, by starting at the true order),
  ``knowledge`` (forbidden and required edges, tiers) and ``interventions`` (known targets).

Modules: ``suite`` (experiments, summaries, figures) uses ``synthetic``, ``sachs`` and
``munin`` (the runners), which use ``methods`` (fitting the methods on one dataset, peers from
``peers``) and ``checkpoint`` (the finished fits of a run). What the runs found is in
``docs/findings.md``.
"""

from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
"""Where the benchmarks write their JSON, markdown and figures."""

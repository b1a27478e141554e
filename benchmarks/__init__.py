"""prodag's benchmarks: the paper's experiments (``suite``) and one-question studies (``studies``).

Run from the repository root, as modules of this package:

* ``prodag bench`` (or ``python -m benchmarks.suite``): the experiments of the paper's tables,
  ``suite.EXPERIMENTS``; ``python -m benchmarks.suite.report`` regenerates
  ``results/RESULTS.md`` and the tables of ``docs/benchmarks.md`` from their JSON;
  ``python -m benchmarks.suite.synthetic`` and ``python -m benchmarks.suite.peers`` run one
  simulated setting or one peer;
* ``python -m benchmarks.studies.NAME``: the questions behind the defaults, one a module
  (``benchmarks/README.md`` lists them); ``reference_sampler`` is the exact-posterior sampler
  that ``studies.reference`` and the tests compare with.

``suite`` (experiments, summaries, figures) uses ``synthetic``, ``sachs`` and ``munin`` (the
runners), which use ``methods`` (fitting the methods on one dataset, peers from ``peers``),
``jobs`` (in this process or as Ray tasks) and ``checkpoint`` (the finished fits of a run).
"""

from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
"""Where the benchmarks write their JSON, markdown and figures."""

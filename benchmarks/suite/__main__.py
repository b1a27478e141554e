"""``python -m benchmarks.suite``: the suite's command line (``prodag bench`` is the same)."""

from benchmarks.suite import main

main()

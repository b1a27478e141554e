"""Studies: one question each about prodag's defaults, outside the paper's tables.

Each module is a script, ``python -m benchmarks.studies.NAME --help``, that prints a table
and writes its rows into ``benchmarks/results/`` (the naming rule is in
``benchmarks/README.md``); what they found is in ``docs/findings.md``.
"""

"""``python -m prodag.cli``: the ``prodag`` command."""

from prodag.cli.application import main

main()

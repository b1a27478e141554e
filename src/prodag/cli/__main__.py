"""``python -m prodag.cli``: the ``prodag`` command."""

from prodag.cli import main

main()

"""The ``prodag`` command: fit a posterior over DAGs to a CSV file, run the Sachs demo,
simulate data, score a posterior against a known graph, estimate causal effects from a
posterior, and run the benchmark suite.

One module per command (``fit``, ``demo``, ``simulate``, ``evaluate``, ``effects``,
``bench``); shared options and the API's defaults in ``options``, files in ``files``,
results out in ``results``, terminal tables in ``tables``, the one error handler in
``errors``, the application in ``application``. Every command reports a bad file or value as
one red ``Error: ...`` line with exit code 2 (never a traceback), and Ctrl-C as one line with
exit code 130 (``interrupts``).
"""

__all__ = ["app", "main"]


def main() -> None:
    """The console script: Ctrl-C handling first (``interrupts.install``, before JAX and
    numba are imported), then the application; once it returns, Ctrl-C is ignored through
    the shut-down (``interrupts.finish``)."""
    from prodag.cli import interrupts

    interrupts.install()
    try:
        from prodag.cli import application

        application.main()
    finally:
        interrupts.finish()


def __getattr__(name):
    if name == "app":
        from prodag.cli.application import app

        return app
    raise AttributeError(f"module 'prodag.cli' has no attribute {name!r}")

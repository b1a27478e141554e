"""Tools to judge a fit, outside the pipeline: simulated data (``simulate``), scores against a
true graph (``metrics``), the bundled data sets (``datasets``, files in ``prodag/data/``) and
figures (``plotting``). They build on the library (``simulate`` on ``inputs`` and
``inference``); no package of the pipeline imports them. Each module is imported on its own
(``from prodag.evaluation import metrics``), and ``prodag`` exports them as
``prodag.simulate``, ``prodag.metrics``, ``prodag.datasets`` and ``prodag.plotting``.

The graph utilities stay in ``prodag.graph``: the causal effects (``prodag.effects``) use its
path counts."""

"""After the fits: the fitted-posterior value (``fitted``) and its draws (``samples``), the
pooled mixture, the chains' agreement, the SMC populations' agreement, negligible edges and
what orients the edges: functions of that value or of its parts, never of the estimator."""

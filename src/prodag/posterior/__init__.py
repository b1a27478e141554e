"""After the fits: the pooled mixture, the chains' agreement, the posterior's own draws
(refinement or tempered SMC) and what orients their edges."""

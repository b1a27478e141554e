"""``ProDAG``: the scikit-learn-style front door to projected variational DAG learning.

Typical use::

    est = ProDAG(seed=0).fit(X)          # X: (n, p) array or DataFrame
    est.sample(1000)                     # (1000, p, p) exact DAGs
    est.sample_batches(1000)             # the same draws, 100 at a time (large p)
    est.edge_probabilities()             # (p, p)

Every column is centred (``standardize=True``: also divided by its standard deviation).
Returned weights (``sample``, ``to_networkx``) are in the data's units as given.

Fit steps: ``prodag.fit``; settings: ``prodag.config.parameters``, resolved once into
``prodag.config.spec.FitSpec``; the fit's result: ``prodag.posterior.fitted.FittedPosterior``;
files: ``prodag.io.persistence``.
"""

from __future__ import annotations

from operator import attrgetter

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from prodag import effects
from prodag.config import parameters
from prodag.config.parameters import NetworkOptions, TrainingOptions  # noqa: F401  (documented)
from prodag.config.protocol import ParameterProtocol
from prodag.fit import prepare, run as run_fit
from prodag.inference.draws import EdgeSummary, edge_graph, edge_summary
from prodag.inputs import interventions as interventions_module, validation
from prodag.inputs.checks import check_probability
from prodag.inputs.units import column_sd, in_units
from prodag.io import persistence
from prodag.posterior import chains, samples
from prodag.posterior.fitted import FittedPosterior
from prodag.progress import Progress


class NotFittedError(ValueError, AttributeError):
    """The estimator has not been fitted yet: call ``fit(X)`` first (or ``ProDAG.load``)."""


def fitted_attribute(read) -> property:
    """A read-only fitted attribute: ``read(posterior_)`` (``NotFittedError`` before a fit)."""
    return property(lambda estimator: read(estimator._fitted()))


class ProDAG(ParameterProtocol):
    """Bayesian DAG structure learning with projected variational inference.

    Parameters
    ----------
    sem : {"linear", "mlp", "additive"}
        Structural equation model: linear-Gaussian; one MLP per node (the paper's, shaped by
        ``network``); or additive piecewise-linear, a strength per edge.
    lam : "auto", float or math.inf
        ℓ1 radius of the projection: ``"auto"`` chooses it on a grid
        (``inference.radius_selection``), a positive number fixes it, ``math.inf`` turns the
        ℓ1 step off.
    n_samples : int or None
        Monte Carlo samples ``L`` of the graph per training step; ``None``: resolved for p
        (``prodag.config.spec.resolved_n_samples``: 100 up to p = 14, 50 from p = 20).
    max_epochs : int
        The most epochs of every fit (each may stop earlier: ``TrainingOptions.patience``).
    lr : float or None
        Adam's learning rate; ``None``: 0.03 for the linear SEM (its data starts keep their
        own modes), 0.1 for it on candidate parents (its fits stop sooner, with a lower
        E-SHD at p = 100: ``prodag.config.starts.SCREENED_LR``), 0.1 (the paper's) otherwise.
    prior_std : float
        Standard deviation of the Gaussian prior on every weight of ``ω̃``.
    noise_variance : "auto", "equal", "estimate", "quietest", float or array of shape (p,)
        ``"equal"``: one learned variance for all; ``"quietest"``: all fixed at the quietest
        column's variance; both divide the data by one common scale (a common change of unit
        leaves the posterior unchanged). ``"auto"``: ``"quietest"`` for the additive SEM,
        ``"equal"`` otherwise. ``"estimate"``: one learned variance per variable; a number or
        array fixes them in the data's units (the paper: 1.0).
    likelihood : {"gaussian", "student"}
        The noise distribution: Gaussian (the paper's), or Student-t with 4 degrees of
        freedom, whose heavy tails keep a few gross outliers from bending the fit.
    projection : {"auto", "exact", "search", "path"}
        Method of ``prodag.project`` for the acyclicity step.
    prune : float
        After projecting, zero the entries with ``|W| ≤ prune`` (the paper's code: 0.1).
    n_chains : int
        Independent chains (``posterior.chains``), pooled by evidence; their disagreement per
        edge is ``diagnostics_`` and edges beyond 0.3 are warned about.
    bootstrap : bool
        BayesBag: every chain fits its own bootstrap resample and the chains share the
        posterior equally (for large data the model misfits, such as Sachs).
    standardize : bool
        Divide every centred column by its standard deviation before fitting.
    forbidden, required : edges, DataFrame, path or None
        Edges no posterior sample contains / every sample contains: ``(source, target)``
        pairs of names or indices, a DataFrame with columns ``source`` and ``target``, or a
        CSV path (``prodag.inputs.knowledge``); enforced exactly in training and sampling.
    tiers : list of groups, path, prodag.inputs.knowledge.Tiers or None
        Ordered groups of variables: no edge from a later tier to an earlier one;
        ``Tiers(groups, forbid_within=True)`` also forbids edges inside a tier.
    seed : int or None
        Seeds the split, the optimiser's noise and the default sampling key; ``None``: one
        drawn at fit time, kept in ``seed_`` (a fitted model is always reproducible).
    progress : bool
        Show one progress bar for the whole fit, naming the stage that runs.
    training : prodag.config.parameters.TrainingOptions or None
        Early stopping, prior mean, λ grid and criterion, starts, restarts (None: defaults).
    network : prodag.config.parameters.NetworkOptions or None
        The MLP's hidden units, layers, activation and biases (``None``: ``NetworkOptions()``).

    Attributes
    ----------
    posterior_ : prodag.posterior.fitted.FittedPosterior
        Everything the fit produced, one immutable value; the attributes below read from it.
    components_, mixture_weights_, component_lams_ : list of Params, ndarray (K,), ndarray (K,)
        The posterior's mixture components (largest weight first), their weights ∝ exp(ELBO)
        (bagged: equal per chain) and radii.
    params_, lam_, lambda_path_ : Params, float, dict or None
        The first component, its radius and its chain's λ grid with scores (None: fixed λ).
    diagnostics_ : dict
        The chains' agreement (``posterior.chains.diagnose``), with ``"populations"``: the SMC's;
        what orients the edges: "sortability".
    fit_seconds_ : dict
        Seconds of each stage of the last ``fit`` (order search, each batch, pooling, ...).
    fit_epochs_ : dict
        For each stage of the last ``fit`` that fitted members: ``{"per_fit": [...],
        "computed": int}``, the epochs each fit ran and the member-epochs its batches computed.
    refined_ : prodag.inference.refinement.Refined or None
        With ``refine_steps`` or ``sampler="smc"``: the draws, which are the posterior (``sample``
        takes them in a random order, with replacement beyond their number), and acceptance.
        On candidate parents the refined ``W̃`` stays on the parents' slots, ``(n, p, K)``
        (``prodag.projection.parents.ParentTable``), not ``(n, p, p)``.
    columns_, n_features_in_, knowledge_ : list of str, int, Knowledge or None
        The variables' names, their number ``p``, and the checked prior knowledge.
    candidate_parents_ : ndarray (p, p) of bool or None
        ``[j, k]``: ``j`` is a candidate parent of ``k`` (``TrainingOptions.candidate_parents``);
        no sample has an edge outside it. None: every variable was a candidate parent.
    spec_ : prodag.config.spec.FitSpec
        Every setting of the fit, resolved once (model, optimiser, noise model, starts).
    history_, objective_ : ndarray, float
        The first component's objective per epoch and its negative ELBO per row.
    n_restarts_, seed_ : int
        The starts per chain and the seed used.
    mean_, scale_, noise_variance_ : ndarray of shape (p,)
        The fit saw ``(X - mean_) / scale_``, with these noise variances (in its units).
    conditions_, condition_means_, intervention_kind_ : list or None, ndarray (G, p) or None, str
        The experimental conditions' labels and means; ``fit``'s ``intervention_kind``.
    """

    def __init__(self, sem="linear", lam="auto", n_samples=None, max_epochs=1000, lr=None,
                 prior_std=1.0, noise_variance="auto", likelihood="gaussian",
                 projection="auto", prune=0.0, n_chains=2, bootstrap=False, standardize=False,
                 forbidden=None, required=None, tiers=None, seed=None, progress=True,
                 training=None, network=None):
        arguments = dict(locals())
        del arguments["self"]
        for name, value in arguments.items():
            setattr(self, name, value)

    def fit(self, X, y=None, X_val=None, interventions=None, conditions=None,
            intervention_kind="do") -> "ProDAG":
        """Learn the posterior from ``X`` (an ``(n, p)`` array or DataFrame); returns ``self``.

        ``y`` is ignored (scikit-learn convention). ``X_val``: held-out rows for choosing λ
        with ``select_by="validation"`` (then no split or refit happens: the paper's
        protocol). ``interventions``: the known targets of each row, a boolean ``(n, p)`` mask
        or one entry per row naming them (``""``, ``"akt"``, ``"pkc;akt"``); an intervened
        variable's equation is left out of that row's likelihood. ``intervention_kind``: what
        an intervened variable passes on to its children (``prodag.inputs.interventions``):
        ``"do"``, its measured value (a perfect intervention); ``"activity"``, nothing that
        varies within the condition (a drug set an unmeasured activity; then every distinct
        set of targets is a condition unless ``conditions`` are given). ``conditions``: one
        label per row; every condition gets its own intercept for every variable.
        """
        parameters.check(self.get_params())
        parameters.rules()["intervention_kind"](intervention_kind)
        prepared = prepare.preprocess(self, X, X_val, interventions, conditions,
                                      intervention_kind)
        spec = prepare.resolve_spec(self, prepared)
        with Progress(None, self.progress) as progress:
            self._keep(run_fit(spec, prepared, progress))
        self.fit_seconds_, self.fit_epochs_ = dict(progress.seconds), dict(progress.epochs)
        if not self.bootstrap:  # bagged chains differ by design: their spread is the data's
            chains.warn_disagreement(self.diagnostics_)
        return self

    def _keep(self, posterior: FittedPosterior) -> None:
        """Hold a fitted posterior (``fit``, ``load``); its fitted attributes read from it."""
        self.posterior_, self._cache = posterior, {}

    def _fitted(self) -> FittedPosterior:
        """The fitted posterior; ``NotFittedError`` before ``fit`` (or ``load``)."""
        if "posterior_" not in vars(self):
            raise NotFittedError("This ProDAG instance is not fitted yet: call fit(X) first "
                                 "(or ProDAG.load(path) for a saved model).")
        return self.posterior_

    components_ = fitted_attribute(attrgetter("components"))
    mixture_weights_ = fitted_attribute(attrgetter("weights"))
    component_lams_ = fitted_attribute(attrgetter("lams"))
    params_ = fitted_attribute(lambda posterior: posterior.components[0])
    lam_ = fitted_attribute(attrgetter("lam"))
    lambda_path_ = fitted_attribute(attrgetter("lambda_path"))
    history_ = fitted_attribute(attrgetter("history"))
    objective_ = fitted_attribute(attrgetter("objective"))
    diagnostics_ = fitted_attribute(attrgetter("diagnostics"))
    refined_ = fitted_attribute(attrgetter("draws"))
    columns_ = fitted_attribute(attrgetter("columns"))
    n_features_in_ = fitted_attribute(attrgetter("p"))
    knowledge_ = fitted_attribute(attrgetter("knowledge"))
    candidate_parents_ = fitted_attribute(attrgetter("candidate_parents"))
    spec_ = fitted_attribute(attrgetter("spec"))
    n_restarts_ = fitted_attribute(lambda posterior: posterior.spec.restarts)
    seed_ = fitted_attribute(attrgetter("seed"))
    mean_ = fitted_attribute(attrgetter("mean"))
    scale_ = fitted_attribute(attrgetter("scale"))
    noise_variance_ = fitted_attribute(attrgetter("noise_variance"))
    conditions_ = fitted_attribute(attrgetter("conditions"))
    condition_means_ = fitted_attribute(attrgetter("condition_means"))
    intervention_kind_ = fitted_attribute(attrgetter("intervention_kind"))

    def sample(self, n: int = 1000, seed=None) -> np.ndarray:
        """``n`` posterior DAG samples ``(n, p, p)`` (``[s, j, k]``: j → k), linear weights and
        additive strengths in data units; ``seed=None`` uses the key fixed at fit time, so
        repeated calls, ``edge_probabilities`` and a reloaded model agree."""
        return self._in_data_units(samples.draw(self._fitted(), n, seed)[1])

    def sample_batches(self, n: int = 1000, seed=None):
        """The samples of ``sample(n, seed)`` as an iterator of blocks ``(b, p, p)``, in order
        (100 draws a block when the fit keeps draws of its own, as the default does): for
        graphs too large to hold ``n`` of them at once (``(1000, p, p)`` is 8 GB at
        p = 1000)."""
        blocks = samples.draw_batches(self._fitted(), n, seed)
        return (self._in_data_units(graphs) for _, graphs in blocks)

    def _in_data_units(self, graphs: np.ndarray) -> np.ndarray:
        """Sampled graphs ``(n, p, p)`` in fitted units, in data units (linear weights and
        additive strengths; the other SEMs' graphs as they are)."""
        if self.sem in ("linear", "additive"):
            graphs = graphs * self.scale_[None, None, :] / self.scale_[None, :, None]
        return graphs

    def sample_weights(self, n: int = 1000, seed=None) -> dict[str, np.ndarray]:
        """The model weights of the same ``n`` draws as ``sample(n, seed)``: a dict of numpy
        arrays with a leading axis ``n``, in preprocessed units."""
        return samples.draw(self._fitted(), n, seed)[0]

    def edge_probabilities(self, n_samples: int = 1000) -> np.ndarray:
        """Posterior probability of every edge j → k, ``(p, p)``: the share of the
        ``sample(n_samples)`` draws with that edge (``prodag.posterior.negligible``), counted a
        block at a time and cached."""
        return self._edge_summary(n_samples).probability.copy()

    def _edge_summary(self, n_samples: int) -> EdgeSummary:
        """The ``EdgeSummary`` of ``sample(n_samples)`` (data units), cached."""
        self._fitted()
        if ("edges", n_samples) not in self._cache:
            self._cache[("edges", n_samples)] = edge_summary(self.sample_batches(n_samples))
        return self._cache[("edges", n_samples)]

    def edge_probabilities_frame(self, n_samples: int = 1000) -> pd.DataFrame:
        """``edge_probabilities`` with variable names (rows: source, columns: target)."""
        return pd.DataFrame(self.edge_probabilities(n_samples), index=self.columns_,
                            columns=self.columns_)

    def to_networkx(self, threshold: float = 0.5, n_samples: int = 1000, units: str = "data"):
        """A ``networkx.DiGraph`` of the edges with P > ``threshold`` (in [0, 1)), with their
        ``probability`` and mean ``weight`` given the edge (data or standardised ``units``)."""
        check_probability("threshold", threshold)
        summary = self._edge_summary(n_samples)
        weights = in_units(summary.mean_weight, column_sd(self.scale_, self.spec_.standardize),
                           units)
        return edge_graph(summary._replace(mean_weight=weights), self.columns_, threshold)

    def predict(self, X, n_samples: int = 100, seed=None, conditions=None) -> np.ndarray:
        """Posterior mean ``(n, p)`` of each variable given the others in data units (for a
        DataFrame, a DataFrame of its columns, by name); with conditions, each row's one."""
        posterior = self._fitted()
        data = validation.check_rows("X", X, self.n_features_in_, self.columns_)
        offsets = interventions_module.condition_offsets(
            posterior.conditions, posterior.condition_means, conditions, len(data))
        weights = jax.tree.map(jnp.asarray, samples.draw(posterior, n_samples, seed)[0])
        Z = jnp.asarray((data - offsets - self.mean_) / self.scale_, self.spec_.dtype)
        with jax.default_matmul_precision("highest"):  # no TF32 on a GPU (prodag.xla)
            mean = np.asarray(jnp.mean(self.spec_.config.model().predict_mean(weights, Z),
                                       axis=0))
        return validation.as_given(X, mean * self.scale_ + self.mean_ + offsets, self.columns_)

    def total_effects(self, n: int = 1000, seed=None, **options) -> np.ndarray:
        """``(n, p, p)`` draws of every total effect (``[l, j, k]``: change of E[x_k] per unit
        of x_j under do(x_j)), in data units or ``units="standardized"`` (``prodag.effects``)."""
        return effects.total_effects(self._fitted(), n, seed, **options)

    def effect(self, cause, effect, n: int = 1000, level: float = 0.9, seed=None,
               **options) -> "effects.EffectSummary":
        """The posterior of the total effect of ``cause`` on ``effect`` (names or indices):
        mean, sd, ``level`` credible interval, P(effect ≠ 0), P(effect > 0)."""
        return effects.effect(self._fitted(), cause, effect, n, level, seed, **options)

    def intervene(self, do: dict, n: int = 1000, seed=None, condition=None):
        """``n`` draws ``(n, p)`` of every variable under ``do={variable: value}`` (data
        units), a DataFrame when the fit had column names (``prodag.effects.intervene``)."""
        return effects.intervene(self._fitted(), do, n, seed, condition)

    def save(self, path) -> None:
        """Save the fitted model to ``path`` (one ``.npz``: arrays + JSON metadata, no pickle)."""
        persistence.save(self._fitted(), self.get_params(), path)

    @classmethod
    def load(cls, path) -> "ProDAG":
        """Load a model written by ``save``; it samples exactly as the saved one did. Anything
        else raises ``prodag.io.model_file.ModelFileError`` (a ``ValueError``)."""
        estimator, posterior = persistence.load(cls, path)
        estimator._keep(posterior)
        return estimator


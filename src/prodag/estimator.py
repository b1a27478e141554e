"""``ProDAG``: the scikit-learn-style front door to projected variational DAG learning.

Typical use::

    est = ProDAG(seed=0).fit(X)          # X: (n, p) array or DataFrame
    est.sample(1000)                     # (1000, p, p) exact DAGs
    est.edge_probabilities()             # (p, p)

Preprocessing: every column is centred; with ``standardize=True`` it is also divided by its
standard deviation. Returned weights (``sample``, ``to_networkx``) are in the units of the data
as given (for the linear SEM a standardised weight ``w_jk`` is rescaled by ``s_k / s_j``).

The parts live elsewhere: the λ path in ``prodag.selection``, fitting one radius with restarts
in ``prodag.fitting``, the data start in ``prodag.initialization``, saving and loading in
``prodag.persistence``.
"""

from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from prodag import chains, effects, fitting, mixture, persistence, procedure, selection, validation
from prodag import interventions as interventions_module
from prodag.parameters import ParameterProtocol
from prodag.inference import Progress, TrainingOptions
from prodag.initialization import n_searched_graphs
from prodag.metrics import edge_probabilities
from prodag.models import LIKELIHOODS, SEM_NAMES
from prodag.posterior import mean_weight_given_edge
from prodag.projection import METHODS

INITS = ("auto", "prior", "data")
LINEAR_LR = 0.03
PAPER_LR = 0.1
NOISE_MODELS = ("equal", "estimate")
"""The learned noise variances: one shared by every variable, or one per variable."""
SAMPLE_STREAM = 2 ** 20
"""``fold_in`` index of the default sampling key: ``sample``, ``sample_weights`` and
``edge_probabilities`` without a seed draw from ``fold_in(PRNGKey(seed_), SAMPLE_STREAM)``."""


class NotFittedError(ValueError, AttributeError):
    """The estimator has not been fitted yet: call ``fit(X)`` first (or ``ProDAG.load``)."""


class ProDAG(ParameterProtocol):
    """Bayesian DAG structure learning with projected variational inference.

    Parameters
    ----------
    sem : {"linear", "mlp", "additive"}
        Structural equation model: linear-Gaussian; one MLP per node (the paper's nonlinear
        model: ``hidden_units``, ``hidden_layers``, ``activation``, ``bias`` apply to it only;
        only the first layer is projected); or the additive piecewise-linear model
        ``x_k = Σ_j W_jk (u_jk1 x_j + u_jk2 |x_j|) + b_k + ε_k`` (``‖u_jk‖ = 1``) whose graph
        is the strength matrix ``W`` (``prodag.models.additive``; it found the MLP
        simulator's graphs better than the MLP did, ``docs/findings.md``).
    hidden_units, hidden_layers : int
        Width ``d`` and depth of each node's network (the paper: 10 units, one layer;
        narrower networks learned the graph better in the benchmarks, ``docs/findings.md``).
    activation : str
        Hidden-layer activation, a key of ``prodag.models.mlp.ACTIVATIONS``.
    bias : bool
        Give the hidden and output layers biases (the simulator's networks have none).
    mlp_edges : {"group_norm", "strength"}
        How the MLP's first layer carries the graph: the group norms of its weights (the
        paper), or a scalar strength per edge times a learned unit direction
        (``prodag.models.mlp.MLPSEM``).
    likelihood : {"gaussian", "student"}
        The noise distribution: Gaussian (the paper), or Student-t with 4 degrees of freedom
        (``prodag.models.robust``), whose heavy tails keep a few gross outliers from bending
        the fit; ``noise_variance`` is then its squared scale. Student-t needs every row's
        residuals, so a step costs ``O(L n p²)`` instead of ``O(L p³)``.
    lam : float, inf or None
        ℓ1 radius of the projection; ``inf`` turns the ℓ1 step off; ``None`` selects it on the
        path of ``prodag.selection`` by ``select_by``. (The paper's exponential prior on λ is
        available at the distribution level: ``ProjectedNormal`` takes per-sample radii.)
    n_samples : int
        Monte Carlo samples ``L`` of the graph per optimisation step.
    max_epochs, patience, lr, steps_per_epoch, min_delta :
        Adam learning rate and early stopping: an epoch is ``steps_per_epoch`` full-batch steps;
        stop after ``patience`` epochs whose mean objective (per row) does not improve on the
        best by more than ``min_delta``, or after ``max_epochs`` (see ``prodag.inference``).
        ``lr=None``: 0.03 for the linear SEM, 0.1 (the paper's) for the others.
    prior_mean, prior_std : float
        Independent Gaussian prior ``N(prior_mean, prior_std²)`` on every weight of ``ω̃``.
    noise_variance : "equal", "estimate", float or array of shape (p,)
        The noise model. ``"equal"`` (default) learns one variance shared by every variable;
        the data are then divided by one common scale (``prodag.preprocessing``), so a common
        change of unit or origin of the data leaves the posterior unchanged. ``"estimate"``
        learns one variance per variable (with ``standardize=True``: invariant to every
        column's unit, but only the equivalence class is identifiable). A number or array
        fixes the variances in the data's own units (the paper: 1.0). Learned variances start
        at ``prodag.initialization.noise_variance_start``.
    projection : {"auto", "exact", "search", "path"}
        Method of ``prodag.project`` for the acyclicity step.
    prune : float
        After projecting, zero the entries with ``|W| ≤ prune`` (the paper's algorithm uses
        0.1; 0, the default, scored better with the exact and search projections).
    n_lambdas : int
        Size of the λ grid when ``lam=None``.
    select_by : {"elbo", "validation"}
        How ``lam=None`` picks a radius: the highest ELBO on all rows (default), or the best
        expected log-likelihood of held-out rows (the paper's protocol: ``X_val`` if given,
        else ``validation_fraction`` of the rows, then a refit on all rows).
    validation_fraction : float
        Share of rows held out for ``select_by="validation"`` when no ``X_val`` is given.
    init : {"auto", "prior", "data"}
        Where the first fit of every radius starts: ``"prior"`` (the paper), or ``"data"``:
        means from ridge regressions along the top-down equal-variance order of the data
        (``prodag.initialization``), σ = 0.1. The linear SEM has a second such start, along
        the order of a BIC search over orders (``prodag.order_search``); with
        ``noise_variance="estimate"`` it has only a start along the scale-free search's
        order. The additive SEM's second start is regressed on its own features
        ``(x_j, |x_j|)``. ``"auto"``: ``"data"`` for the linear and additive SEMs.
    n_restarts : int or None
        Starts of the kept radius. The linear SEM's two data starts take them in turn; other
        fits alternate between ``init`` (first, third, …; the additive SEM's two data starts
        in turn) and the prior. The posterior mixes the fits by their ELBO
        (``prodag.mixture``). With ``lam=None`` the λ = ∞ fit and the radii are fitted from
        the first start, and only the two best radii from every start
        (``prodag.selection``). ``None``: 2 for the linear SEM with its two data starts, 3
        for the other linear and additive fits (their ELBOs have local optima, roughly one
        per order), 1 for the MLP (more starts did not score better).
    n_chains : int
        Independent chains (``prodag.chains``): complete fits, each with its own key and its
        own first start, pooled into the posterior by evidence. Their disagreement per edge is
        ``diagnostics_``, and a ``ChainDisagreementWarning`` names the edges where chains
        differ by more than 0.3.
    bootstrap : bool
        BayesBag (Huggins & Miller, 2023): every chain fits its own bootstrap resample of the
        rows and the chains share the posterior equally, so no single optimum of a
        misspecified model takes all the mass (large real data such as Sachs). The chains'
        spread is then the data's sampling variability: it is reported, not warned about.
    forbidden, required : edges, DataFrame, path or None
        Edges no posterior sample contains / every sample contains: ``(source, target)``
        pairs of column names or indices, a DataFrame with columns ``source`` and ``target``,
        or the path of such a CSV file (``prodag.knowledge``). Enforced exactly in training and
        sampling; required weights are not shrunk by the ℓ1 ball, and λ bounds the others.
    tiers : list of groups, path or None
        Ordered groups of variables: no edge from a later tier to an earlier one (a CSV path
        with columns ``variable`` and ``tier`` also works).
    forbid_within_tiers : bool
        Also forbid edges between variables of the same tier.
    intervention_kind : {"do", "activity"}
        What an intervened variable passes on to its children (``prodag.interventions``):
        ``"do"``, its measured value (a perfect intervention, as the simulator makes);
        ``"activity"``, nothing that varies within the condition (the intervention set an
        unmeasured activity, as a drug does; the measured value is a read-out). With
        ``"activity"``, every distinct set of targets is a condition unless ``conditions``
        are given to ``fit``.
    mix_radii : bool
        With ``lam=None`` and ``select_by="elbo"``, the posterior mixes every fit of the λ
        path (each with its radius), not only the starts at the chosen radius; the weights
        are ∝ exp(ELBO) either way (``prodag.mixture``).
    standardize : bool
        Divide every (centred) column by its standard deviation before fitting (off by
        default: a unit noise variance does not match standardised data).
    seed : int or None
        Seeds the split, the optimiser's noise and the default sampling key; ``None`` draws a
        seed at fit time (kept in ``seed_``), so a fitted model is always reproducible.
    progress : bool
        Show one progress bar for the whole fit, naming the stage that runs.

    Attributes
    ----------
    components_ : list of prodag.inference.Params
        The posterior's mixture components (numpy arrays), largest weight first: the fits of
        every chain whose evidence comes within 30 nats of the best (``prodag.chains``).
    mixture_weights_ : ndarray of shape (K,)
        The components' weights, ∝ exp(ELBO) (bagged: equal per chain).
    component_lams_ : ndarray of shape (K,)
        Each component's ℓ1 radius.
    params_, lam_ : Params, float
        The first component and its radius.
    lambda_path_ : dict or None
        The λ grid and its scores of the first component's chain (None for a fixed ``lam``).
    diagnostics_ : dict
        The chains' agreement (``prodag.chains.diagnose``): largest and mean difference of an
        edge probability between chains, the edges beyond 0.3, each chain's best ELBO.
    columns_, n_features_in_ : list of str, int
        The variables' names and their number ``p``.
    knowledge_ : prodag.knowledge.Knowledge or None
        The checked prior knowledge.
    history_, objective_ : ndarray, float
        The first component's objective per epoch and its negative ELBO per row.
    n_restarts_, seed_ : int
        The starts per chain and the seed used.
    mean_, scale_ : ndarray of shape (p,)
        The fit saw ``(X - mean_) / scale_``.
    noise_variance_ : ndarray of shape (p,)
        The noise variances in the units of ``(X - mean_) / scale_``.
    conditions_, condition_means_ : list or None, ndarray of shape (G, p) or None
        The experimental conditions' labels and means.
    """

    def __init__(self, sem="linear", lam=None, n_samples=100, max_epochs=1000, patience=5,
                 lr=None, prior_mean=0.0, prior_std=1.0, noise_variance="equal", hidden_units=10,
                 hidden_layers=1, activation="relu", bias=True, mlp_edges="group_norm",
                 likelihood="gaussian",
                 projection="auto", prune=0.0,
                 n_lambdas=10, select_by="elbo", init="auto", n_restarts=None, n_chains=2, bootstrap=False,
                 validation_fraction=selection.VALIDATION_FRACTION,
                 steps_per_epoch=10, min_delta=1e-3, forbidden=None, required=None,
                 tiers=None, forbid_within_tiers=False, intervention_kind="do",
                 mix_radii=True, standardize=False, seed=None, progress=True):
        arguments = dict(locals())
        del arguments["self"]
        for name, value in arguments.items():
            setattr(self, name, value)

    # ---- fitting ------------------------------------------------------------------------

    def fit(self, X, y=None, X_val=None, interventions=None, conditions=None) -> "ProDAG":
        """Learn the posterior from ``X`` (an ``(n, p)`` array or DataFrame); returns ``self``.

        ``y`` is ignored (scikit-learn convention). ``X_val``: optional held-out rows with the
        same columns for choosing λ with ``select_by="validation"``; then every row of ``X`` is
        used for training and no split or refit happens (the paper's protocol). Other settings
        do not use ``X_val`` and warn when it is given. ``interventions``: the known targets of
        each row, a boolean ``(n, p)`` mask or one entry per row naming them (``""``,
        ``"akt"``, ``"pkc;akt"``); an intervened variable's equation is left out of that
        row's likelihood (``prodag.interventions``; ``intervention_kind`` says what it passes on
        to its children). ``conditions``: one label per row naming its experimental condition;
        every condition gets its own intercept for every variable (the data are centred
        within each condition), so a condition's shift of the baselines is not read as edges.
        """
        self._check_params()
        prepared = procedure.preprocess(self, X, X_val, interventions, conditions)
        (self.columns_, self.mean_, self.scale_, self.conditions_, self.condition_means_,
         self.knowledge_, self.seed_) = (prepared.columns, prepared.mean, prepared.scale,
                                         prepared.conditions, prepared.condition_means,
                                         prepared.knowledge, prepared.seed)
        self.n_features_in_ = len(prepared.columns)
        with Progress(None, self.progress) as progress:
            progress.stage("data starts (order search)")
            the_plan = procedure.plan(self, prepared, self._config(), self._training_options(),
                                      self._dtype())
            progress.set_total(the_plan.n_fits)
            key = jax.random.PRNGKey(self.seed_)
            runs = [procedure.run_chain(self, the_plan, c, prepared.noise,
                                        jax.random.fold_in(key, c), progress)
                    for c in range(self.n_chains)]
            progress.stage("pooling the fits")
            posterior = procedure.pool(the_plan, runs, prepared, key, self._dtype())
        self._store(posterior, prepared.noise, the_plan.restarts)
        if not self.bootstrap:  # bagged chains differ by design: their spread is the data's
            chains.warn_disagreement(self.diagnostics_)
        return self

    def _store(self, posterior: procedure.Posterior, noise: np.ndarray, restarts: int) -> None:
        """Set the posterior's fitted attributes (the class docstring lists them)."""
        self.components_, self.mixture_weights_ = posterior.components, posterior.weights
        self.component_lams_, self.lambda_path_ = posterior.lams, posterior.lambda_path
        self.params_, self.lam_ = self.components_[0], float(self.component_lams_[0])
        self.history_, self.objective_ = posterior.history, posterior.objective
        self.diagnostics_, self.n_restarts_ = posterior.diagnostics, restarts
        learned = self.params_.log_noise_variance
        self.noise_variance_ = (noise if learned is None else
                                np.broadcast_to(np.exp(learned), (self.n_features_in_,)).copy())
        self._cache = {}

    def _check_params(self) -> None:
        for name, choices in (("sem", SEM_NAMES), ("projection", METHODS),
                              ("select_by", selection.CRITERIA), ("init", INITS)):
            validation.check_choice(name, getattr(self, name), choices)
        validation.check_choice("likelihood", self.likelihood, LIKELIHOODS)
        validation.check_choice("intervention_kind", self.intervention_kind,
                                interventions_module.INTERVENTION_KINDS)
        if self.sem == "mlp":
            from prodag.models.mlp import EDGE_MODELS

            validation.check_choice("mlp_edges", self.mlp_edges, EDGE_MODELS)
            if self.init == "data" and self.mlp_edges == "strength":
                raise ValueError("init='data' starts the paper's first layer "
                                 "(mlp_edges='group_norm'); use init='prior' with "
                                 "mlp_edges='strength'.")
        if self.init == "data" and self.sem == "mlp" and (self.activation != "relu"
                                                           or self.hidden_units < 2):
            raise ValueError("init='data' starts each network as the linear start with ReLU "
                             "units in +/- pairs: it needs activation='relu' and "
                             "hidden_units >= 2; use init='prior' for this network.")
        if isinstance(self.lam, str):
            raise ValueError(f"lam must be None, a positive number or inf; got {self.lam!r}.")
        if self.lam is not None:
            validation.check_positive("lam", self.lam, allow_inf=True)
        for name in ("n_samples", "max_epochs", "patience", "steps_per_epoch", "n_lambdas"):
            validation.check_integer(name, getattr(self, name), minimum=1)
        if self.seed is not None:
            validation.check_seed(self.seed)
        if self.n_restarts is not None:
            validation.check_integer("n_restarts", self.n_restarts, minimum=1)
        validation.check_integer("n_chains", self.n_chains, minimum=1)
        if self.bootstrap and self.select_by == "validation":
            raise ValueError("bootstrap=True fits every chain on its own resample of the rows "
                             "and chooses lam by the ELBO; use select_by='elbo' with it.")
        if self.lr is not None:
            validation.check_positive("lr", self.lr)
        for name in ("prior_std", "prune", "min_delta"):
            validation.check_positive(name, getattr(self, name),
                                      allow_zero=name in ("prune", "min_delta"))
        if isinstance(self.prior_mean, bool) or not np.isfinite(float(self.prior_mean)):
            raise ValueError(f"prior_mean must be a finite number, got {self.prior_mean!r}.")
        fraction = validation.check_positive("validation_fraction", self.validation_fraction)
        if fraction >= 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}.")
        if isinstance(self.noise_variance, str) and self.noise_variance not in NOISE_MODELS:
            raise ValueError(f"noise_variance must be a positive number, an array of one "
                             f"positive number per variable, 'equal' or 'estimate'; got "
                             f"{self.noise_variance!r}.")
        if self.sem == "mlp":
            validation.check_integer("hidden_units", self.hidden_units, minimum=1)
            validation.check_integer("hidden_layers", self.hidden_layers, minimum=1)

    def _dtype(self):
        return jax.dtypes.canonicalize_dtype(np.float64)

    def _config(self) -> fitting.ModelConfig:
        return fitting.ModelConfig.create(self.sem, self.hidden_units, self.hidden_layers,
                                          self.activation, self.bias, self.projection,
                                          self.prune, getattr(self, "knowledge_", None),
                                          self.mlp_edges, self.likelihood)

    def _training_options(self) -> TrainingOptions:
        return TrainingOptions(n_samples=self.n_samples, max_epochs=self.max_epochs,
                               patience=self.patience, lr=self._resolved_lr(),
                               steps_per_epoch=self.steps_per_epoch,
                               min_delta=float(self.min_delta))

    def _resolved_restarts(self, p: int | None = None) -> int:
        """``n_restarts`` with ``None`` resolved: 1 for the MLP; for the linear SEM started
        from the data with known or equal noise variances, one fit per data start (the
        top-down order and ``initialization.n_searched_graphs(p)`` searched ones); 3
        otherwise."""
        if self.n_restarts is None:
            if self.sem == "mlp":
                return 1
            per_variable = (isinstance(self.noise_variance, str)
                            and self.noise_variance == "estimate")
            two_orders = fitting.takes_two_orders(self.sem, self._resolved_init() == "data",
                                                  per_variable)
            p = self.n_features_in_ if p is None else p
            return 1 + n_searched_graphs(p) if two_orders else 3
        return int(self.n_restarts)

    def _resolved_lr(self) -> float:
        """``lr`` with ``None`` resolved: 0.03 for the linear SEM, whose many data starts
        each keep their own mode at that rate whatever the key; 0.1 (the paper's) otherwise."""
        if self.lr is None:
            return LINEAR_LR if self.sem == "linear" else PAPER_LR
        return float(self.lr)

    def _resolved_init(self) -> str:
        """``init`` with ``"auto"`` resolved: the data start but for the MLP."""
        if self.init == "auto":
            return "prior" if self.sem == "mlp" else "data"
        return self.init

    # ---- the fitted posterior -----------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise NotFittedError("This ProDAG instance is not fitted yet: call fit(X) first "
                                 "(or ProDAG.load(path) for a saved model).")

    def _draw(self, n: int, seed) -> tuple[dict, np.ndarray]:
        self._check_fitted()
        n = validation.check_integer("n", n, minimum=1)
        key = (jax.random.fold_in(jax.random.PRNGKey(self.seed_), SAMPLE_STREAM) if seed is None
               else jax.random.PRNGKey(validation.check_seed(seed)))
        sampler = fitting.sampler(self._config())

        def sample(k, key, m):
            return sampler.sample(jax.tree.map(jnp.asarray, self.components_[k]), key, m,
                                  self.component_lams_[k])

        return mixture.sample_mixture(sample, list(range(len(self.components_))),
                                      self.mixture_weights_, key, n)

    def sample(self, n: int = 1000, seed=None) -> np.ndarray:
        """``n`` posterior DAG samples, a ``(n, p, p)`` numpy array (``[s, j, k]``: j → k).

        ``seed=None`` uses the key fixed at fit time (``SAMPLE_STREAM``), so repeated calls
        agree, and so do ``edge_probabilities`` and a reloaded model. Linear weights (and the
        additive SEM's strengths) are in data units.
        """
        graphs = self._draw(n, seed)[1]
        if self.sem in ("linear", "additive"):
            graphs = graphs * self.scale_[None, None, :] / self.scale_[None, :, None]
        return graphs

    def sample_weights(self, n: int = 1000, seed=None) -> dict[str, np.ndarray]:
        """The model weights of the same ``n`` draws as ``sample(n, seed)``: a dict of numpy
        arrays with a leading axis ``n``, in preprocessed units."""
        return self._draw(n, seed)[0]

    def edge_probabilities(self, n_samples: int = 1000) -> np.ndarray:
        """Posterior probability of every edge j → k, a ``(p, p)`` array: the share of the
        ``sample(n_samples)`` draws with that edge (cached per size)."""
        return edge_probabilities(self._cached_graphs(n_samples))

    def _cached_graphs(self, n_samples: int) -> np.ndarray:
        self._check_fitted()
        if ("graphs", n_samples) not in self._cache:
            self._cache[("graphs", n_samples)] = self.sample(n_samples)
        return self._cache[("graphs", n_samples)]

    def edge_probabilities_frame(self, n_samples: int = 1000) -> pd.DataFrame:
        """``edge_probabilities`` with variable names (rows: source, columns: target)."""
        return pd.DataFrame(self.edge_probabilities(n_samples), index=self.columns_,
                            columns=self.columns_)

    def to_networkx(self, threshold: float = 0.5, n_samples: int = 1000):
        """A ``networkx.DiGraph`` of the edges with probability > ``threshold`` (in [0, 1)).

        Nodes are the column names; edges carry ``probability`` and ``weight`` (the posterior
        mean weight given that the edge is present).
        """
        import networkx as nx

        validation.check_probability("threshold", threshold)
        graphs = self._cached_graphs(n_samples)
        probabilities = edge_probabilities(graphs)
        weights = mean_weight_given_edge(graphs)
        graph = nx.DiGraph()
        graph.add_nodes_from(self.columns_)
        for j, k in zip(*np.nonzero(probabilities > threshold)):
            graph.add_edge(self.columns_[j], self.columns_[k],
                           probability=float(probabilities[j, k]), weight=float(weights[j, k]))
        return graph

    def predict(self, X, n_samples: int = 100, seed=None, conditions=None) -> np.ndarray:
        """Posterior mean of each variable given the others, ``(n, p)``, in data units.

        A model fitted with conditions needs each row's condition (one of ``conditions_``):
        its intercepts are those of that condition."""
        self._check_fitted()
        data = validation.check_rows("X", X, self.n_features_in_, self.columns_)
        offsets = self._condition_offsets(conditions, len(data))
        weights = jax.tree.map(jnp.asarray, self._draw(n_samples, seed)[0])
        Z = jnp.asarray((data - offsets - self.mean_) / self.scale_, self._dtype())
        mean = np.asarray(jnp.mean(self._config().model().predict_mean(weights, Z), axis=0))
        return mean * self.scale_ + self.mean_ + offsets

    def _condition_offsets(self, conditions, n: int) -> np.ndarray | float:
        """The fitted condition means of each of ``n`` rows ``(n, p)`` (0 without conditions)."""
        if self.conditions_ is None:
            if conditions is not None:
                raise ValueError("this model was fitted without conditions; predict takes "
                                 "none.")
            return 0.0
        if conditions is None:
            raise ValueError("this model was fitted with one intercept per condition: give "
                             "predict each row's condition, one of "
                             f"{', '.join(map(repr, self.conditions_))}.")
        labels = interventions_module.label_strings(conditions)
        unknown = sorted(set(labels) - set(self.conditions_))
        if len(labels) != n or unknown:
            raise ValueError(f"conditions must name one fitted condition per row ({n} rows; "
                             f"fitted: {', '.join(map(repr, self.conditions_))}); got "
                             f"{len(labels)} labels" + (f", unknown {unknown}" if unknown else ""))
        return self.condition_means_[[self.conditions_.index(label) for label in labels]]

    # ---- causal effects (prodag.effects) ------------------------------------------------

    def total_effects(self, n: int = 1000, seed=None, **options) -> np.ndarray:
        """``(n, p, p)`` draws of the total effect of every variable on every other in data
        units (``[l, j, k]``: change of E[x_k] per unit of x_j under do(x_j)); ``options`` of
        ``prodag.effects.total_effects`` (the nonlinear SEMs' simulation)."""
        self._check_fitted()
        return effects.total_effects(self, n, seed, **options)

    def effect(self, cause, effect, n: int = 1000, level: float = 0.9, seed=None,
               **options) -> "effects.EffectSummary":
        """The posterior of the total effect of ``cause`` on ``effect`` (names or indices):
        mean, sd, ``level`` credible interval, P(effect ≠ 0), P(effect > 0)."""
        self._check_fitted()
        return effects.effect(self, cause, effect, n, level, seed, **options)

    def intervene(self, do: dict, n: int = 1000, seed=None, condition=None):
        """``n`` draws ``(n, p)`` of every variable under ``do={variable: value}`` (data
        units), a DataFrame when the fit had column names (``prodag.effects.intervene``)."""
        self._check_fitted()
        return effects.intervene(self, do, n, seed, condition)

    # ---- persistence --------------------------------------------------------------------

    def save(self, path) -> None:
        """Save the fitted model to ``path`` (one ``.npz``: arrays + JSON metadata, no pickle)."""
        self._check_fitted()
        persistence.save(self, path)

    @classmethod
    def load(cls, path) -> "ProDAG":
        """Load a model written by ``save``; it samples exactly as the saved one did. Anything
        else raises ``prodag.persistence.ModelFileError`` (a ``ValueError``)."""
        return persistence.load(cls, path)


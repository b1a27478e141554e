"""ProDAG estimator: recovery, reproducibility, persistence, the posterior API, input errors."""

import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from prodag import NetworkOptions, ProDAG, TrainingOptions, metrics
from prodag.estimator import NotFittedError
from prodag.inputs.validation import DataError

NAMES = ["a", "b", "c", "d", "e"]
CHAIN = np.eye(5, k=1)


def _chain_data(n, seed=0, weight=0.8, scale=(1, 1, 1, 1, 1)):
    """a → b → c → d → e with unit noise, columns multiplied by ``scale``, offset by 10."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 5))
    X[:, 0] = rng.standard_normal(n)
    for k in range(1, 5):
        X[:, k] = weight * X[:, k - 1] + rng.standard_normal(n)
    return pd.DataFrame(X * np.asarray(scale) + 10, columns=NAMES)


PATH_LAMBDAS = 4
"""Radii of the path fits' grids: the default ten cost most of this module's time; with four,
the two that the polishing fits again from every start are still a choice among them."""


@pytest.fixture(scope="module")
def path_fit():
    """The default path (λ chosen by the ELBO, the data starts) on one chain, short fits of 20
    Monte Carlo samples per step on a grid of ``PATH_LAMBDAS`` radii, on the rows the
    validation-selection test fits (so the two share their compiled programs): 2000 rows, so
    that Monte Carlo error is small. Three starts (the ordered regression, the prior, a
    searched order) rather than the default seven: no test here depends on their number, and
    the polishing of the two best radii fits 4 members instead of 12. No refinement (its
    default 6000 steps at p = 5 were half the fixture's cost; nothing here is about it, and
    ``test_refinement`` checks it): the samples and edge probabilities are the mixture's."""
    return ProDAG(seed=0, progress=False, max_epochs=30, n_samples=20, n_chains=1,
                  training=TrainingOptions(n_lambdas=PATH_LAMBDAS, n_restarts=3,
                                           refine_steps=0)).fit(
        _chain_data(2300, seed=3).iloc[:2000])


@pytest.fixture(scope="module")
def small_fit():
    """A cheap fit at a fixed radius, shared by the API tests."""
    return ProDAG(lam=2.0, seed=1, progress=False, max_epochs=15, n_samples=20,
                  standardize=True).fit(_chain_data(200, seed=1, scale=(1, 2, 1, 3, 1)))


@pytest.mark.slow
def test_recovers_a_chain():
    """Default settings but 20 Monte Carlo samples per step, on a 5-node chain, n = 2000."""
    chain_fit = ProDAG(seed=0, progress=False, n_samples=20).fit(_chain_data(2000))
    probabilities = chain_fit.edge_probabilities()
    assert probabilities[CHAIN == 1].min() > 0.9
    # a searched-order start finds a near-tied mode holding one extra weak edge (a -> d)
    assert probabilities[CHAIN == 0].max() < 0.35 and np.median(probabilities[CHAIN == 0]) < 0.05
    assert chain_fit.columns_ == NAMES and chain_fit.n_features_in_ == 5
    assert 0 < chain_fit.lam_ <= chain_fit.lambda_path_["lam_max"]
    mean_weight = nx.get_edge_attributes(chain_fit.to_networkx(), "weight")
    assert set(mean_weight) == {("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")}


def test_samples_are_exact_dags(path_fit):
    samples = path_fit.sample(200)
    assert samples.shape == (200, 5, 5)
    for graph in samples[:50]:
        assert nx.is_directed_acyclic_graph(nx.DiGraph(graph != 0))
    assert path_fit.columns_ == NAMES and path_fit.n_features_in_ == 5
    assert 0 < path_fit.lam_ <= path_fit.lambda_path_["lam_max"]


def test_a_fit_reports_what_orients_its_edges(path_fit, small_fit):
    from prodag.posterior.sortability import scale_orients, sortability

    # unstandardised, the chain's variances grow along it: equal noise orients by them
    report = path_fit.diagnostics_["sortability"]
    probabilities = path_fit.edge_probabilities(1000)
    assert report["expected_edges"] == pytest.approx(probabilities.sum(), abs=0.3)
    variances = _chain_data(2300, seed=3).iloc[:2000].var(axis=0, ddof=0).to_numpy()
    assert report["varsortability_data_units"] == pytest.approx(
        sortability(probabilities, variances), abs=0.05)
    assert scale_orients(report, False, "equal")
    # standardised, every variance is 1: no edge can follow them
    assert small_fit.diagnostics_["sortability"]["varsortability"] == 0.5


def test_sampling_is_reproducible_and_seedable(small_fit):
    first = small_fit.sample(150)
    np.testing.assert_array_equal(first, small_fit.sample(150))
    np.testing.assert_array_equal(first[:50], small_fit.sample(50))
    assert not np.array_equal(small_fit.sample(150, seed=5), first)
    np.testing.assert_array_equal(small_fit.sample(150, seed=5), small_fit.sample(150, seed=5))


def test_identical_seeds_give_identical_fits(small_fit):
    again = ProDAG(**small_fit.get_params()).fit(_chain_data(200, seed=1, scale=(1, 2, 1, 3, 1)))
    np.testing.assert_array_equal(again.history_, small_fit.history_)
    np.testing.assert_array_equal(again.params_.q.loc["W"], small_fit.params_.q.loc["W"])
    np.testing.assert_array_equal(again.sample(100), small_fit.sample(100))


def test_save_load_round_trip(small_fit, tmp_path):
    path = tmp_path / "model.npz"
    small_fit.save(path)
    loaded = ProDAG.load(path)
    assert loaded.get_params() == small_fit.get_params()
    assert loaded.columns_ == NAMES and loaded.lam_ == small_fit.lam_
    assert loaded.objective_ == small_fit.objective_ and np.isfinite(loaded.objective_)
    np.testing.assert_array_equal(loaded.sample(120), small_fit.sample(120))
    np.testing.assert_array_equal(loaded.edge_probabilities(), small_fit.edge_probabilities())
    assert loaded.diagnostics_["sortability"] == small_fit.diagnostics_["sortability"]
    with np.load(path, allow_pickle=False) as archive:  # readable without pickle
        assert "metadata" in archive.files


def test_frames_networkx_and_predict(small_fit):
    frame = small_fit.edge_probabilities_frame()
    assert list(frame.index) == NAMES and list(frame.columns) == NAMES
    np.testing.assert_array_equal(frame.to_numpy(), small_fit.edge_probabilities())
    graph = small_fit.to_networkx(threshold=0.0)
    assert set(graph.nodes) == set(NAMES)
    for _, _, attributes in graph.edges(data=True):
        assert 0 < attributes["probability"] <= 1
    X = _chain_data(30, seed=7)
    prediction = small_fit.predict(X, n_samples=50)
    assert prediction.shape == (30, 5)
    assert list(prediction.columns) == list(X.columns)  # a DataFrame in, a DataFrame out
    # predicting the first variable (no parents) gives its mean
    assert np.std(prediction["a"]) < 0.5 * np.std(X["a"])


@pytest.mark.parametrize("fit", ["small_fit", "path_fit"])
def test_the_samples_a_block_at_a_time_and_their_summaries(fit, request):
    """``sample_batches`` gives ``sample``'s draws in blocks (100 a block from a fit's own
    draws, one block from a mixture), and the edge probabilities and networkx weights counted
    a block at a time are those of the whole sample."""
    fit = request.getfixturevalue(fit)
    with pytest.raises(ValueError, match="n"):  # at the call, not at the first block
        fit.sample_batches(0)
    blocks = list(fit.sample_batches(250, seed=3))
    np.testing.assert_array_equal(np.concatenate(blocks), fit.sample(250, seed=3))
    assert [len(block) for block in blocks] == ([250] if fit.refined_ is None
                                                else [100, 100, 50])
    graphs = fit.sample(300)
    np.testing.assert_array_equal(fit.edge_probabilities(300),
                                  metrics.edge_probabilities(graphs))
    weights = nx.get_edge_attributes(fit.to_networkx(threshold=0.0, n_samples=300), "weight")
    assert weights
    for (j, k), weight in weights.items():
        column = graphs[:, NAMES.index(j), NAMES.index(k)]
        assert weight == pytest.approx(column[column != 0].mean(), rel=1e-9)


def test_the_api_reference_describes_n_samples_and_max_epochs_apart():
    doc = ProDAG.__doc__
    assert "n_samples, max_epochs" not in doc
    n_samples = doc.split("    n_samples : int or None\n")[1].split("\n    ")[0]
    max_epochs = doc.split("    max_epochs : int\n")[1].split("\n    ")[0]
    assert "Monte Carlo samples" in n_samples and "epochs" not in n_samples
    assert "epochs" in max_epochs and "Monte Carlo" not in max_epochs


def test_get_and_set_params():
    est = ProDAG()
    assert est.get_params()["n_samples"] is None  # resolved for p at fit time
    assert est.set_params(n_samples=7, lam=3.0) is est
    assert est.n_samples == 7 and est.lam == 3.0
    with pytest.raises(ValueError, match="not a ProDAG parameter"):
        est.set_params(learning_rate=1.0)


def test_the_constructor_has_at_most_20_parameters_and_nest_groups_flat_settings():
    import inspect

    from prodag import Tiers
    from prodag.config.parameters import nest

    assert len(inspect.signature(ProDAG).parameters) <= 20
    kwargs = nest({"n_restarts": 2, "bias": False, "lam": 1.0, "tiers": [["a"], ["b"]],
                   "forbid_within_tiers": True})
    assert kwargs["training"] == TrainingOptions(n_restarts=2)
    assert kwargs["network"] == NetworkOptions(bias=False) and kwargs["lam"] == 1.0
    assert kwargs["tiers"] == Tiers([["a"], ["b"]], forbid_within=True)
    for removed in ("mix_radii", "mlp_edges", "intervention_kind"):
        with pytest.raises(ValueError, match=removed):
            nest({removed: True})


def test_use_before_fit_raises():
    est = ProDAG()
    for call in (lambda: est.sample(3), lambda: est.sample_batches(3),
                 est.edge_probabilities, est.to_networkx, lambda: est.save("x.npz")):
        with pytest.raises(NotFittedError, match="fit"):
            call()


GOOD = _chain_data(40)


@pytest.mark.parametrize("params, match", [
    ({"sem": "cubic"}, "sem"),
    ({"lr": -0.1}, "lr"),
    ({"n_samples": 0}, "n_samples"),
    ({"lam": -1.0}, "lam"),
    ({"noise_variance": [1.0, 2.0]}, "noise_variance"),
    ({"noise_variance": "guess"}, "noise_variance"),
    ({"noise_variance": [1, 1, 1, 1, -1]}, "noise_variance"),
    ({"projection": "magic"}, "projection"),
    ({"prior_std": 0.0}, "prior_std"),
    ({"max_epochs": 0}, "max_epochs"),
    ({"lam": None}, "lam='auto'"),
    ({"lam": "inf"}, "math.inf"),
    ({"training": {"n_restarts": 2}}, "TrainingOptions"),
    ({"bootstrap": "yes"}, "bootstrap"),
])
def test_bad_parameters_raise_at_fit(params, match):
    est = ProDAG(progress=False, **params)  # constructing never fails (scikit-learn style)
    with pytest.raises(ValueError, match=match):
        est.fit(GOOD)


@pytest.mark.parametrize("options, params, match", [
    (TrainingOptions, {"validation_fraction": 1.5}, "validation_fraction"),
    (TrainingOptions, {"select_by": "bic"}, "select_by"),
    (TrainingOptions, {"init": "random"}, "init"),
    (TrainingOptions, {"n_restarts": 0}, "n_restarts"),
    (NetworkOptions, {"hidden_layers": 0}, "hidden_layers"),
    (NetworkOptions, {"activation": "cubic"}, "activation"),
])
def test_bad_options_raise_where_the_group_is_built(options, params, match):
    with pytest.raises(ValueError, match=match):
        options(**params)


TINY = dict(seed=0, progress=False, max_epochs=2, n_chains=1,
            training=TrainingOptions(n_restarts=1, refine_steps=0))
"""The cheapest fit of ``GOOD``, for tests of what a fit accepts, warns and saves: one
compilation shared by them (the default Monte Carlo batch, a traced radius)."""


def test_infinity_and_auto_are_the_spellings_of_lam_and_infinity_survives_a_round_trip(
        tmp_path):
    fit = ProDAG(lam=math.inf, **TINY).fit(GOOD)
    assert fit.lam_ == math.inf and fit.lambda_path_ is None
    assert ProDAG().lam == "auto"
    fit.save(tmp_path / "m.npz")
    assert ProDAG.load(tmp_path / "m.npz").lam_ == math.inf


@pytest.mark.parametrize("X", [
    np.ones((10, 3)),  # constant columns
    np.array([[1.0, np.nan], [2.0, 3.0], [4.0, 1.0]]),
    np.arange(10.0),  # 1-D
])
def test_bad_data_raises_data_error(X):
    with pytest.raises(DataError):
        ProDAG(lam=1.0, progress=False).fit(X)


def test_too_few_rows_for_a_validation_split():
    X = np.random.default_rng(0).standard_normal((4, 3))
    with pytest.raises(DataError, match="validation"):
        ProDAG(training=TrainingOptions(select_by="validation"), progress=False).fit(X)


def test_validation_rows_must_match_the_columns():
    with pytest.raises(DataError, match="X_val"):
        ProDAG(progress=False).fit(GOOD, X_val=np.zeros((3, 2)))


def test_elbo_selection_keeps_the_best_scored_radius_of_the_grid(path_fit):
    path = path_fit.lambda_path_
    assert path["criterion"] == "elbo"
    lambdas, scores = np.array(path["lambdas"]), np.array(path["scores"])
    np.testing.assert_allclose(lambdas, path["lam_max"] * np.arange(PATH_LAMBDAS, 0, -1)
                               / PATH_LAMBDAS)
    polished = np.array(path["polished"])
    assert set(polished[:, 0]) == set(lambdas[np.argsort(-scores)[:2]])
    assert path_fit.lam_ == polished[np.argmax(polished[:, 1]), 0]
    # objective_ is re-scored with common random numbers (20 batches against the path's 10):
    # the path's score to Monte Carlo error
    assert -path_fit.objective_ == pytest.approx(polished[:, 1].max(), rel=1e-3)


def test_validation_selection_uses_the_held_out_rows():
    data = _chain_data(2300, seed=3)
    fit = ProDAG(seed=0, progress=False, max_epochs=30, n_samples=20, n_chains=1,
                 training=TrainingOptions(select_by="validation", n_restarts=1,
                                          n_lambdas=PATH_LAMBDAS, refine_steps=0)).fit(
        data.iloc[:2000], X_val=data.iloc[2000:])
    assert fit.lambda_path_["criterion"] == "validation"
    assert fit.lam_ == fit.lambda_path_["lambdas"][int(np.argmax(fit.lambda_path_["scores"]))]


def test_x_val_without_validation_selection_warns():
    with pytest.warns(UserWarning, match="X_val"):
        ProDAG(lam=1.0, **TINY).fit(GOOD, X_val=GOOD)


def _starts(est, Z):
    from prodag.config.spec import resolve
    from prodag.inference import compiled, fitting

    spec = resolve(est, None, Z.shape[1])
    engine = compiled.variational(spec.config, spec.optimiser, 0.0, 1.0, False)
    return fitting.starts(engine, Z, np.ones(Z.shape[1]), spec.dtype, spec.config,
                          spec.from_data, spec.restarts)


def test_data_start_begins_at_the_ordered_regression():
    from prodag.inference.fitting import DATA_START_STD
    from prodag.inference.initialization import linear_start

    from prodag.inference.initialization import ORDER_SEARCH_STARTS
    from prodag.inference.order_search import searched_orders

    est = ProDAG(lam=1.0, seed=0, progress=False, training=TrainingOptions(n_restarts=3))
    Z = _chain_data(500).to_numpy()
    Z = Z - Z.mean(axis=0)
    starts = _starts(est, Z)
    assert len(starts) == 3
    orders = searched_orders(Z, np.ones(5), n_graphs=2, n_starts=ORDER_SEARCH_STARTS)
    searched = [linear_start(Z, np.ones(5), order=order) for order in orders]
    expected_starts = [linear_start(Z, np.ones(5))] + searched
    for data_start, expected in zip(starts, (expected_starts * 3)[:3]):
        np.testing.assert_allclose(data_start.q.loc["W"], expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.log1p(np.exp(data_start.q.rho["W"])),
                                   DATA_START_STD, rtol=1e-5)
    assert all(np.any(np.asarray(start.q.loc["W"]) != 0) for start in starts)  # no prior


def test_the_additive_sems_data_starts_alternate_linear_and_additive():
    from prodag.inference.initialization import additive_start, linear_start

    est = ProDAG(sem="additive", lam=1.0, seed=0, progress=False,
                 training=TrainingOptions(n_restarts=5))
    Z = _chain_data(500).to_numpy()
    Z = Z - Z.mean(axis=0)
    starts = _starts(est, Z)
    additive = additive_start(Z, np.ones(5))
    for index, expected in ((0, {"W": linear_start(Z, np.ones(5))}), (2, additive),
                            (4, {"W": linear_start(Z, np.ones(5))})):
        for name, value in expected.items():
            np.testing.assert_allclose(starts[index].q.loc[name], value, rtol=1e-5, atol=1e-6)
    assert np.all(np.asarray(starts[3].q.loc["W"]) == 0)


@pytest.mark.parametrize("sem, restarts, options, expected", [
    ("linear", None, {}, 7), ("linear", None, {"init": "prior"}, 3),
    ("linear", None, {"noise_variance": "estimate"}, 3), ("mlp", None, {}, 1),
    ("mlp", 2, {}, 2), ("additive", None, {}, 3)])
def test_default_restarts_depend_on_the_sem(sem, restarts, options, expected):
    from prodag.config.parameters import nest

    est = ProDAG(**nest({"sem": sem, "lam": 1.0, "n_restarts": restarts, "progress": False,
                         **options}))
    assert len(_starts(est, np.random.default_rng(0).standard_normal((10, 5)))) == expected


@pytest.mark.parametrize("settings", [{"activation": "tanh"}, {"hidden_units": 1}])
def test_network_data_start_needs_relu_pairs(settings):
    with pytest.raises(ValueError, match="init='data'"):
        ProDAG(sem="mlp", training=TrainingOptions(init="data"), progress=False,
               network=NetworkOptions(**settings)).fit(GOOD)


@pytest.mark.parametrize("sem, p, n_samples, expected", [
    ("linear", 3, None, 100), ("linear", 14, None, 100), ("linear", 15, None, 88),
    ("linear", 20, None, 50), ("linear", 100, None, 50), ("additive", 5, None, 50),
    ("mlp", 5, None, 50), ("linear", 5, 7, 7)])
def test_the_default_monte_carlo_batch_is_in_proportion_to_the_linear_fit(sem, p, n_samples,
                                                                          expected):
    """``n_samples=None``: the linear SEM's ``L · p²`` at most the p = 20 default's, between 50
    and the paper's 100; what the fit's optimiser runs and what a saved file keeps."""
    from prodag.config.spec import resolve

    est = ProDAG(sem=sem, n_samples=n_samples)
    assert resolve(est, None, p).optimiser.n_samples == expected
    assert est.get_params()["n_samples"] == n_samples


def test_a_default_fit_saves_and_reloads_its_resolved_monte_carlo_batch(tmp_path):
    est = ProDAG(lam=1.0, **TINY).fit(GOOD)
    assert est.spec_.optimiser.n_samples == 100  # five variables
    est.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert loaded.n_samples is None and loaded.spec_.optimiser.n_samples == 100
    np.testing.assert_array_equal(loaded.edge_probabilities(), est.edge_probabilities())

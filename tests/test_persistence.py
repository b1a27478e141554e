"""``ProDAG.load`` rejects every file that is not an intact saved model with ModelFileError."""

import json

import numpy as np
import pytest

from prodag import ProDAG, TrainingOptions
from prodag.io.model_file import ModelFileError

NAMES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    X[:, 1] += X[:, 0]
    path = tmp_path_factory.mktemp("model") / "model.npz"
    ProDAG(lam=1.0, max_epochs=2, n_samples=5, n_chains=1, seed=0, progress=False,
           training=TrainingOptions(n_restarts=1, refine_steps=0)).fit(X).save(path)
    return path


def _contents(path):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files if name != "metadata"}
        metadata = json.loads(str(archive["metadata"]))
    return arrays, metadata


def _write(path, arrays, metadata):
    np.savez_compressed(path, metadata=np.asarray(json.dumps(metadata)), **arrays)
    return path


def _tampered(saved, tmp_path, change):
    arrays, metadata = _contents(saved)
    change(arrays, metadata)
    return _write(tmp_path / "tampered.npz", arrays, metadata)


def test_an_intact_file_loads(saved):
    loaded = ProDAG.load(saved)
    assert len(loaded.columns_) == 3
    assert loaded.sample(5).shape == (5, 3, 3)


def _set(section, name, value):
    def change(arrays, metadata):
        (arrays if section == "arrays" else metadata)[name] = value
    return change


def _nan_weights(arrays, metadata):
    arrays["arrays/params/0/q/loc/W"] = np.full_like(arrays["arrays/params/0/q/loc/W"], np.nan)


def _sem_to_mlp(arrays, metadata):
    metadata["params"]["sem"] = "mlp"


def _weight_shape(arrays, metadata):
    arrays["arrays/params/0/q/rho/W"] = np.zeros((4, 4))


def _columns(arrays, metadata):
    metadata["columns"] = ["a", "b"]


def _negative_lam(arrays, metadata):
    metadata["lam_"] = -5


@pytest.mark.parametrize("change, message", [
    (_negative_lam, "lam_"),
    (_columns, "shape"),
    (_nan_weights, "NaN"),
    (_sem_to_mlp, "sem='mlp'"),
    (_weight_shape, "shape"),
    (_set("metadata", "format_version", 99), "format version"),
    (_set("metadata", "seed_", "zero"), "seed_"),
    (_set("arrays", "arrays/mixture_weights_", np.array([0.5, 0.5])), "per component"),
    (_set("arrays", "arrays/mixture_weights_", np.array([0.9])), "sum to 1"),
    (_set("metadata", "conditions_", ["x", "x"]), "distinct condition labels"),
    (_set("metadata", "conditions_", ["x", "y"]), "'condition_means_' is missing"),
    (_set("arrays", "arrays/condition_means_", np.zeros((2, 3))), "but no 'conditions_'"),
])
def test_tampered_metadata_or_arrays_are_rejected(saved, tmp_path, change, message):
    path = _tampered(saved, tmp_path, change)
    with pytest.raises(ModelFileError, match=message):
        ProDAG.load(path)


def _as_version_5(arrays, metadata):
    """The file as format 5 wrote it: flat parameters, intervention_kind among them."""
    params = metadata["params"]
    for group in ("training", "network"):
        params.update(params.pop(group) or {})
    params.update(intervention_kind=metadata.pop("intervention_kind_"), mix_radii=True,
                  mlp_edges="group_norm", forbid_within_tiers=False)
    metadata["format_version"] = 5


def _as_version_3(arrays, metadata):
    """The file as format 3 wrote it: no likelihood, no chains."""
    _as_version_5(arrays, metadata)
    metadata["format_version"] = 3
    del metadata["params"]["likelihood"], metadata["diagnostics_"]
    del metadata["params"]["n_chains"], metadata["params"]["bootstrap"]


def _as_version_2(arrays, metadata):
    """The file as format 2 wrote it: no conditions, no intervention_kind, no likelihood."""
    _as_version_3(arrays, metadata)
    metadata["format_version"] = 2
    del metadata["conditions_"], metadata["params"]["intervention_kind"]


def test_a_version_2_file_loads_as_fitted_without_conditions(saved, tmp_path):
    loaded = ProDAG.load(_tampered(saved, tmp_path, _as_version_2))
    assert loaded.conditions_ is None and loaded.intervention_kind_ == "do"
    assert loaded.likelihood == "gaussian"
    np.testing.assert_array_equal(loaded.sample(5, seed=0), ProDAG.load(saved).sample(5, seed=0))


def test_a_version_6_file_with_default_training_loads_without_refinement(saved, tmp_path):
    """Format 6 wrote ``training=None`` for the default options, whose ``refine_steps`` was
    0 then; today's default (None) refines, so the upgrade names the 0."""
    def as_version_6(arrays, metadata):
        metadata["format_version"], metadata["params"]["training"] = 6, None

    loaded = ProDAG.load(_tampered(saved, tmp_path, as_version_6))
    assert loaded.spec_.refine_steps == 0 and loaded.refined_ is None
    assert loaded.get_params()["training"].refine_steps == 0
    np.testing.assert_array_equal(loaded.sample(5, seed=0), ProDAG.load(saved).sample(5, seed=0))


def test_a_version_3_file_loads_with_gaussian_noise(saved, tmp_path):
    loaded = ProDAG.load(_tampered(saved, tmp_path, _as_version_3))
    assert loaded.likelihood == "gaussian"
    np.testing.assert_array_equal(loaded.sample(5, seed=0), ProDAG.load(saved).sample(5, seed=0))


def test_a_file_written_in_format_5_loads_with_grouped_parameters(monkeypatch):
    """``tests/data/model_format5.npz`` was written by the format-5 code (flat parameters,
    ``lam=None``, ``forbid_within_tiers``, ``mix_radii``); it loads into the grouped
    parameters and draws what that code drew (``model_format5_draws.npz``, ``seed=1``), before
    the entries of negligible effect were dropped from draws (``prodag.posterior.negligible``, off
    here)."""
    from pathlib import Path

    from prodag import Tiers
    from prodag.posterior import negligible

    monkeypatch.setattr(negligible, "EFFECT_SIZE", 0.0)

    data = Path(__file__).parent / "data"
    loaded = ProDAG.load(data / "model_format5.npz")
    assert loaded.lam == "auto" and loaded.training.n_lambdas == 2
    assert loaded.training.n_restarts == 1 and loaded.training.steps_per_epoch == 2
    assert loaded.tiers == Tiers([["x0"], ["x1", "x2"]], forbid_within=True)
    assert loaded.knowledge_.forbid_within_tiers and loaded.intervention_kind_ == "do"
    with np.load(data / "model_format5_draws.npz") as draws:
        # drawn by another build: the same graphs, the weights within float32 rounding
        drawn = loaded.sample(5, seed=1)
        np.testing.assert_array_equal(drawn != 0, draws["graphs"] != 0)
        np.testing.assert_allclose(drawn, draws["graphs"], rtol=1e-5, atol=1e-6)
    assert ProDAG(**loaded.get_params()).get_params() == loaded.get_params()


def test_a_format_5_file_of_a_removed_option_is_refused(saved, tmp_path):
    def strength(arrays, metadata):
        _as_version_5(arrays, metadata)
        metadata["params"]["mlp_edges"] = "strength"

    with pytest.raises(ModelFileError, match="mlp_edges"):
        ProDAG.load(_tampered(saved, tmp_path, strength))


def test_a_npy_file_is_rejected(tmp_path):
    path = tmp_path / "samples.npy"
    np.save(path, np.zeros((3, 3)))
    with pytest.raises(ModelFileError, match=r"\.npy"):
        ProDAG.load(path)


def test_a_csv_file_is_rejected(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(ModelFileError, match="CSV"):
        ProDAG.load(path)


def test_a_truncated_file_is_rejected(saved, tmp_path):
    path = tmp_path / "truncated.npz"
    data = saved.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="truncated|not a saved model"):
        ProDAG.load(path)


@pytest.mark.parametrize("kind, message", [("empty", "empty"), ("directory", "directory"),
                                           ("missing", "does not exist")])
def test_empty_directory_and_missing_paths_are_rejected(tmp_path, kind, message):
    path = tmp_path / "model.npz"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.mkdir()
    with pytest.raises(ModelFileError, match=message):
        ProDAG.load(path)


def test_model_file_error_is_a_value_error():
    assert issubclass(ModelFileError, ValueError)

"""``samples.npz`` in its two layouts (``prodag.io.samples_file``): the sparse layout reads
back the dense draws exactly, ``write_results`` draws and writes a block at a time, and
``prodag evaluate`` and ``prodag effects`` answer the same from either layout, and as before
from the dense one."""

import json

import numpy as np
import pandas as pd
import pytest
from cli_support import fitted, invoke  # noqa: F401 (fixture)

from prodag import ProDAG, effects, metrics
from prodag.cli import effects as effects_command
from prodag.cli.results import write_results
from prodag.cli.tables import ranked_edges
from prodag.inputs.units import standardized
from prodag.io import samples_file
from prodag.io.samples_file import (entries_of, read_blocks, read_entries, read_samples,
                                    read_variables, write_samples)

NAMES = ["a", "b", "c", "d"]
SD = np.array([2.0, 0.5, 10.0, 1.5])


def random_dags(n: int, p: int = 4, seed: int = 0) -> np.ndarray:
    """``n`` weighted DAGs ``(n, p, p)`` (edges j → k for j < k, about half present), with a
    -0.0 among the zeros."""
    rng = np.random.default_rng(seed)
    graphs = np.triu(rng.normal(size=(n, p, p)) * (rng.random((n, p, p)) < 0.5), k=1)
    graphs[0, 0, 1] = -0.0
    return graphs


def in_blocks(graphs: np.ndarray, size: int):
    return (graphs[start:start + size] for start in range(0, len(graphs), size))


def old_ranked_edges(probs, variables, samples, sd=None):
    """``ranked_edges`` as it was, from the dense samples."""
    present = samples != 0
    shown = samples if sd is None else standardized(samples, sd)
    rows = [{"source": variables[j], "target": variables[k], "probability": float(probs[j, k]),
             "mean_weight": float(shown[:, j, k][present[:, j, k]].mean())}
            for j, k in zip(*np.nonzero(probs > 0))]
    return pd.DataFrame(rows).sort_values("probability", ascending=False,
                                          kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("dense_bytes", [samples_file.DENSE_BYTES, 0])
def test_either_layout_reads_back_the_draws_exactly(tmp_path, monkeypatch, dense_bytes):
    monkeypatch.setattr(samples_file, "DENSE_BYTES", dense_bytes)
    graphs = random_dags(250)
    path = tmp_path / "samples.npz"
    entries = write_samples(path, in_blocks(graphs, 100), 250, NAMES)
    with np.load(path) as archive:
        names = set(archive.files)
        if dense_bytes:
            assert names == {"samples", "variables"}
            assert np.array_equal(archive["samples"], graphs)
        else:
            assert names == {"draw", "parent", "child", "weight", "shape", "variables"}
            assert list(archive["shape"]) == [250, 4, 4] and archive["weight"].dtype == float
            assert len(archive["draw"]) == np.count_nonzero(graphs)
            assert np.all(np.diff(archive["draw"]) >= 0)
    assert read_variables(path) == NAMES
    assert np.array_equal(read_samples(path), graphs)
    assert [len(block) for block in read_blocks(path)] == [100, 100, 50]
    assert np.array_equal(np.concatenate(list(read_blocks(path, 30))), graphs)
    assert read_entries(path).shape == entries.shape == (250, 4, 4)
    probs = entries.edge_probabilities()
    assert np.array_equal(probs, metrics.edge_probabilities(graphs))  # bit for bit
    for sd in (None, SD):
        pd.testing.assert_frame_equal(ranked_edges(probs, NAMES, entries, sd=sd),
                                      old_ranked_edges(probs, NAMES, graphs, sd),
                                      check_exact=True)


def test_a_sparse_file_whose_entries_do_not_fit_is_refused(tmp_path):
    path = tmp_path / "samples.npz"
    np.savez(path, draw=np.array([0, 1]), parent=np.array([0, 5]), child=np.array([1, 2]),
             weight=np.array([0.5, 1.0]), shape=np.array([2, 4, 4]), variables=np.array(NAMES))
    with pytest.raises(ValueError, match="do not fit its shape"):
        read_entries(path)


@pytest.mark.parametrize("units", ["data", "standardized"])
def test_the_saved_effects_of_a_few_causes_at_a_time_are_those_of_all_at_once(monkeypatch,
                                                                             units):
    monkeypatch.setattr(samples_file, "DENSE_BYTES", 0)  # one cause a pass
    graphs = random_dags(120, seed=1)
    table, means, p_nonzero = effects_command.saved_table(
        entries_of([graphs]), NAMES, 0.9, SD, units)
    draws, paths = effects.linear_total_effects(graphs), effects.directed_paths(graphs)
    pd.testing.assert_frame_equal(table, effects.effect_table(draws, paths, NAMES, 0.9, sd=SD,
                                                              units=units), check_exact=True)
    assert np.array_equal(means, draws.mean(axis=0))
    assert np.array_equal(p_nonzero, paths.mean(axis=0))


def test_write_results_draws_a_block_at_a_time(fitted, tmp_path, monkeypatch):
    folder, _ = fitted
    estimator = ProDAG.load(folder / "out" / "posterior.npz")
    expected = estimator.sample(250)

    def whole_sample(*args, **kwargs):
        raise AssertionError("write_results drew the whole (n, p, p) array at once")

    monkeypatch.setattr(estimator, "sample", whole_sample)
    monkeypatch.setattr(samples_file, "DENSE_BYTES", 0)
    results = write_results(estimator, estimator.columns_, tmp_path, threshold=0.3,
                            n_draws=250)
    assert read_variables(tmp_path / "samples.npz") == estimator.columns_
    with np.load(tmp_path / "samples.npz") as archive:
        assert "shape" in archive.files  # the sparse layout
    assert np.array_equal(read_samples(tmp_path / "samples.npz"), expected)
    assert np.array_equal(results["probabilities"], metrics.edge_probabilities(expected))
    assert np.array_equal(results["probabilities"], estimator.edge_probabilities(250))
    pd.testing.assert_frame_equal(
        ranked_edges(results["probabilities"], estimator.columns_, results["entries"]),
        old_ranked_edges(results["probabilities"], estimator.columns_, expected),
        check_exact=True)


def outputs(folder, out, truth):
    """What ``prodag evaluate`` and ``prodag effects`` (one pair, and the table) print and write
    (into the folder ``out``) for the results folder ``folder``, the folders' names replaced."""
    out.mkdir()
    found = {}
    for name, command, arguments in (
            ("scores.json", "evaluate", ["--truth", truth, "--json"]),
            ("pair.json", "effects", ["--cause", "x0", "--effect", "x2", "--out"]),
            ("table.csv", "effects", ["--min-probability", 0, "--out"])):
        result = invoke(command, folder, *arguments, out / name)
        assert result.exit_code == 0, result.output
        found[name] = [text.replace(str(out), "OUT").replace(str(folder), "IN")
                       for text in (result.output, (out / name).read_text())]
    return found


def test_evaluate_and_effects_answer_the_same_from_the_sparse_layout(fitted, tmp_path,
                                                                     monkeypatch):
    folder, _ = fitted
    dense = folder / "out"
    before = outputs(dense, tmp_path / "from-dense", folder / "graph.csv")
    samples, names = read_samples(dense / "samples.npz"), read_variables(dense / "samples.npz")
    draws, paths = effects.linear_total_effects(samples), effects.directed_paths(samples)
    old_pair = effects.summarize(draws[:, 0, 2], paths[:, 0, 2], cause="x0", effect="x2")
    assert json.loads(before["pair.json"][1]) == old_pair.as_dict()  # as before the layouts
    assert before["table.csv"][1] == effects.effect_table(draws, paths, names).to_csv(
        index=False)

    monkeypatch.setattr(samples_file, "DENSE_BYTES", 0)  # every file sparse, one cause a pass
    sparse = tmp_path / "sparse"
    sparse.mkdir()
    write_results(ProDAG.load(dense / "posterior.npz"), names, sparse, threshold=0.3,
                  n_draws=len(samples))
    with np.load(sparse / "samples.npz") as archive:
        assert "weight" in archive.files
    assert np.array_equal(read_samples(sparse / "samples.npz"), samples)
    assert outputs(sparse, tmp_path / "from-sparse", folder / "graph.csv") == before

"""Tests for prodag.datasets: the bundled Sachs data and the MUNIN1 graph."""

import hashlib
from importlib.resources import files

import numpy as np
import pytest

from prodag import datasets


@pytest.fixture(scope="module")
def sachs():
    return datasets.load_sachs()


@pytest.fixture(scope="module")
def munin():
    return datasets.load_munin1()


def has_cycle(graph):
    A = (np.asarray(graph) != 0).astype(float)
    return bool(np.linalg.matrix_power(A, A.shape[0]).any())


def test_sachs_shapes_and_names(sachs):
    names = ["raf", "mek", "plcg", "pip2", "pip3", "erk", "akt", "pka", "pkc", "p38", "jnk"]
    assert sachs.data.shape == (7466, 11)
    assert list(sachs.data.columns) == names and sachs.variables == names
    assert sachs.graph.shape == sachs.graph_dag.shape == (11, 11)
    assert sachs.conditions.shape == sachs.intervention_targets.shape == (7466,)
    assert np.isfinite(sachs.data.to_numpy()).all()


def test_sachs_first_and_last_rows(sachs):
    np.testing.assert_array_equal(sachs.data.iloc[0],
                                  [26.4, 13.2, 8.82, 18.3, 58.8, 6.61, 17.0, 414.0, 17.0, 44.9, 40.0])
    assert sachs.data.iloc[1, 0] == 35.9


def test_sachs_graphs(sachs):
    assert sachs.graph.sum() == 18 and sachs.graph_dag.sum() == 17
    assert set(np.unique(sachs.graph)) == {0, 1}
    assert not np.diag(sachs.graph).any()
    assert has_cycle(sachs.graph) and not has_cycle(sachs.graph_dag)
    edges = set(sachs.edges())
    assert {("plcg", "pip2"), ("pip2", "pip3"), ("pip3", "plcg")} <= edges  # the known cycle
    dag_edges = set(sachs.edges(sachs.graph_dag))
    assert len(dag_edges) == 17
    # documented differences between the 18-edge graph and the 17-edge DAG
    assert edges - dag_edges == {("pip2", "pip3"), ("pip2", "pkc"), ("pip3", "akt"),
                                 ("pip3", "plcg"), ("plcg", "pkc")}
    assert dag_edges - edges == {("erk", "akt"), ("pip3", "pip2"), ("pkc", "pka"),
                                 ("plcg", "pip3")}


def test_sachs_conditions_and_targets(sachs):
    conditions, targets = sachs.conditions, sachs.intervention_targets
    assert (conditions[:853] == "cd3cd28").all() and conditions[853] == "cd3cd28icam2"
    assert conditions[1754] == "cd3cd28icam2" and conditions[1755] == "cd3cd28+aktinhib"
    assert conditions[4998] == "cd3cd28+ly" and conditions[-1] == "b2camp"
    assert all(t is None for t in targets[:1755])
    assert targets[1755] == "akt" and targets[4998] == "pip3" and targets[-1] == "pka"
    counts = dict(zip(*np.unique(conditions, return_counts=True)))
    assert counts == {name: size for name, size, _ in datasets.SACHS_CONDITIONS}
    assert {t for t in targets if t is not None} <= set(sachs.variables)


def test_sachs_observational_only(sachs):
    obs = datasets.load_sachs(observational_only=True)
    assert obs.data.shape == (853, 11)
    np.testing.assert_array_equal(obs.data.to_numpy(), sachs.data.to_numpy()[:853])
    assert (obs.conditions == "cd3cd28").all()
    assert all(t is None for t in obs.intervention_targets)
    np.testing.assert_array_equal(obs.graph, sachs.graph)


def test_edges_rejects_wrong_shape(sachs):
    with pytest.raises(ValueError, match=r"\(11, 11\)"):
        sachs.edges(np.zeros((3, 3)))


def test_munin1(munin):
    assert munin.graph.shape == (186, 186) and len(munin.nodes) == 186
    assert munin.graph.sum() == 273 and set(np.unique(munin.graph)) == {0, 1}
    assert not has_cycle(munin.graph)
    degree = munin.graph.sum(axis=0) + munin.graph.sum(axis=1)
    assert degree.min() > 0  # no isolated nodes
    assert ("DIFFN_MOT_SEV", "DIFFN_M_SEV_PROX") in set(munin.edges())
    assert len(set(munin.nodes)) == 186


@pytest.mark.parametrize("path,md5", [
    ("sachs/sachs_7466.csv", "e8ded13b7097361a56596b2b38497c70"),
    ("sachs/sachs_853_obs.csv", "6be6305cabf327d7e971ebaa890b2337"),
    ("sachs/sachs_cdt18_edges.csv", "c02781d533c76dd7553a8a776ba7e486"),
    ("sachs/sachs_consensus_edges.csv", "a203bf3aa875f39de73b08794157d6ce"),
    ("munin1/munin1_edges.csv", "92f387b3a076085738c02205b73a787b"),
    ("munin1/munin1_nodes.csv", "e15ce3e237e9ce308133e47a86f35182"),
])
def test_bundled_files_match_documented_md5(path, md5):
    content = files("prodag").joinpath("data", path).read_bytes()
    assert hashlib.md5(content).hexdigest() == md5


def test_sachs_interventions_mask_matches_the_targets():
    from prodag import datasets

    sachs = datasets.load_sachs()
    mask = sachs.interventions
    assert mask.shape == (7466, 11) and mask.sum(axis=1).max() == 1
    rows = np.flatnonzero(mask.any(axis=1))
    assert all(sachs.variables[mask[i].argmax()] == sachs.intervention_targets[i] for i in rows)
    assert (sachs.intervention_targets == None).sum() == 7466 - len(rows)  # noqa: E711
    assert mask[:, sachs.variables.index("pkc")].sum() == 723 + 913

"""Bundled real data: the Sachs et al. (2005) flow-cytometry data and the MUNIN1 graph.

The files live in ``prodag/data/`` (provenance, licences and md5 sums in its README.md) and
are read with ``importlib.resources``; nothing is downloaded.

Sachs data (``load_sachs``)
    7466 cells × 11 phosphoproteins and phospholipids, raw (not log-transformed) values as
    distributed with the Causal Discovery Toolbox (cdt 0.6.0). The rows come in nine blocks,
    one per experimental condition, in this order (0-based row ranges, end inclusive)::

        cd3cd28             0–852     general stimulation (anti-CD3/CD28), observational
        cd3cd28icam2      853–1754    general stimulation plus ICAM-2, observational
        cd3cd28+aktinhib 1755–2665    AKT inhibitor            → intervention on akt
        cd3cd28+g0076    2666–3388    G06976 inhibits PKC      → intervention on pkc
        cd3cd28+psitect  3389–4198    psitectorigenin on PIP2  → intervention on pip2
        cd3cd28+u0126    4199–4997    U0126 inhibits MEK       → intervention on mek
        cd3cd28+ly       4998–5845    LY294002 inhibits PI3K   → intervention on pip3 (a choice)
        pma              5846–6758    PMA activates PKC        → intervention on pkc
        b2camp           6759–7465    β2-cAMP activates PKA    → intervention on pka

    LY294002 acts on PI3K, which is not among the measured variables; papers assign the
    intervention to pip3 or to akt. prodag uses pip3, the product of PI3K, and this is a
    modelling choice rather than a fact of the experiment.

    Two true graphs are given: ``graph``, the 18-edge consensus graph that the ProDAG paper
    scores against (from cdt; it contains the directed cycle plcg → pip2 → pip3 → plcg), and
    ``graph_dag``, the 17-edge consensus DAG of Sachs et al.'s Fig. 3 (bnlearn's ``sachs``
    network, via pgmpy 1.1.2).

MUNIN1 graph (``load_munin1``)
    Subnetwork 1 of the MUNIN medical diagnostic network (Andreassen et al., 1989; bnlearn
    repository, via pgmpy 1.1.2): 186 nodes, 273 edges, acyclic. Only the graph is shipped;
    use ``prodag.evaluation.simulate.semi_synthetic`` to generate data on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

import numpy as np
import pandas as pd

from prodag.graph import adjacency_from_edges, edge_names

SACHS_VARIABLES = ("raf", "mek", "plcg", "pip2", "pip3", "erk", "akt", "pka", "pkc", "p38",
                   "jnk")
"""Short names of the 11 Sachs variables, in column order."""

SACHS_CONDITIONS = (
    # (condition, number of rows, intervened variable or None)
    ("cd3cd28", 853, None),
    ("cd3cd28icam2", 902, None),
    ("cd3cd28+aktinhib", 911, "akt"),
    ("cd3cd28+g0076", 723, "pkc"),
    ("cd3cd28+psitect", 810, "pip2"),
    ("cd3cd28+u0126", 799, "mek"),
    ("cd3cd28+ly", 848, "pip3"),
    ("pma", 913, "pkc"),
    ("b2camp", 707, "pka"),
)
"""The experimental conditions in row order, their sizes and intervention targets."""


def _read_csv(relative_path: str) -> pd.DataFrame:
    with files("prodag").joinpath("data", relative_path).open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle)


@dataclass(frozen=True, eq=False)
class SachsData:
    """The Sachs et al. (2005) flow-cytometry data and its consensus graphs.

    Attributes
    ----------
    data : DataFrame (n, 11), raw measurements, columns ``variables``.
    graph : (11, 11) int 0/1, the 18-edge consensus graph used in the ProDAG paper (has a
        directed cycle). ``[j, k] = 1`` means j → k.
    graph_dag : (11, 11) int 0/1, the 17-edge consensus DAG.
    variables : list of the 11 variable names.
    conditions : (n,) str array, the experimental condition of each row.
    intervention_targets : (n,) object array, the intervened variable of each row or None
        for the observational conditions cd3cd28 and cd3cd28icam2.
    """

    data: pd.DataFrame
    graph: np.ndarray
    graph_dag: np.ndarray
    variables: list[str]
    conditions: np.ndarray
    intervention_targets: np.ndarray

    def edges(self, graph: np.ndarray | None = None) -> list[tuple[str, str]]:
        """``(source, target)`` names of the edges of ``graph`` (default: ``self.graph``)."""
        return edge_names(self.graph if graph is None else graph, self.variables)

    @property
    def interventions(self) -> np.ndarray:
        """``(n, 11)`` bool mask of the intervened variable of each row, as
        ``ProDAG.fit(X, interventions=...)`` takes it."""
        return np.array([[target == name for name in self.variables]
                         for target in self.intervention_targets], dtype=bool).reshape(
            len(self.intervention_targets), len(self.variables))


def load_sachs(observational_only: bool = False) -> SachsData:
    """Load the Sachs data: all 7466 rows, or the 853 cd3cd28 rows if ``observational_only``.

    The values are raw fluorescence intensities; they are strongly right-skewed, so a log
    transform (``numpy.log(data)``) before fitting is common practice.
    """
    variables = list(SACHS_VARIABLES)
    data = _read_csv("sachs/sachs_853_obs.csv" if observational_only
                     else "sachs/sachs_7466.csv")
    if list(data.columns) != variables:
        raise RuntimeError(f"Bundled Sachs data has unexpected columns {list(data.columns)}; "
                           "the installation is damaged: reinstall prodag.")
    blocks = SACHS_CONDITIONS[:1] if observational_only else SACHS_CONDITIONS
    sizes = [size for _, size, _ in blocks]
    if sum(sizes) != len(data):
        raise RuntimeError(f"Bundled Sachs data has {len(data)} rows, expected {sum(sizes)}; "
                           "the installation is damaged: reinstall prodag.")
    conditions = np.repeat([name for name, _, _ in blocks], sizes)
    targets = np.repeat(np.array([target for _, _, target in blocks], dtype=object), sizes)
    return SachsData(
        data=data,
        graph=adjacency_from_edges(_read_csv("sachs/sachs_cdt18_edges.csv"), variables),
        graph_dag=adjacency_from_edges(_read_csv("sachs/sachs_consensus_edges.csv"), variables),
        variables=variables,
        conditions=conditions,
        intervention_targets=targets,
    )


@dataclass(frozen=True, eq=False)
class Munin1Graph:
    """The MUNIN subnetwork 1 graph.

    Attributes
    ----------
    graph : (186, 186) int 0/1 adjacency, ``[j, k] = 1`` means j → k; acyclic, 273 edges.
    nodes : list of the 186 node names, in the order of ``graph``'s rows and columns.
    """

    graph: np.ndarray
    nodes: list[str]

    def edges(self, graph: np.ndarray | None = None) -> list[tuple[str, str]]:
        """``(source, target)`` names of the edges of ``graph`` (default: ``self.graph``)."""
        return edge_names(self.graph if graph is None else graph, self.nodes)


def load_munin1() -> Munin1Graph:
    """Load the MUNIN1 graph (186 nodes, 273 edges)."""
    nodes = _read_csv("munin1/munin1_nodes.csv")["node"].tolist()
    graph = adjacency_from_edges(_read_csv("munin1/munin1_edges.csv"), nodes)
    return Munin1Graph(graph=graph, nodes=nodes)

"""Prior knowledge about the graph: forbidden and required edges, and tiers.

``Knowledge.create(columns, forbidden=..., required=..., tiers=...)`` reads what a user knows
and checks it before any fitting:

* edges as ``(source, target)`` pairs of variable names or column indices, a DataFrame with
  columns ``source`` and ``target``, or the path of such a CSV file;
* tiers as an ordered list of groups of variables (or a CSV path): no edge may go from a later
  tier to an earlier one; ``Tiers(groups, forbid_within=True)`` also forbids edges inside a
  tier; variables in no tier are unconstrained.

Contradictions (unknown names, self-loops, an edge both required and forbidden, a required
edge against the tiers, a cycle of required edges) raise ``KnowledgeError`` naming the edges.

The projection enforces the knowledge exactly in every sample (``prodag.project``'s
``allowed`` and ``required`` masks): forbidden entries are zero before the order search, every
order searched keeps the required edges forward, and required weights are neither shrunk by
the ℓ1 step nor pruned. So a fixed radius bounds the other weights only, a looser bound than
the same radius without the requirement: ``warn_fixed_radius`` says so.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

Edge = tuple[int, int]
GUIDE = "docs/guide/knowledge.md#required-edges-and-a-fixed-radius"


class KnowledgeError(ValueError):
    """The prior knowledge is malformed or contradicts itself."""


class KnowledgeWarning(UserWarning):
    """The knowledge is consistent, but combined with a setting it does more than it says."""


@dataclass(frozen=True)
class Tiers:
    """Tiers with their option: ``ProDAG(tiers=Tiers([["age"], ["x", "y"]], forbid_within=True))``.

    ``groups``: the ordered groups of variables (names or indices), or the path of a CSV with
    columns ``variable`` and ``tier``; ``forbid_within``: also forbid edges between variables
    of the same tier (a plain list of groups leaves them free)."""

    groups: object
    forbid_within: bool = False


@dataclass(frozen=True)
class Knowledge:
    """Knowledge about ``p`` variables as column indices (hashable, so compiled code that
    closes over it is cached per knowledge)."""

    p: int
    forbidden: tuple[Edge, ...] = ()
    required: tuple[Edge, ...] = ()
    tiers: tuple[tuple[int, ...], ...] = ()
    forbid_within_tiers: bool = False
    candidates: tuple[tuple[int, ...], ...] | None = None
    """Each variable's candidate parents (``prodag.inputs.candidates``), or None: any
    variable may parent any other. Not prior knowledge but the fit's screen of the data; an
    edge outside it is treated as forbidden."""

    @classmethod
    def create(cls, columns: Sequence[str], forbidden=None, required=None, tiers=None,
               forbid_within_tiers: bool = False) -> Knowledge | None:
        """The checked knowledge about the variables ``columns``; ``None`` when there is none.
        ``tiers`` may be a ``Tiers`` (its ``forbid_within`` adds to ``forbid_within_tiers``)."""
        if isinstance(tiers, Tiers):
            tiers, forbid_within_tiers = tiers.groups, tiers.forbid_within or forbid_within_tiers
        if forbidden is None and required is None and tiers is None:
            return None
        names = [str(c) for c in columns]
        knowledge = cls(len(names), _edges("forbidden", forbidden, names),
                        _edges("required", required, names), _tiers(tiers, names),
                        bool(forbid_within_tiers))
        knowledge._check(names)
        return knowledge

    # ---- masks -------------------------------------------------------------------------
    def tier_of(self) -> np.ndarray:
        """Tier index of every variable ``(p,)``; -1 for variables in no tier."""
        tier = np.full(self.p, -1)
        for index, group in enumerate(self.tiers):
            tier[list(group)] = index
        return tier

    def against_tiers(self) -> np.ndarray:
        """``(p, p)`` bool: edges j → k the tiers rule out."""
        tier = self.tier_of()
        both = (tier[:, None] >= 0) & (tier[None, :] >= 0)
        later = tier[:, None] > tier[None, :]
        if self.forbid_within_tiers:
            later |= (tier[:, None] == tier[None, :]) & ~np.eye(self.p, dtype=bool)
        return both & later

    def forbidden_mask(self) -> np.ndarray:
        """``(p, p)`` bool: every edge no sample may contain (given, against the tiers, or
        outside the candidate parents)."""
        mask = self.against_tiers()
        mask[tuple(np.array(self.forbidden, dtype=int).reshape(-1, 2).T)] = True
        if self.candidates is not None:
            for child, parents in enumerate(self.candidates):
                outside = np.ones(self.p, dtype=bool)
                outside[list(parents)] = False
                mask[:, child] |= outside
        return mask

    def allowed_mask(self) -> np.ndarray:
        """``(p, p)`` bool: edges a sample may contain (no self-loops, nothing forbidden)."""
        return ~self.forbidden_mask() & ~np.eye(self.p, dtype=bool)

    def candidate_support(self) -> tuple[tuple[int, ...], ...] | None:
        """Each variable's possible parents under the candidate screen (the allowed entries
        of its column, required edges included), or None without a screen."""
        if self.candidates is None:
            return None
        allowed = self.allowed_mask() | self.required_mask()
        return tuple(tuple(int(j) for j in np.flatnonzero(allowed[:, k]))
                     for k in range(self.p))

    def required_mask(self) -> np.ndarray:
        """``(p, p)`` bool: edges every sample contains."""
        mask = np.zeros((self.p, self.p), dtype=bool)
        mask[tuple(np.array(self.required, dtype=int).reshape(-1, 2).T)] = True
        return mask

    # ---- names -------------------------------------------------------------------------
    def as_names(self, columns: Sequence[str]) -> dict:
        """``{"forbidden", "required", "tiers"}`` as lists of names (JSON-ready)."""
        names = [str(c) for c in columns]
        return {"forbidden": [[names[j], names[k]] for j, k in self.forbidden],
                "required": [[names[j], names[k]] for j, k in self.required],
                "tiers": [[names[v] for v in group] for group in self.tiers]}

    # ---- checks ------------------------------------------------------------------------
    def _check(self, names: list[str]) -> None:
        def listed(edges):
            return ", ".join(f"{names[j]} -> {names[k]}" for j, k in sorted(edges))

        for kind in ("forbidden", "required"):
            loops = [(j, k) for j, k in getattr(self, kind) if j == k]
            if loops:
                raise KnowledgeError(f"{kind} edges must join two different variables: "
                                     f"{listed(loops)}")
        both = set(self.required) & set(self.forbidden)
        if both:
            raise KnowledgeError(f"edges both required and forbidden: {listed(both)}")
        against = self.against_tiers()
        clash = [(j, k) for j, k in self.required if against[j, k]]
        if clash:
            raise KnowledgeError(f"required edges against the tiers: {listed(clash)} (an "
                                 "edge may not go from a later tier to an earlier one"
                                 + (" or stay inside a tier)" if self.forbid_within_tiers
                                    else ")"))
        cycle = _a_cycle(self.required)
        if cycle:
            raise KnowledgeError(f"the required edges contain a cycle: {listed(cycle)}")


def warn_fixed_radius(knowledge: Knowledge | None, lam, columns: Sequence[str]) -> bool:
    """Warn (``KnowledgeWarning``) when required edges meet a fixed, finite radius ``lam``,
    and say whether it did. Required weights lie outside the ℓ1 ball, so ``lam`` bounds the
    other weights only: the budget a required edge used without the requirement goes to the
    others, and an edge the radius kept out can come in (``GUIDE``). ``lam="auto"`` builds
    its λ grid from the other weights, and ``lam=inf`` has no ball: neither is warned of."""
    if knowledge is None or not knowledge.required or isinstance(lam, str) or math.isinf(lam):
        return False
    names = [str(c) for c in columns]
    edges = ", ".join(f"{names[j]} -> {names[k]}" for j, k in knowledge.required[:4])
    more = f" and {len(knowledge.required) - 4} more" if len(knowledge.required) > 4 else ""
    warnings.warn(
        f"lam={lam:g} is a fixed radius, and the required edge(s) {edges}{more} lie outside "
        "its l1 ball: it bounds the other weights only, which gain the share of it the "
        "required edges would have used, so edges the radius kept out can come in (a "
        "larger radius in effect). Let lam='auto' choose the radius with the knowledge "
        "(prodag fit --lam auto), or lower lam by about the required weights' total size. "
        f"See {GUIDE}.", KnowledgeWarning, stacklevel=4)
    return True


def _a_cycle(edges: Sequence[Edge]) -> list[Edge]:
    import networkx as nx

    graph = nx.DiGraph(list(edges))
    try:
        return list(nx.find_cycle(graph))
    except nx.NetworkXNoCycle:
        return []


def _index(value, names: list[str], what: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if 0 <= value < len(names):
            return int(value)
        raise KnowledgeError(f"{what}: column index {value} is out of range for "
                             f"{len(names)} variables")
    if str(value) in names:
        return names.index(str(value))
    raise KnowledgeError(f"{what}: unknown variable {value!r}; the variables are "
                         f"{', '.join(names)}")


def _read_table(path: Path, what: str, header: str) -> pd.DataFrame:
    """The CSV file ``path`` of ``what`` as strings; a missing, empty or unreadable file is a
    ``KnowledgeError`` naming it and the header it needs."""
    if not path.is_file():
        raise KnowledgeError(f"{what}: no file {path}")
    try:
        return pd.read_csv(path, dtype=str, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise KnowledgeError(f"{what}: the file {path} is empty; it needs a header row "
                             f"{header} and one row per entry") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise KnowledgeError(f"{what}: could not read {path} as a CSV table with the header "
                             f"{header}: {' '.join(str(error).split())}") from None


def _edges(kind: str, edges, names: list[str]) -> tuple[Edge, ...]:
    """``edges`` (pairs, a DataFrame with source/target columns, or a CSV path) as sorted,
    distinct index pairs."""
    if edges is None:
        return ()
    if isinstance(edges, (str, Path)):
        edges = _read_table(Path(edges), f"{kind} edges", "source,target")
    if isinstance(edges, pd.DataFrame):
        columns = {str(c).strip().lower(): c for c in edges.columns}
        if not {"source", "target"} <= set(columns):
            raise KnowledgeError(f"{kind} edges: the table needs the columns source and "
                                 f"target; it has {', '.join(map(str, edges.columns))}")
        edges = list(zip(edges[columns["source"]], edges[columns["target"]]))
    pairs = []
    for edge in edges:
        if isinstance(edge, str) or len(edge) != 2:
            raise KnowledgeError(f"{kind} edges must be (source, target) pairs; got {edge!r}")
        pairs.append((_index(edge[0], names, f"{kind} edge {tuple(edge)}"),
                      _index(edge[1], names, f"{kind} edge {tuple(edge)}")))
    return tuple(sorted(set(pairs)))


def _tiers(tiers, names: list[str]) -> tuple[tuple[int, ...], ...]:
    """``tiers`` (groups of names or indices, or a table or CSV path with columns variable and
    tier) as groups of indices, earliest first. Errors start with ``tiers`` and the file's
    path, and name a tier as given: by the table's own labels (``tiers 0 and 1``), or by its
    place in the list (``tiers[0]``); a variable in two tiers is one of them."""
    if tiers is None:
        return ()
    source = "tiers"
    if isinstance(tiers, (str, Path)):
        source = f"tiers {tiers}"
        tiers = _read_table(Path(tiers), "tiers", "variable,tier")
    if isinstance(tiers, pd.DataFrame):
        labelled = _labelled_groups(tiers, source)
    elif all(isinstance(group, (list, tuple, set, frozenset)) for group in tiers):
        labelled = [(f"[{number}]", group) for number, group in enumerate(tiers)]
    else:
        raise KnowledgeError("tiers must be an ordered list of groups of variables, e.g. "
                             "[['age', 'sex'], ['smoking'], ['cancer']]")

    def where(label: str) -> str:
        return f"tiers{label}" if label.startswith("[") else f"{source}, tier {label}"

    seen: dict[int, str] = {}
    groups = []
    for label, group in labelled:
        indices = sorted({_index(v, names, where(label)) for v in group})
        for v in indices:
            if v in seen:
                both = (f"tiers{seen[v]} and tiers{label}" if label.startswith("[")
                        else f"tiers {seen[v]} and {label}")
                raise KnowledgeError(f"{source}: variable {names[v]!r} is in {both}; list "
                                     "each variable once, in its one tier")
            seen[v] = label
        groups.append(tuple(indices))
    return tuple(groups)


def _labelled_groups(table: pd.DataFrame, source: str) -> list[tuple[str, list]]:
    """The ``(label, variables)`` of each tier of ``table`` (columns variable and tier, any
    case), earliest tier first; a label is the tier as the table writes it."""
    columns = {str(c).strip().lower(): c for c in table.columns}
    if not {"variable", "tier"} <= set(columns):
        raise KnowledgeError(f"{source}: the table needs the columns variable and tier (an "
                             "integer, earlier tiers first); it has "
                             f"{', '.join(map(str, table.columns))}")
    labels = table[columns["tier"]]
    rank = pd.to_numeric(labels, errors="coerce")
    bad = [row for row, value in enumerate(rank)
           if not (np.isfinite(value) and float(value).is_integer())]
    if bad:
        value = labels.iloc[bad[0]]
        raise KnowledgeError(f"{source}: the tier column must hold integers (earlier tiers "
                             f"first); row {bad[0]} (counted from 0, the header not counted) "
                             f"has {'no tier' if pd.isna(value) else repr(value)}")
    frame = pd.DataFrame({"variable": table[columns["variable"]].to_numpy(),
                          "label": labels.astype(str).str.strip().to_numpy(),
                          "rank": rank.to_numpy()})
    return [(str(group["label"].iloc[0]), list(group["variable"]))
            for _, group in frame.groupby("rank", sort=True)]

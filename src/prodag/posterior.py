"""The fitted posterior: drawing projected samples, summarising them, and saving parameters.

Samples are drawn in batches of a fixed size by one compiled function, so any number of
samples reuses one compilation; batch ``b`` uses the key ``fold_in(key, b)``, so the first
``m`` samples of a request for ``n ≥ m`` are the same as those of a request for ``m``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from prodag.inference import ProjectFn, projected_draw
from prodag.models.base import StructuralEquationModel

SAMPLE_BATCH_SIZE = 100
FORMAT_VERSION = 1


class PosteriorSampler:
    """Draws ``(weights, W)`` from ``pro_λ(q(ω̃))`` for fixed variational parameters."""

    def __init__(self, model: StructuralEquationModel, project_fn: ProjectFn):
        self.model = model
        self.project_fn = project_fn
        self._draw_batch = jax.jit(
            lambda params, key, lam: projected_draw(model, project_fn, params, key,
                                                    SAMPLE_BATCH_SIZE, lam))

    def sample(self, params: dict, key: jax.Array, n: int,
               lam: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """``n`` draws: the weights (numpy pytree, leading axis n) and graphs ``(n, p, p)``.

        ``params`` are the fitted parameters (``{"q": ..., ...}``, see ``projected_draw``)."""
        dtype = jax.tree.leaves(params)[0].dtype
        lam = jnp.asarray(lam, dtype)
        batches = [self._draw_batch(params, jax.random.fold_in(key, b), lam)
                   for b in range(-(-n // SAMPLE_BATCH_SIZE))]
        weights = {name: np.concatenate([np.asarray(w[name]) for w, _ in batches])[:n]
                   for name in batches[0][0]}
        graphs = np.concatenate([np.asarray(g) for _, g in batches])[:n]
        return weights, graphs


def edge_frequencies(graphs: np.ndarray) -> np.ndarray:
    """Fraction of samples ``(n, p, p)`` with a nonzero entry, shape ``(p, p)``."""
    return np.mean(graphs != 0, axis=0)


def mean_weight_given_edge(graphs: np.ndarray) -> np.ndarray:
    """Mean of each entry over the samples where it is nonzero (0 where never), ``(p, p)``."""
    counts = np.sum(graphs != 0, axis=0)
    return np.sum(graphs, axis=0) / np.maximum(counts, 1)


# ---- persistence: one .npz of arrays plus a JSON metadata string, no pickle ----------------

def flatten_tree(tree: dict[str, Any], prefix: str = "") -> dict[str, np.ndarray]:
    """Nested dicts of arrays → flat ``{"a/b/c": array}``."""
    flat = {}
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(flatten_tree(value, key + "/"))
        else:
            flat[key] = np.asarray(value)
    return flat


def unflatten_tree(flat: dict[str, np.ndarray]) -> dict[str, Any]:
    """Inverse of ``flatten_tree``."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split("/")
        node = tree
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return tree


def write_npz(path: str | Path, arrays: dict[str, np.ndarray], metadata: dict) -> None:
    """Save ``arrays`` under ``arrays/<name>`` and ``metadata`` as JSON under ``metadata``."""
    payload = {f"arrays/{name}": np.asarray(a) for name, a in arrays.items()}
    payload["metadata"] = np.asarray(json.dumps({"format_version": FORMAT_VERSION, **metadata}))
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **payload)


def read_npz(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """Load what ``write_npz`` saved, without unpickling anything."""
    with np.load(path, allow_pickle=False) as archive:
        if "metadata" not in archive.files:
            raise ValueError(f"{path} is not a file saved by ProDAG.save (no metadata entry).")
        metadata = json.loads(str(archive["metadata"]))
        arrays = {name.removeprefix("arrays/"): archive[name]
                  for name in archive.files if name.startswith("arrays/")}
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path} has format version {metadata.get('format_version')}; "
                         f"this prodag reads version {FORMAT_VERSION}.")
    return arrays, metadata

"""What a training step's kernels cost on candidate parents, dense against on the support.

For each p: the suite's simulator (ER, s = 2p edges, n rows), the default screen's candidate
parents (``prodag.inputs.candidates``, K = 16, made symmetric), and ``--samples`` draws
W̃ ~ N(0, 1) on the candidate entries (zero elsewhere, as the projection's input is). Timed
per draw, each call compiled first and ended by ``block_until_ready``:

* the order search: the dense numba kernel against the one over neighbour lists (and whether
  their orders are equal: they must be, bit for bit);
* the projection (search and ℓ1 step): ``project`` against ``project_on_entries``;
* the likelihood and its gradient: the dense ``(I − W)ᵀ G (I − W)`` against each column's
  candidate parents (``LinearSEM(parents)``);
* a whole training step's draws, with the gradient in the variational parameters: drawing
  dense ``(p, p)`` matrices (``LinearSEM.draw``, then the likelihood on parents) against
  drawing the candidate slots alone (``LinearSEM.draw_log_likelihood``, ``(p, K)`` a draw).

    PYTHONPATH=src python -m benchmarks.studies.support_kernels --p 100 200 300 500 1000

Prints a table and writes ``benchmarks/results/support_kernels[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from prodag.evaluation.simulate import dataset
from prodag.inputs import candidates
from prodag.inputs.knowledge import Knowledge
from prodag.models import variational
from prodag.models.linear import LinearSEM
from prodag.projection.api import make_projector, project, project_on_entries
from prodag.projection.search_kernel import neighbour_lists, search_positions_batch
from prodag.projection.search_kernel_sparse import on_neighbours, search_positions_batch_sparse

from .. import RESULTS_DIR

K = 16


def per_draw(function, *args, repeats: int = 2) -> float:
    """Median milliseconds per draw of ``function(*args)`` (first call not timed)."""
    jax.block_until_ready(function(*args))
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - began)
    return 1000 * float(np.median(times)) / args[0].shape[0]


def measure(p: int, n: int, samples: int, seed: int = 0) -> dict:
    X = dataset(p, 2 * p, n, seed=seed).X
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    mask = candidates.neighbour_mask(Z, K)
    knowledge = Knowledge(p, candidates=candidates.from_mask(mask))
    allowed = knowledge.allowed_mask()
    rng = np.random.default_rng(seed)
    W_tilde = (rng.normal(size=(samples, p, p)) * allowed).astype(np.float32)
    squared = np.ascontiguousarray(W_tilde ** 2)
    neighbours, degree = neighbour_lists(allowed)
    outgoing, incoming = on_neighbours(squared, neighbours, degree)
    same = np.array_equal(search_positions_batch(squared, 10, 1e-6),
                          search_positions_batch_sparse(outgoing, incoming, neighbours, degree,
                                                        10, 1e-6))
    row = {"p": p, "n": n, "samples": samples, "mean_neighbours": float(degree.mean()),
           "same_orders": bool(same),
           "search_dense_ms": per_draw(lambda s: search_positions_batch(s, 10, 1e-6), squared),
           "search_sparse_ms": per_draw(lambda s: search_positions_batch_sparse(
               *on_neighbours(s, neighbours, degree), neighbours, degree, 10, 1e-6), squared)}
    W_tilde = jnp.asarray(W_tilde)
    lam = jnp.float32(float(np.abs(W_tilde).sum(axis=(1, 2)).mean()) / 4)
    entries = np.nonzero(allowed)
    dense_projection = jax.jit(lambda w: project(w, lam, allowed=allowed))
    support_projection = jax.jit(lambda w: project_on_entries(w, lam, entries, allowed=allowed))
    row["project_dense_ms"] = per_draw(dense_projection, W_tilde)
    row["project_entries_ms"] = per_draw(support_projection, W_tilde)
    W = support_projection(W_tilde)
    noise = jnp.ones(p)
    for name, model in (("dense", LinearSEM()), ("parents", LinearSEM(
            knowledge.candidate_support()))):
        data = model.prepare_data(jnp.asarray(Z, jnp.float32))
        value_and_grad = jax.jit(jax.value_and_grad(
            lambda w: model.log_likelihood({"W": w}, data, noise).sum()))
        row[f"likelihood_{name}_ms"] = per_draw(value_and_grad, W)
    row.update(training_draws(knowledge, jnp.asarray(Z, jnp.float32), lam, samples, rng))
    return row


def training_draws(knowledge: Knowledge, Z: jax.Array, lam: jax.Array, samples: int,
                   rng: np.random.Generator) -> dict:
    """Milliseconds per draw of a training step's draws, their likelihood and its gradient in
    ``q``: dense draws against the candidate slots alone."""
    p = Z.shape[1]
    projector = make_projector("auto", 0.0, knowledge)
    model = LinearSEM(knowledge.candidate_support())
    data, noise = model.prepare_data(Z), jnp.ones(p)
    q = variational.VariationalParams(
        {"W": jnp.asarray(rng.normal(scale=0.3, size=(p, p)), jnp.float32)},
        {"W": jnp.full((p, p), variational.inverse_softplus(0.5), jnp.float32)})

    def dense(q, key):
        weights, _ = model.draw(q, key, samples, projector, lam)
        return jnp.mean(model.log_likelihood(weights, data, noise))

    def slots(q, key):
        return jnp.mean(model.draw_log_likelihood(q, key, samples, projector, lam, data, noise))

    timed = {}
    for name, function in (("dense", dense), ("slots", slots)):
        step = jax.jit(jax.value_and_grad(function))
        jax.block_until_ready(step(q, jax.random.PRNGKey(0)))
        times = []
        for repeat in range(2):
            began = time.perf_counter()
            jax.block_until_ready(step(q, jax.random.PRNGKey(repeat + 1)))
            times.append(time.perf_counter() - began)
        timed[f"training_{name}_ms"] = 1000 * float(np.median(times)) / samples
    return timed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, nargs="+", default=[100, 200, 300, 500, 1000])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'p':>5} {'D':>5} {'search dense':>13} {'sparse':>8} {'same':>5} "
          f"{'project dense':>14} {'entries':>8} {'lik+grad dense':>15} {'parents':>8} "
          f"{'step dense':>11} {'slots':>6}  (ms/draw)")
    for p in args.p:
        row = measure(p, args.n, args.samples)
        rows.append(row)
        print(f"{p:>5} {row['mean_neighbours']:>5.1f} {row['search_dense_ms']:>13.2f} "
              f"{row['search_sparse_ms']:>8.2f} {str(row['same_orders']):>5} "
              f"{row['project_dense_ms']:>14.2f} {row['project_entries_ms']:>8.2f} "
              f"{row['likelihood_dense_ms']:>15.2f} {row['likelihood_parents_ms']:>8.2f} "
              f"{row['training_dense_ms']:>11.2f} {row['training_slots_ms']:>6.2f}",
              flush=True)
    name = "support_kernels" + (f"_{args.tag}" if args.tag else "")
    out = RESULTS_DIR / f"{name}.json"
    out.write_text(json.dumps({"rows": rows, "load": os.getloadavg()[0]}, indent=1))
    print(f"load {os.getloadavg()[0]:.2f}; wrote {out}")


if __name__ == "__main__":
    main()

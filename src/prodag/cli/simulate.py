"""``prodag simulate``: a dataset from a random DAG, as in the paper's Appendix E."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer

from prodag.cli import options as o
from prodag.cli.errors import friendly_errors
from prodag.cli.folders import check_out, results_folder
from prodag.evaluation import simulate as simulators
from prodag.graph import edge_names
from prodag.resources import (check_memory, check_simulation, format_duration,
                              simulation_bytes)

ANNOUNCED_SIMULATION_SECONDS = 30.0
"""Simulations estimated to take longer than this say so before they start."""

DEFAULTS = {name: parameter.default
            for name, parameter in inspect.signature(simulators.dataset).parameters.items()}
"""The defaults of ``prodag.evaluation.simulate.dataset``, shared with this command."""


SIMULATED_FILES = ["data.csv", "graph.csv", "weights.csv"]
"""The files of a ``prodag simulate`` folder."""
TARGET_COLUMN = "target"
"""Column of data.csv naming each row's intervention target (empty: observational)."""
GRAPH_NAMES = {"er": "an Erdős–Rényi", "sf": "a scale-free"}
"""How the confirmation line names each random-graph kind."""


@friendly_errors
def simulate(
    out: Annotated[Path, typer.Option(help="Folder for the files (created if missing).")]
    = Path("prodag-simulated"),
    p: Annotated[int, typer.Option("--p", min=2, help="Number of variables.")] = 20,
    edges: Annotated[int, typer.Option(min=0, help="Number of edges s of the true DAG.")] = 40,
    n: Annotated[int, typer.Option("--n", min=1, help="Number of observations (rows).")] = 100,
    graph: Annotated[o.GraphKind, typer.Option(
        help="Random graph: 'er' (Erdős–Rényi) or 'sf' (scale-free).")]
    = o.GraphKind(DEFAULTS["graph"]),
    exponent: Annotated[float, typer.Option(
        help="Degree exponent of scale-free graphs (the paper uses 2 and 3).")]
    = DEFAULTS["exponent"],
    sem: Annotated[o.SimulatedSem, typer.Option(
        help="'linear' (x = Wᵀx + ε) or 'mlp' (one ReLU network per variable).")]
    = o.SimulatedSem(DEFAULTS["sem"]),
    noise: Annotated[o.Noise, typer.Option(help="Distribution of the noise.")]
    = o.Noise(DEFAULTS["noise"]),
    seed: Annotated[int, typer.Option(
        min=0, help="Random seed of the graph, its weights and the noise.")] = 0,
    interventions: Annotated[int, typer.Option(
        min=0, help="Random single-variable targets of perfect interventions: after the n "
                    "observational rows, --rows-per-target rows per target, each named in "
                    "the column 'target' of data.csv (empty for observational rows). Fit "
                    "them with prodag fit data.csv --interventions target.")] = 0,
    rows_per_target: Annotated[int, typer.Option(
        min=1, help="Rows per intervention target.")] = 10,
):
    """Simulate a dataset from a random DAG as in the paper's Appendix E.

    Writes data.csv (n rows, columns x0..x{p-1}), graph.csv (the true edges, columns
    source,target) and, for linear SEMs, weights.csv (the p × p weighted adjacency,
    row = parent). Score a fit against it with: prodag evaluate RESULTS --truth graph.csv
    """
    check_out(out, SIMULATED_FILES)
    rows = n + interventions * rows_per_target
    check_memory(simulation_bytes(p, rows), f"Simulating --p {p} variables and --n {n} rows",
                 "lower --p or --n.")
    seconds = check_simulation(p, rows)
    if seconds > ANNOUNCED_SIMULATION_SECONDS:
        typer.echo(f"Simulating {p} variables may take {format_duration(seconds)} (a rough "
                   "estimate)...")
    data = simulators.dataset(p, edges, n, graph=graph.value, sem=sem.value, noise=noise.value,
                              exponent=exponent, seed=seed,
                              interventions=interventions or None,
                              rows_per_target=rows_per_target)
    variables = [f"x{j}" for j in range(p)]
    table = pd.DataFrame(data.X, columns=variables)
    if data.interventions is not None:
        table[TARGET_COLUMN] = [";".join(variables[k] for k in np.flatnonzero(row))
                                for row in data.interventions]
    written = ["data.csv", "graph.csv"] + (["weights.csv"] if sem.value == "linear" else [])
    with results_folder(out, SIMULATED_FILES) as folder:
        table.to_csv(folder / "data.csv", index=False)
        pd.DataFrame(edge_names(data.adjacency, variables), columns=["source", "target"]).to_csv(
            folder / "graph.csv", index=False)
        if sem.value == "linear":
            pd.DataFrame(data.weights, index=variables, columns=variables).to_csv(
                folder / "weights.csv")
    extra = (f" plus {rows_per_target} rows under an intervention on each of "
             f"{', '.join(variables[k] for k in data.targets)} (column '{TARGET_COLUMN}')"
             if data.interventions is not None else "")
    typer.echo(f"Simulated n={n} rows{extra} from a {sem.value} SEM on "
               f"{GRAPH_NAMES[graph.value]} DAG with p={p} variables and "
               f"{int(np.count_nonzero(data.adjacency))} edges ({noise.value} noise, seed {seed}): "
               + ", ".join(str(out / name) for name in written))

"""The ``prodag`` command: fit a posterior over DAGs to a CSV file, run the Sachs demo,
simulate data, score a posterior against a known graph, and run the benchmark suite.

Every command validates its inputs and reports a problem as one red ``Error: ...`` line with
exit code 2 (never a traceback). JAX and the estimator are imported inside the commands, so
``prodag --help`` answers at once.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import pandas as pd
import typer

from prodag.validation import DataError, check_data

app = typer.Typer(
    name="prodag",
    help=(
        "Bayesian structure learning of directed acyclic graphs (DAGs) with projected "
        "variational inference (ProDAG).\n\n"
        "Give it a CSV table (one row per observation, one column per variable): "
        "[bold]prodag fit data.csv --out results/[/bold] learns a posterior over DAGs and writes "
        "edge probabilities, sampled graphs and pictures. [bold]prodag demo[/bold] does this "
        "on the bundled Sachs protein-signalling data and compares with the consensus graph."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)

PAPER_SACHS_ROW = {"brier": 16.0, "eshd": 18.0, "ef1": 24.0, "auroc": 60.0}
"""ProDAG's row of Table 2 of the paper (Sachs data, 18-edge consensus graph)."""

FALLBACK_EDGES = 10
"""How many edges ``print_edges`` lists when none reaches the probability threshold."""

METRIC_COLUMNS = {"brier": "Brier", "eshd": "E-SHD", "ef1": "E-F1 (%)",
                  "auroc": "AUROC (%)"}
"""The four posterior metrics (keys of :func:`prodag.metrics.evaluate`) and their titles."""


COMPILATION_CACHE_VARIABLE = "PRODAG_COMPILATION_CACHE"
"""Environment variable naming the folder for JAX's compiled programs, or ``off``."""


def compilation_cache_dir() -> Path | None:
    """Where the ``prodag`` command keeps JAX's compiled programs between runs.

    ``$PRODAG_COMPILATION_CACHE`` if set (``off`` for no cache), else
    ``$XDG_CACHE_HOME/prodag/jax`` (``~/.cache/prodag/jax``). Reusing them saves the
    compilation at the start of every fit (an MLP fit at p = 10, n = 100: 67.8 s cold, 51.3 s
    with the cache, on a quiet 2-core CPU).
    """
    setting = os.environ.get(COMPILATION_CACHE_VARIABLE, "").strip()
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache_home) / "prodag" / "jax"


def main() -> None:
    """Entry point of the ``prodag`` console script: JAX's persistent compilation cache on
    (``compilation_cache_dir``; a ``JAX_COMPILATION_CACHE_DIR`` of the user's wins), then
    the command."""
    directory = compilation_cache_dir()
    if directory is not None:
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(directory))
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")
    app()


def _friendly_errors(command):
    """Turn a user-facing failure (bad file, bad value) into one red line and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (DataError, ValueError, OSError, KeyError) as error:
            message = error.args[0] if isinstance(error, KeyError) and error.args else error
            if isinstance(error, FileNotFoundError) and error.filename:
                message = f"{error.strerror}: {error.filename}"
            typer.secho(f"Error: {message}", fg="red", err=True)
            raise typer.Exit(code=2) from None

    return wrapper


# ----------------------------------------------------------------------------------------------
# Reading and preparing inputs
# ----------------------------------------------------------------------------------------------

def read_table(path: Path) -> pd.DataFrame:
    """Read a CSV data table; a first column with an empty header is taken as the row index."""
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DataError(f"Could not read {path} as a CSV table: {error}") from None
    if len(frame.columns) and str(frame.columns[0]).startswith("Unnamed: 0"):
        frame = frame.set_index(frame.columns[0])
    return frame


def log_transform(frame: pd.DataFrame) -> pd.DataFrame:
    """Natural log of every value; all values must be positive."""
    data, names = check_data(frame)
    nonpositive = [name for name, low in zip(names, data.min(axis=0)) if low <= 0]
    if nonpositive:
        raise DataError(f"--log-transform needs positive values, but column(s) "
                        f"{', '.join(nonpositive)} contain values <= 0. Shift those columns "
                        "or drop --log-transform.")
    return pd.DataFrame(np.log(data), columns=names, index=frame.index)


def parse_lam(text: str) -> float | None:
    """The ``--lam`` text as a radius: ``"auto"`` → ``None`` (chosen by ``--select-by``),
    ``"inf"`` → ∞, else a positive float."""
    value = text.strip().lower()
    if value == "auto":
        return None
    try:
        lam = float(value)
    except ValueError:
        raise ValueError(f"--lam must be 'auto', 'inf' or a positive number, got {text!r}") \
            from None
    if not lam > 0:
        raise ValueError(f"--lam must be positive (the l1-ball radius), got {text!r}")
    return lam


def read_graph(path: Path, variables: list[str]) -> np.ndarray:
    """A true graph from CSV as a ``(p, p)`` 0/1 adjacency over ``variables``.

    Two layouts are accepted: an edge list with columns ``source,target`` (one directed edge
    per row), or a ``p × p`` adjacency matrix whose first column and header hold the variable
    names (nonzero ``[j, k]`` = edge j → k).
    """
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    frame = pd.read_csv(path)
    index = {name: j for j, name in enumerate(variables)}
    adjacency = np.zeros((len(variables), len(variables)))
    if {"source", "target"} <= set(frame.columns):
        named = set(frame["source"].astype(str)) | set(frame["target"].astype(str))
        unknown = sorted(named - set(index))
        if unknown:
            raise DataError(f"The graph file {path} names variables that are not in the data: "
                            f"{', '.join(unknown)}. Known variables: {', '.join(variables)}.")
        for source, target in zip(frame["source"].astype(str), frame["target"].astype(str)):
            adjacency[index[source], index[target]] = 1.0
        return adjacency
    matrix = frame.set_index(frame.columns[0])
    matrix.index = matrix.index.astype(str)
    if sorted(matrix.index) != sorted(variables) or sorted(matrix.columns) != sorted(variables):
        raise DataError(f"The graph file {path} is neither an edge list (columns 'source,target')"
                        " nor an adjacency matrix labelled by the variables "
                        f"({', '.join(variables)}).")
    return (matrix.loc[variables, variables].to_numpy(dtype=float) != 0).astype(float)


# ----------------------------------------------------------------------------------------------
# Fitting and writing results
# ----------------------------------------------------------------------------------------------

def fit_posterior(frame: pd.DataFrame, *, sem: str, lam: float | None, n_samples: int,
                  max_epochs: int, seed: int, projection: str, standardize: bool,
                  prune: float, progress: bool, select_by: str = "elbo",
                  restarts: int | None = None, hidden_units: int | None = None,
                  bias: bool | None = None):
    """A fitted :class:`prodag.ProDAG` on ``frame`` and the seconds the fit took.

    ``hidden_units`` and ``bias`` left at ``None`` keep the estimator's defaults.
    """
    from prodag import ProDAG

    network = {name: value for name, value in (("hidden_units", hidden_units), ("bias", bias))
               if value is not None}
    estimator = ProDAG(sem=sem, lam=lam, n_samples=n_samples, max_epochs=max_epochs, seed=seed,
                       projection=projection, standardize=standardize, prune=prune,
                       progress=progress, select_by=select_by, n_restarts=restarts, **network)
    start = time.perf_counter()
    estimator.fit(frame)
    return estimator, time.perf_counter() - start


def write_results(estimator, variables: list[str], out: Path, *, threshold: float,
                  n_draws: int, truth: np.ndarray | None = None) -> dict:
    """Write the posterior's files into ``out``; return their names, the drawn ``samples``
    and the edge ``probabilities`` computed from them.

    Files: ``edge_probabilities.csv`` (p × p, row = parent, column = child),
    ``samples.npz`` (``samples`` (n_draws, p, p) weighted DAGs, ``variables``),
    ``posterior.npz`` (the estimator's ``save``), ``heatmap.png`` and ``graph.png``.
    """
    from prodag import plotting

    out.mkdir(parents=True, exist_ok=True)
    samples = np.asarray(estimator.sample(n_draws))
    probs = (samples != 0).mean(axis=0)
    files = {"edge_probabilities": "edge_probabilities.csv", "samples": "samples.npz",
             "posterior": "posterior.npz", "heatmap": "heatmap.png", "graph": "graph.png"}
    pd.DataFrame(probs, index=variables, columns=variables).to_csv(
        out / files["edge_probabilities"])
    np.savez_compressed(out / files["samples"], samples=samples, variables=np.array(variables))
    estimator.save(out / files["posterior"])
    plotting.plot_edge_probabilities(probs, variables, true_graph=truth).savefig(
        out / files["heatmap"], dpi=150)
    plotting.plot_graph(probs, threshold, variables).savefig(out / files["graph"], dpi=150)
    return {"files": files, "probabilities": probs, "samples": samples}


def ranked_edges(probs: np.ndarray, variables: list[str], samples: np.ndarray,
                 truth: np.ndarray | None = None) -> pd.DataFrame:
    """Every edge of some sample, most probable first, with the mean weight of the samples
    that contain it (and, given ``truth``, whether it is a true edge)."""
    present = samples != 0
    rows = []
    for j, k in zip(*np.nonzero(probs > 0)):
        weights = samples[:, j, k][present[:, j, k]]
        row = {"source": variables[j], "target": variables[k],
               "probability": float(probs[j, k]),
               "mean_weight": float(weights.mean()) if weights.size else 0.0}
        if truth is not None:
            row["true_edge"] = bool(truth[j, k])
        rows.append(row)
    columns = ["source", "target", "probability", "mean_weight"]
    table = pd.DataFrame(rows, columns=columns + (["true_edge"] if truth is not None else []))
    return table.sort_values("probability", ascending=False, kind="stable").reset_index(drop=True)


def print_edges(table: pd.DataFrame, threshold: float, top: int) -> None:
    """Print the ``top`` most probable edges of ``table`` (``ranked_edges``) that reach
    ``threshold``; if none does, the ``min(top, FALLBACK_EDGES)`` most probable instead, so a
    diffuse posterior still shows where its mass lies."""
    above = table[table["probability"] >= threshold]
    if above.empty:
        shown = table.head(min(top, FALLBACK_EDGES))
        typer.echo(f"\nNo edge has posterior probability >= {threshold:g}"
                   + (f"; the {len(shown)} most probable:" if len(shown) else
                      "; no sampled graph has any edge."))
    else:
        shown = above.head(top)
        typer.echo(f"\n{len(above)} edge(s) with posterior probability >= {threshold:g}"
                   + (f" (top {top} shown)" if len(above) > top else "") + ":")
    if shown.empty:
        return
    truth = "true_edge" in table
    typer.echo(f"  {'rank':>4}  {'edge':<28} {'P(edge)':>8} {'mean weight':>12}"
               + ("  in true graph" if truth else ""))
    for rank, row in enumerate(shown.to_dict(orient="records"), start=1):
        edge = f"{row['source']} -> {row['target']}"
        typer.echo(f"  {rank:>4}  {edge:<28} {row['probability']:>8.3f} "
                   f"{row['mean_weight']:>12.3f}"
                   + (f"  {'yes' if row['true_edge'] else 'no'}" if truth else ""))


def posterior_metrics(samples: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Brier score, expected SHD, expected F1 and AUROC of posterior ``samples`` vs ``truth``."""
    from prodag import metrics

    return {name: float(value) for name, value in metrics.evaluate(truth, samples).items()}


def format_metric(name: str, value: float) -> str:
    return f"{value:.1f}" if name in ("ef1", "auroc") else f"{value:.2f}"


def print_metrics_table(rows: dict[str, dict[str, float]]) -> None:
    """Print one line per labelled metric dict, columns Brier, E-SHD, E-F1 (%), AUROC (%)."""
    width = max(len(label) for label in rows) + 2
    typer.echo(" " * width + "".join(f"{title:>12}" for title in METRIC_COLUMNS.values()))
    for label, values in rows.items():
        typer.echo(f"{label:<{width}}" + "".join(
            f"{format_metric(name, values[name]):>12}" for name in METRIC_COLUMNS))


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(path: Path, content: dict) -> None:
    path.write_text(json.dumps(content, indent=2, default=_json_default) + "\n")


# ----------------------------------------------------------------------------------------------
# Commands
# ----------------------------------------------------------------------------------------------

SemOption = Annotated[str, typer.Option(
    help="Structural equation model: 'linear' (weighted adjacency) or 'mlp' (one neural "
         "network per variable).")]
LamOption = Annotated[str, typer.Option(
    help="Radius of the l1 ball that sets sparsity: 'auto' chooses it among 10 radii by "
         "--select-by (11 fits), 'inf' applies no l1 constraint, or a positive number.")]
SelectByOption = Annotated[str, typer.Option(
    help="How --lam auto chooses: 'elbo' (the highest evidence lower bound, all rows fitted) "
         "or 'validation' (the paper's: likelihood of a 10% held-out split, then a refit).")]
RestartsOption = Annotated[Optional[int], typer.Option(
    min=1, show_default="3 for linear, 1 for mlp",
    help="Fits per radius, the best ELBO kept: the odd-numbered ones from the "
         "data-driven start (linear) or the prior (mlp), the even-numbered ones from "
         "the prior.")]
NSamplesOption = Annotated[int, typer.Option(
    min=1, help="Monte Carlo samples of the graph per optimisation step (L).")]
MaxEpochsOption = Annotated[int, typer.Option(
    min=1, help="Most optimisation epochs per fit (it stops earlier when the objective stalls).")]
SeedOption = Annotated[int, typer.Option(help="Random seed (fit, validation split, sampling).")]
ProjectionOption = Annotated[str, typer.Option(
    help="Projection onto DAGs: 'auto', 'exact' (small p), 'search' or 'path' (the paper's).")]
StandardizeOption = Annotated[bool, typer.Option(
    "--standardize/--no-standardize",
    help="Scale every variable to mean 0, variance 1 before fitting.")]
ThresholdOption = Annotated[float, typer.Option(
    min=0.0, max=1.0, help="Edges at or above this posterior probability are drawn in "
                           "graph.png and listed.")]
NDrawsOption = Annotated[int, typer.Option(
    min=1, help="Posterior graphs drawn into samples.npz (and behind edge_probabilities.csv).")]
PruneOption = Annotated[float, typer.Option(
    min=0.0, help="Zero projected weights with |w| at or below this value, in standardised "
                  "units (the paper's implementation uses 0.1); 0 keeps the projection as is.")]
HiddenUnitsOption = Annotated[Optional[int], typer.Option(
    min=1, show_default="10, the estimator's",
    help="--sem mlp: hidden units per variable's network (the paper's 10; 2 scored better on "
         "its simulated benchmarks, see the README).")]
BiasOption = Annotated[Optional[bool], typer.Option(
    "--bias/--no-bias", show_default="bias, the estimator's",
    help="--sem mlp: give the networks' layers biases.")]
ProgressOption = Annotated[bool, typer.Option(
    "--progress/--no-progress", help="Show a progress bar while fitting.")]
TopOption = Annotated[int, typer.Option(min=1, help="Edges printed in the ranked table.")]


@app.command()
@_friendly_errors
def fit(
    data: Annotated[Path, typer.Argument(
        help="CSV file: header row of variable names, one row per observation. A first column "
             "with an empty header is read as row labels and ignored.")],
    out: Annotated[Path, typer.Option(help="Folder for the results (created if missing).")]
    = Path("prodag-results"),
    sem: SemOption = "linear",
    lam: LamOption = "auto",
    select_by: SelectByOption = "elbo",
    restarts: RestartsOption = None,
    hidden_units: HiddenUnitsOption = None,
    bias: BiasOption = None,
    n_samples: NSamplesOption = 100,
    max_epochs: MaxEpochsOption = 1000,
    seed: SeedOption = 0,
    projection: ProjectionOption = "auto",
    standardize: StandardizeOption = True,
    prune: PruneOption = 0.0,
    log_transform_data: Annotated[bool, typer.Option(
        "--log-transform", help="Take the natural log of every value first (for positive data "
                                "spanning orders of magnitude, e.g. flow cytometry).")] = False,
    threshold: ThresholdOption = 0.5,
    n_draws: NDrawsOption = 1000,
    top: TopOption = 20,
    progress: ProgressOption = True,
):
    """Learn a posterior over DAGs from a CSV table and write it to --out.

    Writes into --out: [bold]edge_probabilities.csv[/bold] (row = parent, column = child),
    [bold]samples.npz[/bold] (arrays 'samples' of shape (n_draws, p, p), weighted DAGs with
    [j, k] the edge j -> k, and 'variables'), [bold]posterior.npz[/bold] (reload with
    prodag.ProDAG.load), [bold]heatmap.png[/bold], [bold]graph.png[/bold] and
    [bold]summary.json[/bold]; then prints the most probable edges.
    """
    frame = read_table(data)
    if log_transform_data:
        frame = log_transform(frame)
    _, variables = check_data(frame)
    model = "an MLP" if sem == "mlp" else "a linear"
    typer.echo(f"Fitting {model} ProDAG posterior to {data} ({len(frame)} rows, "
               f"{len(variables)} variables)...")
    estimator, seconds = fit_posterior(
        frame, sem=sem, lam=parse_lam(lam), n_samples=n_samples, max_epochs=max_epochs,
        seed=seed, projection=projection, standardize=standardize, prune=prune,
        progress=progress, select_by=select_by, restarts=restarts, hidden_units=hidden_units,
        bias=bias)
    results = write_results(estimator, variables, out, threshold=threshold, n_draws=n_draws)
    ranked = ranked_edges(results["probabilities"], variables, results["samples"])
    edges = ranked[ranked["probability"] >= threshold]
    summary = {
        "data": str(data), "n": len(frame), "p": len(variables), "variables": variables,
        "options": {"sem": sem, "lam": lam, "select_by": select_by,
                    "restarts": estimator.n_restarts_,
                    **({"hidden_units": estimator.hidden_units, "bias": estimator.bias}
                       if sem == "mlp" else {}),
                    "n_samples": n_samples, "max_epochs": max_epochs,
                    "seed": seed, "projection": projection, "standardize": standardize,
                    "prune": prune, "log_transform": log_transform_data, "threshold": threshold,
                    "n_draws": n_draws},
        "lam_used": _lam_used(estimator), "fit_seconds": round(seconds, 2),
        "expected_edges": float(results["probabilities"].sum()),
        "edges": edges.to_dict(orient="records"), "files": results["files"],
    }
    write_json(out / "summary.json", summary)
    print_edges(ranked, threshold, top)
    typer.echo(f"\nFit took {seconds:.1f} s. Results in {out}/: "
               + ", ".join([*results["files"].values(), "summary.json"]))


def _lam_used(estimator) -> float | None:
    lam = getattr(estimator, "lam_", None)
    if lam is None:
        return None
    lam = float(lam)
    return lam if math.isfinite(lam) else None


@app.command()
@_friendly_errors
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the results (created if missing).")]
    = Path("prodag-demo"),
    lam: LamOption = "auto",
    n_samples: NSamplesOption = 100,
    max_epochs: MaxEpochsOption = 1000,
    seed: SeedOption = 0,
    prune: PruneOption = 0.1,
    threshold: ThresholdOption = 0.5,
    progress: ProgressOption = True,
):
    """Fit the bundled Sachs flow-cytometry data and compare with the consensus graphs.

    The data of Sachs et al. (2005): 7466 cells, 11 phosphorylated proteins and lipids.
    The raw intensities span four orders of magnitude, so they are log-transformed and
    standardised first. The posterior is scored against the 18-edge consensus graph used in
    the paper (Table 2) and the 17-edge consensus DAG, beside the paper's ProDAG row. Writes
    the same files as [bold]prodag fit[/bold] into --out, plus metrics.json.
    """
    from prodag import datasets

    sachs = datasets.load_sachs()
    variables = list(sachs.variables)
    frame = log_transform(sachs.data[variables])
    truth18 = _as_adjacency(sachs.graph, variables)
    truth17 = _as_adjacency(sachs.graph_dag, variables)
    typer.echo(f"Sachs data: {len(frame)} cells x {len(variables)} proteins, log-transformed "
               "and standardised. Fitting a linear ProDAG posterior...")
    estimator, seconds = fit_posterior(
        frame, sem="linear", lam=parse_lam(lam), n_samples=n_samples, max_epochs=max_epochs,
        seed=seed, projection="auto", standardize=True, prune=prune, progress=progress)
    results = write_results(estimator, variables, out, threshold=threshold, n_draws=1000,
                            truth=truth18)
    ranked = ranked_edges(results["probabilities"], variables, results["samples"],
                          truth=truth18)
    scores = {"ProDAG vs 18-edge graph": posterior_metrics(results["samples"], truth18),
              "ProDAG vs 17-edge DAG": posterior_metrics(results["samples"], truth17),
              "paper, ProDAG (18-edge)": PAPER_SACHS_ROW}
    write_json(out / "metrics.json", {
        "fit_seconds": round(seconds, 2), "lam_used": _lam_used(estimator),
        "preprocessing": "log, then standardise", "seed": seed,
        "graph_18_edges": scores["ProDAG vs 18-edge graph"],
        "graph_17_edges_dag": scores["ProDAG vs 17-edge DAG"], "paper_18_edges": PAPER_SACHS_ROW})
    print_edges(ranked, threshold, top=20)
    lam_used = _lam_used(estimator)
    typer.echo(f"\nFit took {seconds:.1f} s (l1 radius lam = "
               f"{'inf' if lam_used is None else f'{lam_used:.3g}'}"
               f"{', chosen by the ELBO over a 10-radius grid' if parse_lam(lam) is None else ''}). "
               "Posterior metrics (lower Brier/E-SHD and higher E-F1/AUROC are better):\n")
    print_metrics_table(scores)
    typer.echo("\nThe paper's row is a mean over 10 splits (benchmarks/sachs.py reproduces "
               "that protocol); the rows above are one fit on all 7466 cells.")
    typer.echo(f"\nResults in {out}/ (heatmap.png, graph.png, edge_probabilities.csv, ...).")


@app.command()
@_friendly_errors
def simulate(
    out: Annotated[Path, typer.Option(help="Folder for data.csv and graph.csv.")]
    = Path("prodag-simulated"),
    p: Annotated[int, typer.Option("--p", min=2, help="Number of variables.")] = 20,
    edges: Annotated[int, typer.Option(min=0, help="Number of edges s of the true DAG.")] = 40,
    n: Annotated[int, typer.Option("--n", min=1, help="Number of observations (rows).")] = 100,
    graph: Annotated[str, typer.Option(
        help="Random graph: 'er' (Erdős–Rényi) or 'sf' (scale-free).")] = "er",
    exponent: Annotated[float, typer.Option(
        help="Degree exponent of scale-free graphs (the paper uses 2 and 3).")] = 2.0,
    sem: Annotated[str, typer.Option(
        help="'linear' (x = Wᵀx + ε) or 'mlp' (one ReLU network of 10 hidden units per "
             "variable).")] = "linear",
    noise: Annotated[str, typer.Option(
        help="'gaussian', 'exponential', 'gumbel' or 'heteroscedastic'.")] = "gaussian",
    seed: SeedOption = 0,
):
    """Simulate a dataset from a random DAG as in the paper's Appendix E.

    Writes [bold]data.csv[/bold] (n rows, columns x0..x{p-1}), [bold]graph.csv[/bold] (the true
    edges, columns source,target) and, for linear SEMs, [bold]weights.csv[/bold] (the p × p
    weighted adjacency, row = parent). Score a fit against it with
    [bold]prodag evaluate RESULTS --truth graph.csv[/bold].
    """
    from prodag import simulate as simulators

    data = simulators.dataset(p, edges, n, graph=graph, sem=sem, noise=noise,
                              exponent=exponent, seed=seed)
    variables = [f"x{j}" for j in range(p)]
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(data.X, columns=variables).to_csv(out / "data.csv", index=False)
    sources, targets = np.nonzero(data.adjacency)
    pd.DataFrame({"source": [variables[j] for j in sources],
                  "target": [variables[k] for k in targets]}).to_csv(out / "graph.csv",
                                                                     index=False)
    written = ["data.csv", "graph.csv"]
    if sem == "linear":
        pd.DataFrame(data.weights, index=variables, columns=variables).to_csv(out / "weights.csv")
        written.append("weights.csv")
    typer.echo(f"Simulated n={n} rows from a {sem} SEM on a {graph} DAG with p={p} variables "
               f"and {len(sources)} edges ({noise} noise, seed {seed}): "
               + ", ".join(str(out / name) for name in written))


@app.command()
@_friendly_errors
def evaluate(
    posterior: Annotated[Path, typer.Argument(
        help="A results folder of 'prodag fit', its samples.npz, or its posterior.npz.")],
    truth: Annotated[Path, typer.Option(
        help="True graph CSV: an edge list with columns source,target, or a p × p adjacency "
             "matrix with variable names as header and first column.")],
    n_draws: NDrawsOption = 1000,
    seed: SeedOption = 0,
    json_out: Annotated[Optional[Path], typer.Option(
        "--json", help="Also write the metrics to this JSON file.")] = None,
):
    """Score a posterior against a known graph with the paper's four metrics.

    Brier score, expected SHD, expected F1 (%) and AUROC (%); lower Brier/E-SHD and higher
    E-F1/AUROC are better.
    """
    samples, variables = load_samples(posterior, n_draws=n_draws, seed=seed)
    scores = posterior_metrics(samples, read_graph(truth, variables))
    typer.echo(f"{len(samples)} posterior graphs over {len(variables)} variables vs {truth}:\n")
    print_metrics_table({"posterior": scores})
    if json_out is not None:
        write_json(json_out, {"posterior": str(posterior), "truth": str(truth),
                              "n_graphs": len(samples), **scores})


def load_samples(path: Path, *, n_draws: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """Posterior graphs ``(L, p, p)`` and variable names from a results folder, a
    ``samples.npz`` file or a saved posterior (which is sampled ``n_draws`` times)."""
    if path.is_dir():
        path = path / "samples.npz"
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        with np.load(path, allow_pickle=False) as archive:
            if {"samples", "variables"} <= set(archive.files):
                return np.asarray(archive["samples"]), [str(v) for v in archive["variables"]]
    except (ValueError, OSError):
        raise DataError(f"{path} is not a samples.npz or saved posterior written by prodag.") \
            from None
    from prodag import ProDAG

    estimator = ProDAG.load(path)
    samples = np.asarray(estimator.sample(n_draws, seed=seed))
    return samples, _variable_names(estimator, samples.shape[-1])


def _variable_names(estimator, p: int) -> list[str]:
    names = getattr(estimator, "columns_", None)
    return [str(v) for v in names] if names is not None else [f"x{j}" for j in range(p)]


@app.command()
@_friendly_errors
def bench(
    experiments: Annotated[Optional[list[str]], typer.Argument(
        help="Experiments to run (see --list); all of them when none is given.")] = None,
    seeds: Annotated[Optional[int], typer.Option(
        min=1, help="Seeds (datasets or data splits) per setting; default: each experiment's "
                    "own (10, as in the paper).")] = None,
    quick: Annotated[bool, typer.Option(
        help="A fast smoke run: fewer sample sizes, seeds and epochs.")] = False,
    methods: Annotated[Optional[list[str]], typer.Option(
        "--method", help="Methods to compare (repeat the option); default ProDAG plus every "
                         "installed peer (DAGMA, DiBS).")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="Folder for the JSON results and figures; default: benchmarks/results of the "
             "checkout that holds the suite.")] = None,
    list_experiments: Annotated[bool, typer.Option(
        "--list", help="List the experiments and exit.")] = False,
    merge: Annotated[bool, typer.Option(
        help="Keep the rows of methods not run now from the existing results in --out "
             "(e.g. re-run ProDAG alone beside peers measured earlier).")] = False,
    resume: Annotated[bool, typer.Option(
        help="Reuse the fits that an interrupted run saved in --out "
             "(<experiment>.partial.json) and run only the rest.")] = False,
):
    """Run the benchmark suite: the paper's experiments, ProDAG beside installed peers.

    Each experiment writes a JSON file of per-seed metrics, a summary table and a figure
    into --out.

    Needs a source checkout of prodag (it runs benchmarks/suite.py).
    """
    suite = _load_suite()
    if list_experiments:
        for name, experiment in suite.EXPERIMENTS.items():
            typer.echo(f"{name:<28} {experiment.description}")
        return
    unknown = sorted(set(experiments or ()) - set(suite.EXPERIMENTS))
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(suite.EXPERIMENTS)} (see prodag bench --list)")
    suite.run(experiments or list(suite.EXPERIMENTS), seeds=seeds, quick=quick,
              methods=methods, out=out or suite.RESULTS_DIR, merge=merge, resume=resume)


def _load_suite():
    """Import ``benchmarks/suite.py`` from the working directory or the source checkout."""
    candidates = [Path.cwd() / "benchmarks", Path(__file__).resolve().parents[2] / "benchmarks"]
    for folder in candidates:
        if (folder / "suite.py").is_file():
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
            spec = importlib.util.spec_from_file_location("suite", folder / "suite.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return module
    raise FileNotFoundError(2, "prodag bench needs a source checkout of prodag: no "
                               "benchmarks/suite.py here or beside the package",
                            "benchmarks/suite.py")


def _as_adjacency(graph, variables: list[str]) -> np.ndarray:
    from prodag.plotting import adjacency_matrix

    return adjacency_matrix(graph, variables)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

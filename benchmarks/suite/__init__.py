"""The benchmark suite: the paper's experiments, ProDAG beside the installed peers.

Run ``prodag bench --list`` (or ``python -m benchmarks.suite --list`` from the repository root)
for the experiments, ``prodag bench sachs munin --seeds 3`` to pick some, ``--quick`` for a
smoke run.

Each experiment returns one row per (method, setting, seed) with the paper's four posterior
metrics (Brier score, expected SHD, expected F1 %, AUROC %) and the fit time, and writes into
the output folder:

* ``<name>.json``: the settings, every row, and the mean ± standard error per method/setting;
* ``<name>.md``: that summary as a markdown table;
* ``<name>.png``: metric against n (synthetic sweeps) or a bar chart (single-setting studies).

Peers (DAGMA, DiBS) come from ``benchmarks.suite.peers`` and run only when their packages are
installed (``peers.install_command(name)`` says how); otherwise the suite prints a note with
that command and runs ProDAG.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR
from . import munin, sachs, synthetic
from .checkpoint import Checkpoint
from .jobs import InProcess, RayExecutor, execute, jobs_of
from .methods import peer_fitters, score_against, select_methods
from .synthetic import SyntheticSettings

__all__ = ["EXPERIMENTS", "RESULTS_DIR", "Experiment", "run", "main"]


@dataclass(frozen=True)
class Experiment:
    """One benchmark: ``runner(seeds, quick, methods, checkpoint, executor)`` returns rows of
    metrics (``benchmarks.suite.jobs`` runs its fits)."""

    name: str
    description: str
    runner: Callable[..., list[dict]]
    seeds: int = 10
    sweep: str | None = "n"
    """Column plotted on the x axis, or ``None`` for a single-setting study (bar chart)."""
    settings: dict = field(default_factory=dict)


def summary_table(rows: Sequence[dict], by: Sequence[str]) -> pd.DataFrame:
    """Mean ± standard error of each metric (and fit seconds) per group ``by``."""
    frame = pd.DataFrame(rows)
    columns = [m for m in (*METRICS, "ece", "dags", "seconds") if m in frame]
    grouped = frame.groupby(list(by), sort=False)[columns]
    mean, se = grouped.mean(), grouped.std(ddof=1) / np.sqrt(grouped.count())
    table = mean.copy()
    for column in columns:
        table[column] = [_mean_se(m, s, column) for m, s in zip(mean[column], se[column])]
    table.insert(0, "seeds", grouped.count()[columns[0]])
    return table.reset_index()


def _mean_se(mean: float, se: float, column: str) -> str:
    if np.isnan(mean):  # a metric some methods' rows lack (e.g. ECE of older runs)
        return ""
    digits = 1 if column in ("ef1", "auroc", "seconds") or abs(mean) >= 10 else 2
    if column == "dags":
        return f"{mean:.3f}"  # a share, 1.000 when every sample is a DAG
    return f"{mean:.{digits}f}" + ("" if np.isnan(se) else f" ± {se:.{digits}f}")


def markdown(table: pd.DataFrame) -> str:
    """A DataFrame as a GitHub markdown table with the paper's metric titles."""
    titles = {**METRICS, "ece": "ECE", "dags": "DAG share", "seconds": "time (s)"}
    header = [titles.get(c, c) for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join(lines) + "\n"


def run(names: Sequence[str], *, seeds: int | None = None, quick: bool = False,
        methods: Sequence[str] | None = None, out: Path = RESULTS_DIR,
        merge: bool = False, resume: bool = False,
        executor: InProcess | RayExecutor | None = None) -> dict[str, list[dict]]:
    """Run the named experiments and write their JSON, markdown and figure into ``out``.

    ``executor`` runs the fits (``benchmarks.suite.jobs``): one after another in this process by
    default, or as Ray tasks (``RayExecutor``).

    With ``merge``, the rows of methods not run now are kept from the experiment's existing
    JSON file (e.g. re-run ProDAG alone beside peers measured earlier on the same datasets).
    Each finished fit is saved in ``<name>.partial.json`` (a ``Checkpoint``, removed when the
    experiment completes); with ``resume``, the fits an interrupted run saved there are taken
    from that file instead of being run again.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in names:
        experiment = EXPERIMENTS[name]
        n_seeds = seeds or (min(experiment.seeds, 2) if quick else experiment.seeds)
        print(f"\n== {name}: {experiment.description} ({n_seeds} seeds"
              f"{', quick' if quick else ''})", flush=True)
        start = time.perf_counter()
        stem = name + ("-quick" if quick else "")
        checkpoint = Checkpoint(out / f"{stem}.partial.json", resume=resume)
        if checkpoint.resumed:
            print(f"  resuming: {len(checkpoint.resumed)} rows from {checkpoint.path}",
                  flush=True)
        rows = experiment.runner(seeds=range(n_seeds), quick=quick, methods=methods,
                                 checkpoint=checkpoint, executor=executor)
        checkpoint.remove()
        if merge:
            rows = kept_rows(out / f"{stem}.json", rows) + rows
        by = ["method"] + ([experiment.sweep] if experiment.sweep else []) + [
            key for key in ("graph",) if key in rows[0]]
        table = summary_table(rows, by)
        write_results(out, experiment, rows, table, quick=quick,
                      seconds=time.perf_counter() - start)
        print(markdown(table), flush=True)
        results[name] = rows
    return results


def kept_rows(path: Path, new_rows: list[dict]) -> list[dict]:
    """Rows of ``path`` (an experiment's JSON) whose method is not among ``new_rows``'."""
    if not path.exists():
        return []
    fresh = {row["method"] for row in new_rows}
    return [row for row in json.loads(path.read_text())["rows"] if row["method"] not in fresh]


def write_results(out: Path, experiment: Experiment, rows: list[dict], table: pd.DataFrame,
                  *, quick: bool, seconds: float) -> None:
    stem = experiment.name + ("-quick" if quick else "")
    record = {
        "experiment": experiment.name, "description": experiment.description,
        "settings": experiment.settings, "quick": quick, "wall_seconds": round(seconds, 1),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.system()}, python {platform.python_version()}",
        "summary": table.to_dict(orient="records"), "rows": rows,
    }
    (out / f"{stem}.json").write_text(json.dumps(record, indent=1, default=float) + "\n")
    (out / f"{stem}.md").write_text(f"**{experiment.description}**\n\n" + markdown(table))
    figure(experiment, rows).savefig(out / f"{stem}.png", dpi=130)


def figure(experiment: Experiment, rows: list[dict], title: str | None = None):
    """Metrics against the experiment's sweep column, or bars where it has a single value;
    titled ``title`` (default: the experiment's description)."""
    from prodag import plotting

    sweep, title = experiment.sweep, title or experiment.description
    if sweep and len({row[sweep] for row in rows}) > 1:
        return plotting.plot_benchmark(rows, tuple(METRICS), x=sweep, title=title)
    return plot_bars(rows, title)


def plot_bars(rows: list[dict], title: str):
    """Mean ± s.e. of each metric as bars, one colour per method, grouped by graph (when the
    rows have one)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from prodag.evaluation.plotting import METRIC_LABELS, summarize

    frame = pd.DataFrame(rows)
    if "graph" not in frame:
        frame["graph"] = ""
    methods, graphs = list(dict.fromkeys(frame["method"])), list(dict.fromkeys(frame["graph"]))
    width = 0.8 / len(methods)
    fig = Figure(figsize=(3.3 * len(METRICS), 3.3), layout="constrained")
    FigureCanvasAgg(fig)
    for ax, metric in zip(fig.subplots(1, len(METRICS)), METRICS):
        summary = summarize(frame, metric, by=("method", "graph")).set_index(["method", "graph"])
        for i, method in enumerate(methods):
            cells = [summary.loc[(method, g)] if (method, g) in summary.index else None
                     for g in graphs]
            ax.bar(np.arange(len(graphs)) + (i - (len(methods) - 1) / 2) * width,
                   [c["mean"] if c is not None else np.nan for c in cells], width,
                   yerr=[c["se"] if c is not None else 0 for c in cells], capsize=3,
                   label=method, color=f"C{i}")
        ax.set_xticks(range(len(graphs)), graphs)
        ax.set_title(METRIC_LABELS[metric])
        ax.grid(axis="y", alpha=0.3)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(methods), frameon=False)
    fig.suptitle(title)
    return fig


def synthetic_runner(settings: SyntheticSettings,
                     n_grid: Sequence[int] = (10, 30, 100, 300, 1000),
                     quick_n_grid: Sequence[int] = (100,),
                     variants: dict[str, dict] | None = None) -> Callable[..., list[dict]]:
    """A runner of one simulated setting over ``n_grid``: ProDAG through
    ``benchmarks.suite.synthetic`` (λ selected by ProDAG's default, the ELBO), the peers on the
    same datasets (their λ chosen on the simulator's validation rows; for the MLP simulator
    also DAGMA with its library's defaults, the nonlinear issue's bar).

    ``variants`` adds ProDAG rows with other estimator options, ``{method name: options}``
    (e.g. ``{"ProDAG (2 units)": {"hidden_units": 2}}``)."""

    def runner(seeds: Iterable[int], quick: bool = False,
               methods: Sequence[str] | None = None, checkpoint: Checkpoint | None = None,
               executor: InProcess | RayExecutor | None = None) -> list[dict]:
        base = settings.with_options(max_epochs=100) if quick else settings
        jobs = []
        for n in (quick_n_grid if quick else n_grid):
            for seed in seeds:
                data = base.dataset(n, seed)
                prodag_fitters = {
                    name: functools.partial(synthetic.posterior, base.with_options(**extra),
                                            data, seed)
                    for name, extra in {"ProDAG": {}, **(variants or {})}.items()}
                fitters = select_methods(
                    {**prodag_fitters,
                     **peer_fitters(data, seed, sem=settings.sem, quick=quick,
                                    dagma_library_defaults=settings.sem == "mlp")}, methods)
                jobs += jobs_of(fitters, {"n": n, "seed": seed},
                                functools.partial(score_against, data.adjacency))
        return execute(jobs, checkpoint, executor)

    return runner


def _synthetic(name: str, description: str, **settings) -> Experiment:
    """An experiment of ``synthetic_runner``; ``settings`` are ``SyntheticSettings`` fields and
    the runner's ``n_grid`` and ``variants``, recorded as given in the results."""
    runner_options = {key: settings[key] for key in ("n_grid", "variants") if key in settings}
    setting = SyntheticSettings(**{key: value for key, value in settings.items()
                                   if key not in runner_options})
    return Experiment(name, description, synthetic_runner(setting, **runner_options),
                      settings=settings)


PAPER_PROTOCOL = "ProDAG (paper protocol: unit noise, one chain)"
PAPER_OPTIONS = {"noise_variance": 1.0, "n_chains": 1}
"""The paper's noise model (unit noise variance in the data's units) and a single chain."""

EXPERIMENTS: dict[str, Experiment] = {
    experiment.name: experiment for experiment in [
        _synthetic("linear-20-n100", "Linear ER, p = 20, s = 40, n = 100, Gaussian noise "
                   "(ProDAG beside the peers)", p=20, s=40, n_grid=(100,),
                   variants={PAPER_PROTOCOL: PAPER_OPTIONS}),
        _synthetic("linear-er-20", "Linear ER, p = 20, s = 40, Gaussian noise", p=20, s=40),
        _synthetic("linear-er-100", "Linear ER, p = 100, s = 200, Gaussian noise", p=100,
                   s=200),
        _synthetic("linear-100", "Linear ER, p = 100, s = 200, n = 100 and 1000, Gaussian "
                   "noise (the paper's Figure 2 sizes, ProDAG beside the peers)", p=100, s=200,
                   n_grid=(100, 1000)),
        _synthetic("nonlinear-10-n100", "Nonlinear (MLP) ER, p = 10, s = 20, n = 100, Gaussian "
                   "noise (ProDAG beside the peers)", p=10, s=20, sem="mlp", n_grid=(100,),
                   variants={"ProDAG (2 units, no bias)": {"hidden_units": 2, "bias": False},
                             "ProDAG (additive)": {"sem": "additive"}}),
        _synthetic("nonlinear-er-10", "Nonlinear (MLP) ER, p = 10, s = 20, Gaussian noise",
                   p=10, s=20, sem="mlp"),
        _synthetic("nonlinear-er-20", "Nonlinear (MLP) ER, p = 20, s = 40, Gaussian noise",
                   p=20, s=40, sem="mlp"),
        _synthetic("dense-60", "Linear ER, p = 20, s = 60 (denser), Gaussian noise", p=20,
                   s=60),
        _synthetic("dense-80", "Linear ER, p = 20, s = 80 (denser), Gaussian noise", p=20,
                   s=80),
        _synthetic("scale-free-2", "Linear scale-free (exponent 2), p = 20, s = 40", p=20,
                   s=40, graph="sf", exponent=2.0),
        _synthetic("scale-free-3", "Linear scale-free (exponent 3), p = 20, s = 40", p=20,
                   s=40, graph="sf", exponent=3.0),
        _synthetic("gumbel-20", "Linear ER, p = 20, s = 40, Gumbel noise", p=20, s=40,
                   noise="gumbel"),
        _synthetic("gumbel-100", "Linear ER, p = 100, s = 200, Gumbel noise", p=100, s=200,
                   noise="gumbel"),
        _synthetic("exponential-20", "Linear ER, p = 20, s = 40, exponential noise", p=20,
                   s=40, noise="exponential"),
        _synthetic("exponential-100", "Linear ER, p = 100, s = 200, exponential noise",
                   p=100, s=200, noise="exponential"),
        _synthetic("heteroscedastic-20", "Linear ER, p = 20, s = 40, heteroscedastic Gaussian "
                   "noise", p=20, s=40, noise="heteroscedastic"),
        Experiment("sachs", "Sachs flow cytometry, n = 7466, 10 random validation splits "
                   "(18-edge and 17-edge consensus graphs)", sachs.run, sweep=None),
        Experiment("munin", "MUNIN1 semi-synthetic, p = 186, s = 273, n = 100, linear "
                   "Gaussian", munin.run, sweep=None),
    ]
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="*", help="experiments to run (default: all)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per setting")
    parser.add_argument("--quick", action="store_true", help="fast smoke run")
    parser.add_argument("--method", action="append", dest="methods", help="method to run")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="output folder")
    parser.add_argument("--list", action="store_true", help="list the experiments")
    parser.add_argument("--merge", action="store_true",
                        help="keep the rows of methods not run now from the existing results")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the fits an interrupted run checkpointed")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="run the fits as Ray tasks (a local instance without ADDRESS)")
    args = parser.parse_args(argv)
    if args.list:
        for name, experiment in EXPERIMENTS.items():
            print(f"{name:<28} {experiment.description}")
        return
    unknown = set(args.experiments) - set(EXPERIMENTS)
    if unknown:
        parser.error(f"unknown experiment(s): {', '.join(sorted(unknown))}")
    executor = None if args.ray is None else RayExecutor(
        None if args.ray == "local" else args.ray)
    try:
        run(args.experiments or list(EXPERIMENTS), seeds=args.seeds, quick=args.quick,
            methods=args.methods, out=args.out, merge=args.merge, resume=args.resume,
            executor=executor)
    finally:
        if executor is not None:
            executor.shutdown()



"""``prodag effects``: total causal effects with their uncertainty, from a fitted posterior.

A linear fit's folder answers from its ``samples.npz`` and the metadata of its
``posterior.npz`` alone (NumPy only: no model is built and JAX is not imported), so a
question about one pair takes about as long as starting Python; other folders load the
model (``ProDAG.load``) and draw from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from prodag import effects as fx
from prodag.cli.errors import friendly_errors
from prodag.cli.files import npz_names, require_file
from prodag.cli.results import RESULT_FILES, write_json
from prodag.cli.tables import UnitsOption
from prodag.inputs.units import check_units, default_units, in_units, standardized
from prodag.inputs.validation import DataError
from prodag.io import samples_file
from prodag.io.samples_file import holds_samples, read_entries, read_variables

TABLE_FILE = "effects.csv"
"""The table of every ordered pair written into a results folder when no --out is given."""
SHOWN = 15
"""Pairs printed on the terminal by the table mode."""


@friendly_errors
def effects(
    results: Annotated[Path, typer.Argument(
        metavar="RESULTS", help="A results folder of 'prodag fit' or 'prodag demo', or its "
                                "posterior.npz.")],
    cause: Annotated[Optional[str], typer.Option(
        help="The variable set by the intervention (with --effect: one pair).")] = None,
    effect: Annotated[Optional[str], typer.Option(
        help="The variable whose response is asked for (with --cause).")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="With a pair: a JSON file for its summary. Without: the CSV table of every "
             "ordered pair (default RESULTS/effects.csv); its heatmap goes beside it as "
             ".png.")] = None,
    level: Annotated[float, typer.Option(
        help="Probability of the credible interval, in (0, 1).")] = fx.LEVEL,
    n_draws: Annotated[Optional[int], typer.Option(
        min=1, show_default="the graphs of samples.npz for a linear fit, else 1000",
        help="Posterior draws to compute the effects from.")] = None,
    seed: Annotated[Optional[int], typer.Option(
        min=0, show_default="the fit's own sampling key",
        help="Seed of the posterior draws (and of the nonlinear SEMs' simulations).")] = None,
    min_probability: Annotated[float, typer.Option(
        min=0.0, max=1.0,
        help="Pairs whose P(effect != 0) is below this are greyed out in the heatmap and "
             "left out of the printed list.")] = 0.5,
    units: UnitsOption = None,
):
    """Total causal effects of each variable on each other, with their uncertainty.

    The effect of X on Y is the change in the mean of Y per unit of X when X is set from
    outside (do(X)), computed in every posterior draw: exactly for the linear SEM
    ((I - W)^-1), by simulating a unit shift for the additive and MLP SEMs. For a fit with
    --standardize it is reported in standardised units (standard deviations of Y per
    standard deviation of X; --units data for the data's units), else in the data's units;
    the table is ranked by the standardised effect where it is known, and the heatmap's
    colours are standardised effects.
    With --cause and --effect, prints its posterior mean, sd, credible interval, P(effect !=
    0) (the share of draws with a directed path) and P(effect > 0). Without, writes a table of
    every ordered pair and a heatmap of the posterior mean effects.
    """
    if (cause is None) != (effect is None):
        raise DataError("give both --cause and --effect for one pair, or neither for the "
                        "table of every pair.")
    if not 0 < level < 1:
        raise DataError(f"--level must be a probability in (0, 1), e.g. 0.9; got {level}.")
    folder, path = posterior_file(results)
    saved = saved_samples(folder, path, n_draws, seed)
    if saved is None:
        from prodag import ProDAG

        estimator, entries = ProDAG.load(path), None
        names, sd = list(estimator.columns_), fx.fitted_sd(estimator.posterior_)
    else:
        estimator, (entries, names), sd = None, saved, saved_sd(path)
    shown = check_units(units.value if units else default_units(sd), sd, "--units")
    if cause is not None:
        cause, effect = as_variable(cause, names), as_variable(effect, names)
        summary = pair_summary(estimator, entries, cause, effect, names, level, n_draws, seed,
                               (sd, shown))
        typer.echo(str(summary))
        if out is not None:
            write_json(out, summary.as_dict())
            typer.echo(f"Summary in {out}")
        return
    if entries is None:
        draws, paths = fx.draws_and_paths(estimator.posterior_, n_draws or 1000, seed)
        table = fx.effect_table(draws, paths, names, level, sd=sd, units=shown)
        means, p_nonzero = draws.mean(axis=0), paths.mean(axis=0)
    else:
        table, means, p_nonzero = saved_table(entries, names, level, sd, shown)
    out = out if out is not None else (folder or results.parent) / TABLE_FILE
    table.to_csv(out, index=False)
    figure = plot_effects(means if sd is None else standardized(means, sd), p_nonzero, names,
                          min_probability, standardised=sd is not None)
    figure.savefig(out.with_suffix(".png"), dpi=150)
    print_table(table, min_probability, level, shown)
    typer.echo(f"\nAll {len(table)} ordered pairs in {out}; heatmap in "
               f"{out.with_suffix('.png')}")


def posterior_file(path: Path) -> tuple[Path | None, Path]:
    """``(folder or None, its posterior.npz)`` of a results folder or a file, checked to be a
    complete ``.npz`` archive."""
    folder = None
    if path.is_dir():
        folder, path = path, path / RESULT_FILES["posterior"]
        if not path.is_file():
            raise DataError(f"{folder} has no {RESULT_FILES['posterior']}: give a results "
                            "folder of 'prodag fit' or its posterior.npz.")
    require_file(path)
    npz_names(path)
    return folder, path


def as_variable(text: str, names: list[str]):
    """A variable named on the command line: its name, or else a column index."""
    return int(text) if text not in names and text.isdigit() else text


def saved_model(posterior: Path) -> tuple[str, list[str]] | None:
    """``(SEM, variable names)`` from the metadata of ``posterior`` (a ``posterior.npz``),
    or None where they cannot be read (``ProDAG.load`` then names the problem)."""
    try:
        with np.load(posterior, allow_pickle=False) as archive:
            metadata = json.loads(str(archive["metadata"]))
        sem, columns = metadata["params"]["sem"], metadata["columns"]
    except Exception:  # any damage: the full load reports it
        return None
    if not (isinstance(sem, str) and isinstance(columns, list) and columns
            and all(isinstance(name, str) for name in columns)):
        return None
    return sem, columns


def saved_sd(posterior: Path) -> np.ndarray | None:
    """The column standard deviations ``(p,)`` of a saved fit with ``standardize=True`` (its
    ``scale_``), else None; ``posterior`` was read by ``saved_model``."""
    with np.load(posterior, allow_pickle=False) as archive:
        if json.loads(str(archive["metadata"]))["params"].get("standardize") is not True:
            return None
        return np.asarray(archive["arrays/scale_"], dtype=float)


def saved_samples(folder, posterior: Path, n_draws, seed):
    """``(Entries, variable names)``: the weighted DAGs (data units) of the folder's
    samples.npz, either layout (``prodag.io.samples_file``), when they serve (a linear fit, no
    other draws asked for); else None."""
    if folder is None or n_draws is not None or seed is not None:
        return None
    model = saved_model(posterior)
    path = folder / RESULT_FILES["samples"]
    if model is None or model[0] != "linear" or not path.is_file() \
            or not holds_samples(npz_names(path)):
        return None
    if read_variables(path) != model[1]:
        raise DataError(f"{path} and {RESULT_FILES['posterior']} name different "
                        "variables; give the posterior.npz alone.")
    return read_entries(path), model[1]


def saved_effects(entries, causes: slice) -> tuple[np.ndarray, np.ndarray]:
    """The total effects ``(n, c, p)`` (data units) of the ``c`` variables ``causes`` on every
    variable in each graph of ``entries`` (``prodag.io.samples_file.Entries`` of a linear fit),
    and whether that graph has a directed path ``(n, c, p)`` bool: ``(I − W)⁻¹`` a block of
    draws at a time."""
    effects, paths = [], []
    for graphs in entries.blocks():
        effects.append(fx.linear_total_effects(graphs)[:, causes])
        paths.append(fx.directed_paths(graphs)[:, causes])
    return np.concatenate(effects), np.concatenate(paths)


def saved_table(entries, names, level: float, sd, units: str):
    """``(table, mean effects (p, p) in data units, P(effect != 0) (p, p))`` of the graphs
    ``entries``: the table ``fx.effect_table`` makes of their effects, in ``units``. The
    effects of a few causes are computed at a time, inverting every draw again for each (one
    pass while ``(n, p, p)`` fits in ``samples_file.DENSE_BYTES``), so that no ``(n, p, p)``
    array is held for graphs that large."""
    n, p, _ = entries.shape
    step = max(1, samples_file.DENSE_BYTES // (8 * n * p))
    rows, means, p_nonzero = [], [], []
    for start in range(0, p, step):
        draws, paths = saved_effects(entries, slice(start, min(start + step, p)))
        rows += fx.effect_rows(draws, paths, names, level, sd, units, first=start)
        means.append(draws.mean(axis=0))
        p_nonzero.append(paths.mean(axis=0))
    means = np.concatenate(means)
    return fx.ranked_effects(rows, means, sd), means, np.concatenate(p_nonzero)


def pair_summary(estimator, entries, cause, effect, names, level, n_draws, seed, units):
    """The ``EffectSummary`` of one pair in ``units = (column sds or None, units)``: from the
    saved graphs ``entries`` when given (the cause's effects a block of draws at a time), else
    drawn from ``estimator``."""
    sd, shown = units
    if entries is None:
        return estimator.effect(cause, effect, n=n_draws or 1000, level=level, seed=seed,
                                units=shown)
    j = fx.variable_index(cause, names, "--cause")
    k = fx.variable_index(effect, names, "--effect")
    if j == k:
        raise DataError(f"--cause and --effect are the same variable ({names[j]!r}).")
    draws, paths = saved_effects(entries, slice(j, j + 1))
    values = in_units(draws, sd, shown, slice(j, j + 1))[:, 0, k]
    return fx.summarize(values, paths[:, 0, k], level, names[j], names[k], shown)


def print_table(table, min_probability: float, level: float, units: str = "data") -> None:
    """The ``SHOWN`` first pairs of ``table`` (ranked by ``fx.effect_table``) among those with
    P(effect != 0) ≥ the threshold, in ``units``."""
    shown = table[table["p_nonzero"] >= min_probability].head(SHOWN)
    if shown.empty:
        typer.echo(f"No pair has P(effect != 0) >= {min_probability:g}.")
        return
    typer.echo(f"Largest total effects with P(effect != 0) >= {min_probability:g}"
               + (" (standardised: sds of the effect per sd of the cause; --units data for "
                  "the data's units):" if units == "standardized" else ", in data units:"))
    typer.echo(f"  {'cause -> effect':<28} {'mean':>9} {f'{100 * level:g}% interval':>22} "
               f"{'P(!=0)':>7} {'P(>0)':>6}")
    for row in shown.to_dict(orient="records"):
        interval = f"[{row['lower']:.3g}, {row['upper']:.3g}]"
        typer.echo(f"  {row['cause'] + ' -> ' + row['effect']:<28} {row['mean']:>9.3g} "
                   f"{interval:>22} {row['p_nonzero']:>7.2f} {row['p_positive']:>6.2f}")


def plot_effects(means: np.ndarray, p_nonzero: np.ndarray, names, min_probability: float,
                 standardised: bool = False):
    """Heatmap of the posterior mean effects ``(p, p)`` (row: cause, column: effect; in
    standardised units where ``standardised``, so one column's large unit does not set the
    colour scale of every other) on a diverging scale; pairs with ``P(effect != 0) <
    min_probability`` are grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = len(names)
    shown = np.ma.masked_where((p_nonzero < min_probability) | np.eye(p, dtype=bool), means)
    limit = float(np.abs(shown).max()) if shown.count() else 1.0
    colours = plt.get_cmap("RdBu_r").with_extremes(bad="0.85")
    fig, ax = plt.subplots(figsize=(1.6 + 0.5 * max(p, 6), 1.0 + 0.45 * max(p, 6)))
    image = ax.imshow(shown, cmap=colours, vmin=-limit, vmax=limit, interpolation="nearest")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04,
                 label="posterior mean effect (" + ("sd per sd)" if standardised else
                                                    "data units)"))
    ax.set_xticks(range(p), names, rotation=90 if p > 12 else 45,
                  ha="center" if p > 12 else "right")
    ax.set_yticks(range(p), names)
    ax.set_xlabel("effect (responds)")
    ax.set_ylabel("cause (set by do)")
    ax.set_title(f"Total causal effects (grey: P(effect != 0) < {min_probability:g})")
    fig.tight_layout()
    return fig

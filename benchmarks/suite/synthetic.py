"""ProDAG on simulated data (paper Section 6, Appendix E): metrics and fit time per n.

Example (the paper's linear ER experiment), from the repository root::

    python -m benchmarks.suite.synthetic --graph er --sem linear --p 20 --s 40 --n 10 100 1000 \
        --seeds 10 --projection auto --lam select --tag er20

For every n and seed it simulates a dataset (``prodag.simulate.dataset``, seed = dataset
seed), fits ``ProDAG`` (seed = dataset seed) on ``X`` with λ selected by the estimator's
default criterion when ``--lam select`` (the ELBO; with ``--option select_by=validation`` on
the simulator's separate ``⌊0.1n⌉`` validation rows ``X_val``, the paper's protocol), draws
1000 posterior samples and scores them with ``prodag.metrics.evaluate``. It prints a table of
mean ± standard error over seeds and writes every row and the summary as JSON to
``benchmarks/results/synthetic_<tag>.json``. Fit time is wall-clock seconds of ``fit``
(including compilation) on whatever machine runs it.

The runs made with this script, and the estimator defaults they set (cold starts along the λ
path, λ by the ELBO, three starts for the linear SEM and one for the MLP), are logged in
``docs/findings.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import time
from collections.abc import Mapping

import numpy as np

from prodag.evaluation.metrics import METRICS
from prodag.evaluation.simulate import SEMS
from prodag.projection import METHODS

from .. import RESULTS_DIR

GRAPHS = ("er", "sf")
N_DRAWS = 1000


@dataclasses.dataclass(frozen=True)
class SyntheticSettings:
    """One simulated setting (``prodag.simulate.dataset``'s arguments but ``n`` and the seed)
    and how ProDAG fits it.

    ``lam``: a fixed ℓ1 radius, or ``"auto"`` to select it; ``options``: any other ProDAG
    setting, flat (e.g. ``{"select_by": "validation"}``, grouped by
    ``prodag.config.parameters.nest``); ``validation_set``: with
    ``select_by="validation"``, pass the simulator's ``X_val`` (``False``: ProDAG splits its
    own validation rows off ``X``).
    """

    p: int = 20
    s: int = 40
    sem: str = "linear"
    graph: str = "er"
    noise: str = "gaussian"
    exponent: float = 2.0
    projection: str = "auto"
    lam: float | str = "auto"
    noise_variance: float | str | None = None
    options: Mapping = dataclasses.field(default_factory=dict)
    validation_set: bool = True

    def __post_init__(self):
        for name, allowed in (("sem", SEMS), ("graph", GRAPHS), ("projection", METHODS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    def with_options(self, **options) -> SyntheticSettings:
        """The same setting with more (or other) ProDAG parameters."""
        return dataclasses.replace(self, options={**self.options, **options})

    def dataset(self, n: int, seed: int):
        """The simulated dataset of ``n`` rows and seed ``seed`` (``SimulatedData``)."""
        from prodag import simulate

        return simulate.dataset(self.p, self.s, n, graph=self.graph, sem=self.sem,
                                noise=self.noise, exponent=self.exponent, seed=seed)

    def estimator_options(self) -> dict:
        """ProDAG's settings, flat (all but the seed; ``prodag.config.parameters.nest`` groups
        them)."""
        noise = {} if self.noise_variance is None else {"noise_variance": self.noise_variance}
        return {"sem": self.sem, "projection": self.projection, "progress": False,
                "lam": self.lam, **noise, **self.options}


def fit(settings: SyntheticSettings, data, seed: int):
    """``(ProDAG fitted on data.X with seed seed, seconds of the fit)``; λ chosen on
    ``data.X_val`` when the settings select it by validation on the simulator's rows."""
    from prodag import ProDAG
    from prodag.config.parameters import nest

    estimator = ProDAG(seed=seed, **nest(settings.estimator_options()))
    use_val = (settings.lam == "auto" and settings.options.get("select_by") == "validation"
               and settings.validation_set)
    start = time.perf_counter()
    estimator.fit(data.X, X_val=data.X_val if use_val else None)
    return estimator, time.perf_counter() - start


def posterior(settings: SyntheticSettings, data, seed: int) -> tuple[np.ndarray, float]:
    """``(1000 posterior samples (1000, p, p), fit seconds)`` of ``fit``."""
    estimator, seconds = fit(settings, data, seed)
    return estimator.sample(N_DRAWS), seconds


def run_one(settings: SyntheticSettings, n: int, seed: int) -> dict:
    """Simulate, fit and score one dataset; returns one row of the results."""
    from prodag import metrics

    data = settings.dataset(n, seed)
    estimator, seconds = fit(settings, data, seed)
    scores = metrics.evaluate(data.adjacency, estimator.sample(N_DRAWS))
    return {"n": n, "seed": seed, "seconds": seconds, "lam": estimator.lam_,
            "epochs": len(estimator.history_), **{k: float(scores[k]) for k in METRICS}}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", default="er", choices=GRAPHS)
    parser.add_argument("--exponent", type=float, default=2.0,
                        help="degree exponent of scale-free graphs")
    parser.add_argument("--sem", default="linear", choices=SEMS,
                        help="the simulated SEM (and the fitted one, unless --option sem=...)")
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--noise", default="gaussian")
    parser.add_argument("--seeds", type=int, default=10, help="dataset seeds 0 .. seeds-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--projection", default="auto", choices=METHODS)
    parser.add_argument("--lam", default="select",
                        help='"select" (choose on X_val), "inf", or a number')
    parser.add_argument("--noise-variance", default=None,
                        help='a number, "equal" or "estimate" (default: ProDAG\'s)')
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="any other ProDAG parameter, e.g. prune=0.1 (repeatable)")
    parser.add_argument("--no-validation-set", action="store_true",
                        help="with select_by=validation: let ProDAG split its own validation "
                             "rows off X instead of using the simulator's X_val")
    parser.add_argument("--tag", default=None, help="results file suffix")
    return parser.parse_args(argv)


def settings_from_args(args: argparse.Namespace) -> SyntheticSettings:
    """The setting the command line describes."""
    options = parse_options(args.option)
    return SyntheticSettings(
        p=args.p, s=args.s, sem=args.sem, graph=args.graph, noise=args.noise,
        exponent=args.exponent, projection=args.projection,
        lam="auto" if args.lam == "select" else float(args.lam),
        noise_variance=(args.noise_variance if args.noise_variance in (None, "equal", "estimate")
                        else float(args.noise_variance)),
        options=options, validation_set=not args.no_validation_set)


def parse_options(pairs: list[str]) -> dict:
    """``--option`` pairs ``["NAME=VALUE", ...]`` as ProDAG's flat settings (grouped by
    ``prodag.config.parameters.nest``), each value read by ``parse_value``."""
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"--option takes NAME=VALUE (a ProDAG parameter), got {pair!r}.")
        options[name] = parse_value(value)
    return options


def parse_value(text: str):
    """A command-line value as Python: an int, a float, True, False or None, else the text."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)


def summarize(rows: list[dict]) -> list[dict]:
    """Mean and standard error over seeds of every metric and the fit time, per n."""
    summary = []
    for n in sorted({row["n"] for row in rows}):
        group = [row for row in rows if row["n"] == n]
        entry = {"n": n, "seeds": len(group)}
        for key in (*METRICS, "seconds"):
            values = np.array([row[key] for row in group], dtype=float)
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
            entry[key] = {"mean": float(values.mean()), "se": float(se)}
        summary.append(entry)
    return summary


def format_table(summary: list[dict]) -> str:
    titles = {**METRICS, "seconds": "fit s"}
    lines = [f"{'n':>6} {'seeds':>5} " + " ".join(f"{titles[k]:>14}" for k in titles)]
    for entry in summary:
        cells = [f"{entry[k]['mean']:6.1f} ± {entry[k]['se']:4.1f}" for k in titles]
        lines.append(f"{entry['n']:>6} {entry['seeds']:>5} " + " ".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    settings = settings_from_args(args)
    tag = args.tag or f"{args.sem}_{args.graph}{args.p}_{args.projection}_{args.lam}"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"synthetic_{tag}.json"
    rows = []
    for n in args.n:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            rows.append(run_one(settings, n, seed))
            row = rows[-1]
            print(f"n={n:<5} seed={seed:<3} " + " ".join(f"{k}={row[k]:.2f}" for k in METRICS)
                  + f" lam={row['lam']:.3g} epochs={row['epochs']} {row['seconds']:.1f}s",
                  flush=True)
            record = {"settings": {**vars(args), "estimator": settings.estimator_options()},
                      "machine": f"{platform.machine()} {platform.system()}, "
                                 f"python {platform.python_version()}",
                      "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                      "summary": summarize(rows), "rows": rows}
            out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(format_table(summarize(rows)))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

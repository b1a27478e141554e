"""How a default linear fit scales with p: seconds, peak memory, the four metrics and the share
of draws that are DAGs, on the suite's simulator (ER, s = 2p edges) or on the MUNIN1 graph
with random weights (``--munin``, p = 186, as ``benchmarks.suite.munin`` draws it), each fit in
a fresh process (so its seconds include compiling, as a user's first fit does, and its peak
resident memory is its own). Peak memory is reported for the fit alone (``peak_rss_gb_fit``,
and the most resident memory seen during each of its stages, ``stage_peak_gb``, sampled every
0.2 s) and for the whole process, the scoring of ``DRAWS`` draws (a block at a time) included
(``peak_rss_gb``). Each stage's epochs are recorded too (``stage_epochs``: the epochs each fit
ran, and the member-epochs its batches computed, stopped members' slots included).

    PYTHONPATH=src python -m benchmarks.studies.scale --p 100 --n 100 --datasets 0 1 2
    PYTHONPATH=src python -m benchmarks.studies.scale --p 100 --datasets 0 1 2 \\
        --option candidate_parents=None --tag dense
    PYTHONPATH=src python -m benchmarks.studies.scale --munin --datasets 0
    PYTHONPATH=src python -m benchmarks.studies.scale --p 200 --datasets 0 --method DAGMA

``--method DAGMA`` fits DAGMA instead (``benchmarks.suite.peers.fit_dagma``: the suite's λ
grid, chosen on the dataset's held-out rows; a point estimate, scored as one draw; needs
``pip install torch==2.13.0 dagma``), with its seconds and peak memory measured the same way.
``--option name=value`` changes one estimator setting (``prodag.config.parameters.nest``
names). Prints a row per fit, two seeds' largest edge-probability gap per dataset (with
``--seeds 0 1``) and the mean of each setting, and writes
``benchmarks/results/scale_p<p>_n<n>[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import time
import warnings

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options

METRICS = ("brier", "eshd", "ef1", "auroc")
DRAWS = 1000


def simulated(p, n: int, dataset: int):
    """Dataset ``dataset``: ``simulate.dataset(p, 2p, n, seed=dataset)``, or for ``p =
    "munin"`` the MUNIN1 graph's ``simulate.semi_synthetic``."""
    import numpy as np

    from prodag import datasets, simulate

    return (simulate.dataset(p, 2 * p, n, seed=dataset) if p != "munin" else
            simulate.semi_synthetic(np.asarray(datasets.load_munin1().graph), n,
                                    sem="linear", noise="gaussian", seed=dataset))


def dagma_fit(p, n: int, dataset: int) -> dict:
    """DAGMA on dataset ``dataset`` (``simulated``), λ chosen on its held-out rows (run in a
    fresh process): its seconds, peak memory and the four metrics of its one graph."""
    from prodag import metrics

    from ..suite.peers import fit_dagma

    data = simulated(p, n, dataset)
    began = time.perf_counter()
    graph = fit_dagma(data.X, data.X_val)
    seconds = time.perf_counter() - began
    truth = data.adjacency != 0
    edges = graph[0] != 0
    scores = metrics.evaluate(data.adjacency, graph)
    return {"method": "DAGMA", "dataset": dataset, "seed": None, "seconds": seconds,
            "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20,
            "edges": int(edges.sum()), "true_edges": int(truth.sum()),
            **{k: float(scores[k]) for k in METRICS}}


def one_fit(p: int, n: int, dataset: int, seed: int, options: dict,
            progress: bool = False) -> dict:
    """A default fit of dataset ``dataset`` (``simulate.dataset(p, 2p, n, seed=dataset)``, or
    for ``p = "munin"`` the MUNIN1 graph's ``simulate.semi_synthetic``) with seed ``seed``,
    scored on ``DRAWS`` draws (run in a fresh process); ``progress`` shows the fit's stages
    on stderr."""
    import numpy as np

    from prodag import ProDAG, metrics
    from prodag.config.parameters import nest
    from prodag.graph import is_dag

    data = simulated(p, n, dataset)
    trace = ResidentMemory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        began = time.perf_counter()
        with trace:
            estimator = ProDAG(seed=seed, progress=progress, **nest(options)).fit(data.X)
        seconds = time.perf_counter() - began
    peak_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    support = estimator.candidate_parents_
    truth = data.adjacency != 0
    # scored a block of draws at a time (1000 dense draws are 8 GB at p = 1000), with the
    # expected SHD's parts: edges with no true edge between the pair either way, true edges
    # absent both ways, true edges present reversed only
    parts = {"extra": [], "missing": [], "reversed": [], "dag": []}

    def blocks():
        for graphs in estimator.sample_batches(DRAWS, seed=0):
            edges = graphs != 0
            flipped = np.swapaxes(edges, 1, 2)
            parts["extra"].append((edges & ~truth & ~truth.T).sum(axis=(1, 2)))
            parts["missing"].append((truth & ~edges & ~flipped).sum(axis=(1, 2)))
            parts["reversed"].append((truth & ~edges & flipped).sum(axis=(1, 2)))
            parts["dag"].append(is_dag(edges))
            yield edges
    scores = metrics.evaluate_batches(data.adjacency, blocks())
    extra, missing, reversed_, dags = (np.concatenate(parts[k]) for k in parts)
    return {"method": "ProDAG", "dataset": dataset, "seed": seed, "seconds": seconds,
            "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20,
            "peak_rss_gb_fit": peak_fit,
            "stage_peak_gb": trace.stage_peaks(estimator.fit_seconds_, began),
            "dag_share": float(np.mean(dags)), "lam": estimator.lam_,
            "expected_edges": float(estimator.edge_probabilities().sum()),
            "true_edges": int(truth.sum()),
            "true_edges_in_support": int(truth.sum() if support is None
                                         else (truth & support).sum()),
            "support_size": None if support is None else int(support.sum()),
            "expected_extra": float(extra.mean()), "expected_missing": float(missing.mean()),
            "expected_reversed": float(reversed_.mean()),
            "stages_s": estimator.fit_seconds_, "stage_epochs": estimator.fit_epochs_,
            "lambda_path": _plain(estimator.lambda_path_),
            "component_lams": [float(lam) for lam in estimator.component_lams_],
            "mixture_weights": np.round(estimator.mixture_weights_, 6).tolist(),
            "edge_probabilities": np.round(estimator.edge_probabilities(), 4).tolist(),
            **{k: float(scores[k]) for k in METRICS}}


class ResidentMemory:
    """The process's resident memory sampled every ``interval`` seconds by a thread while the
    ``with`` block runs: ``samples``, ``(perf_counter time, bytes)``."""

    def __init__(self, interval: float = 0.2):
        self.interval, self.samples = interval, []

    def __enter__(self):
        import threading

        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            with open("/proc/self/statm") as statm:
                self.samples.append((time.perf_counter(), int(statm.read().split()[1]) * page))
            self._stop.wait(self.interval)

    def stage_peaks(self, stage_seconds: dict, began: float) -> dict:
        """The most resident memory (GB) sampled during each stage, the stages taken to run
        one after the other from ``began`` for their ``stage_seconds`` (the estimator's
        ``fit_seconds_``, in order)."""
        peaks, start = {}, began
        for stage, length in stage_seconds.items():
            inside = [rss for t, rss in self.samples if start <= t < start + length]
            peaks[stage] = round(max(inside) / 2 ** 30, 3) if inside else None
            start += length
        return peaks


def _plain(value):
    """``value`` with numpy scalars and arrays made JSON's own types."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def _child(queue, fit, *args) -> None:
    queue.put(fit(*args))


def in_fresh_process(fit, *args) -> dict:
    """``fit(*args)`` run in a fresh (spawned) process."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, fit, *args))
    process.start()
    row = queue.get()
    process.join()
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--munin", action="store_true",
                        help="the MUNIN1 graph (p = 186) with random weights instead")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--datasets", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--option", action="append", default=[],
                        help="an estimator setting, name=value (repeatable)")
    parser.add_argument("--tag", default="")
    parser.add_argument("--method", choices=("ProDAG", "DAGMA"), default="ProDAG",
                        help="DAGMA: the peer instead, λ chosen on held-out rows")
    parser.add_argument("--progress", action="store_true",
                        help="show each fit's stages on stderr (for the long fits)")
    args = parser.parse_args(argv)
    if args.method == "DAGMA" and (args.option or args.progress or args.seeds != [0]):
        parser.error("--method DAGMA takes no --option, --progress or --seeds: its fit is "
                     "deterministic, with the suite's settings (benchmarks.suite.peers)")
    options = parse_options(args.option)
    graph = "munin" if args.munin else args.p
    name = (f"scale_munin_n{args.n}" if args.munin else f"scale_p{args.p}_n{args.n}") + (
        "_dagma" if args.method == "DAGMA" else "") + (f"_{args.tag}" if args.tag else "")
    if args.method == "DAGMA":
        rows = [in_fresh_process(dagma_fit, graph, args.n, dataset) for dataset in args.datasets]
        for row in rows:
            print(f"DAGMA p {graph} n {args.n} dataset {row['dataset']}: {row['seconds']:7.1f} s"
                  f"  peak {row['peak_rss_gb']:.2f} GB  Brier {row['brier']:7.2f}  E-SHD "
                  f"{row['eshd']:7.2f}  E-F1 {row['ef1']:5.1f}  AUROC {row['auroc']:5.1f}"
                  f"  edges {row['edges']}/{row['true_edges']}  load {os.getloadavg()[0]:.2f}",
                  flush=True)
        mean = {k: statistics.mean(row[k] for row in rows) for k in (*METRICS, "seconds")}
        print("mean: " + "  ".join(f"{k} {v:.2f}" for k, v in mean.items()))
        (RESULTS_DIR / f"{name}.json").write_text(json.dumps(
            {"p": graph, "n": args.n, "method": "DAGMA", "mean": mean, "rows": rows},
            indent=1) + "\n")
        return
    rows = []
    for dataset in args.datasets:
        for seed in args.seeds:
            row = in_fresh_process(one_fit, graph, args.n, dataset, seed, options,
                                   args.progress)
            rows.append(row)
            print(f"p {graph} n {args.n} dataset {dataset} seed {seed}: {row['seconds']:7.1f} s"
                  f"  peak {row['peak_rss_gb_fit']:.2f} GB (fit) {row['peak_rss_gb']:.2f} GB"
                  f" (all)  Brier {row['brier']:7.2f}"
                  f"  E-SHD {row['eshd']:7.2f}  E-F1 {row['ef1']:5.1f}  AUROC {row['auroc']:5.1f}"
                  f"  DAGs {row['dag_share']:.3f}  λ {row['lam']:.1f}"
                  f"  E[edges] {row['expected_edges']:.0f}/{row['true_edges']}"
                  f" (support holds {row['true_edges_in_support']})  extra/missing/reversed"
                  f" {row['expected_extra']:.0f}/{row['expected_missing']:.0f}/"
                  f"{row['expected_reversed']:.0f}  load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    for dataset in args.datasets:  # the seed-stability criterion: two seeds' |ΔP| per edge
        fits = [row for row in rows if row["dataset"] == dataset][:2]
        if len(fits) == 2:
            import numpy as np

            gap = np.abs(np.subtract(*(np.asarray(row["edge_probabilities"]) for row in fits)))
            print(f"dataset {dataset}, seeds {fits[0]['seed']} and {fits[1]['seed']}: max |ΔP| "
                  f"{gap.max():.3f}, mean {gap.mean():.4f}, edges beyond 0.3: "
                  f"{int((gap > 0.3).sum())}")
    mean = {k: statistics.mean(row[k] for row in rows)
            for k in (*METRICS, "seconds", "peak_rss_gb_fit", "peak_rss_gb", "dag_share")}
    print("mean: " + "  ".join(f"{k} {v:.2f}" for k, v in mean.items()))
    for row in rows:
        print(f"dataset {row['dataset']} seed {row['seed']}, peak GB by stage: "
              + ", ".join(f"{stage} {peak}" for stage, peak in row["stage_peak_gb"].items()))
        print(f"dataset {row['dataset']} seed {row['seed']}, epochs by stage (each fit's; "
              "member-epochs computed): " + "; ".join(
                  f"{stage}: {' '.join(map(str, epochs['per_fit']))}; {epochs['computed']}"
                  for stage, epochs in row["stage_epochs"].items()))
    out = RESULTS_DIR / f"{name}.json"
    out.write_text(json.dumps({"p": graph, "n": args.n, "options": options, "mean": mean,
                               "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

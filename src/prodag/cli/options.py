"""Options shared by the commands: choices as ``Enum`` types built from the library's own
lists (a typo fails while parsing, and ``--help`` lists the choices), and the defaults of the
Python API, read from the ``ProDAG`` constructor's signature so that the command line and
``ProDAG(...)`` never disagree."""

from __future__ import annotations

import inspect
import math
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from prodag.cli.helpformat import PANELS
from prodag.config.parameters import GROUPS, NOISE_MODELS, SELECTIONS, as_dict, check_lam
from prodag.config.starts import (MANY_STARTS_UP_TO, SCREENED_RESTARTS, SEARCHED_GRAPHS,
                                  SEARCHED_GRAPHS_ABOVE)
from prodag.estimator import ProDAG
from prodag.evaluation import simulate
from prodag.inputs.interventions import INTERVENTION_KINDS
from prodag.inputs.knowledge import Tiers
from prodag.models import LIKELIHOODS, SEM_NAMES
from prodag.projection import METHODS


def choices(name: str, values) -> type[Enum]:
    """A ``str`` Enum whose members are ``values`` (member name = value)."""
    return Enum(name, [(value, value) for value in values], type=str)


Sem = choices("Sem", SEM_NAMES)
SimulatedSem = choices("SimulatedSem", simulate.SEMS)
DemoSem = choices("DemoSem", ("linear", "additive"))
Likelihood = choices("Likelihood", LIKELIHOODS)
Projection = choices("Projection", METHODS)
SelectBy = choices("SelectBy", SELECTIONS)
GraphKind = choices("GraphKind", simulate.GRAPH_KINDS)
Noise = choices("Noise", simulate.NOISES)
InterventionKind = choices("InterventionKind", INTERVENTION_KINDS)

API = {**{name: parameter.default
          for name, parameter in inspect.signature(ProDAG).parameters.items()
          if name not in GROUPS},
       **{name: value for options in GROUPS.values() for name, value in as_dict(options()).items()},
       "forbid_within_tiers": Tiers.__dataclass_fields__["forbid_within"].default,
       "intervention_kind": inspect.signature(ProDAG.fit).parameters["intervention_kind"].default}
"""The defaults of ``ProDAG(...)``, its option groups' fields and ``fit``'s
``intervention_kind``: the command line's defaults for the same settings (flat, as
``prodag.config.parameters.nest`` takes them)."""

N_DRAWS = 1000
"""Posterior graphs drawn for samples.npz by ``fit`` and from a posterior.npz by ``evaluate``
(the same number, so both score the same graphs)."""

SemOption = Annotated[Sem, typer.Option(
    help="Structural equation model: 'linear' (weighted adjacency), 'additive' (each edge a "
         "weight times a learned piecewise-linear shape; the nonlinear model that finds the "
         "graph best in the benchmarks) or 'mlp' (one neural network per variable, the "
         "paper's).")]
LamOption = Annotated[str, typer.Option(
    help="Radius of the l1 ball that sets sparsity: 'auto' chooses it among 10 radii by "
         "--select-by (11 fits), 'inf' applies no l1 constraint, or a positive number.")]
SelectByOption = Annotated[SelectBy, typer.Option(
    help="How --lam auto chooses: 'elbo' (the highest evidence lower bound, all rows fitted), "
         "'validation' (the paper's: likelihood of a 10% held-out split, then a refit), "
         "'elbo-sparse' (the ELBO, but the smaller of two radii within 30 nats) or 'auto' "
         "('elbo-sparse' from 100 variables on, else 'elbo').")]
RestartsOption = Annotated[Optional[int], typer.Option(
    min=1, show_default=f"{1 + SEARCHED_GRAPHS} for linear ({1 + SEARCHED_GRAPHS_ABOVE} above "
                        f"{MANY_STARTS_UP_TO} variables, {SCREENED_RESTARTS} on candidate "
                        "parents), 3 for additive or --noise-variance estimate, 1 for mlp",
    help="Fits per chain at the chosen radii, mixed by their evidence: the linear SEM's data "
         "starts (the top-down order and the best distinct searched orders) in turn; "
         "otherwise the data start alternating with the prior (mlp: the prior). With "
         "elbo-sparse (--select-by auto from 100 variables on), starts beyond 4 run at the "
         "radius the first 4 chose.")]
ChainsOption = Annotated[int, typer.Option(
    "--chains", min=1, help="Independent chains of fits pooled into the posterior; edges on "
                            "which they disagree by more than 0.3 are reported.")]
BootstrapOption = Annotated[bool, typer.Option(
    "--bootstrap/--no-bootstrap", help="Bag the chains (BayesBag): each fits its own bootstrap "
                                       "resample of the rows and they share the posterior "
                                       "equally; for large data the model misfits.")]
RefineStepsOption = Annotated[Optional[int], typer.Option(
    min=0, show_default="linear: 375·(20/p)², at most 6000 (p ≤ 5), at least 10; "
                        "additive, mlp: none",
    help="Metropolis steps that move 1000 draws of the fitted posterior towards the "
         "model's own posterior (0: none); about twice the fit's time at 2000 steps "
         "and 20 variables. With --bootstrap, each draw towards its chain's resample.")]
CandidateParentsOption = Annotated[str, typer.Option(
    "--candidate-parents", metavar="auto|none|K",
    help="Restrict each variable's parents to K candidates screened from the data (its "
         "first K neighbours on the lasso path, made symmetric): the posterior is the "
         "model's on that support. 'auto': K = 16 from 100 variables on, no screen below; "
         "'none': every variable may parent every other.")]
Sampler = choices("Sampler", ("mixture", "smc"))
SamplerOption = Annotated[Sampler, typer.Option(
    help="The posterior: 'mixture' (the fits' pooled mixture, refined with --refine-steps) "
         "or 'smc' (draws of the model's own posterior by tempered SMC from every fit; two "
         "independent populations compared in summary.json).")]
NSamplesOption = Annotated[Optional[int], typer.Option(
    min=1, show_default="linear: 100 up to 14 variables, 50·(20/p)² to 50 at 20 and beyond; "
                        "additive, mlp: 50",
    help="Monte Carlo samples of the graph per optimisation step (L).")]
MaxEpochsOption = Annotated[int, typer.Option(
    min=1, help="Most optimisation epochs per fit (it stops earlier when the objective stalls).")]
FitSeedOption = Annotated[Optional[int], typer.Option(
    min=0, max=2 ** 32 - 1, show_default="a fresh seed, printed and kept in summary.json",
    help="Random seed of the fit, the validation split and the sampling.")]
ProjectionOption = Annotated[Projection, typer.Option(
    help="Projection onto DAGs: 'exact' (small p), 'search', 'path' (the paper's) or 'auto'.")]
StandardizeOption = Annotated[bool, typer.Option(
    "--standardize/--no-standardize",
    help="Scale every variable to mean 0, variance 1 before fitting. The default is the "
         "Python API's (ProDAG(standardize=...)).")]
NoiseVarianceOption = Annotated[str, typer.Option(
    "--noise-variance", metavar="NUMBER|auto|equal|quietest|estimate",
    help="Noise variance of every variable's equation, in the fitted (centred, or "
         "standardised) units: a positive number (the paper's 1), 'equal' (one variance shared "
         "by every variable, learned), 'quietest' (fixed at the quietest column's variance), "
         "'auto' (quietest for the additive SEM, equal otherwise) or 'estimate' (one learned "
         "variance per variable).")]
LikelihoodOption = Annotated[Likelihood, typer.Option(
    help="Noise distribution: 'gaussian' (the paper's) or 'student' (Student-t with 4 degrees "
         "of freedom: a gross outlier in a variable's own equation barely moves the fit; "
         "columns are centred at their medians).")]
PruneOption = Annotated[float, typer.Option(
    min=0.0, help="Zero projected weights with |w| at or below this value, in the fitted "
                  "(centred, or standardised) units; the paper's implementation uses 0.1.")]
InterventionsOption = Annotated[Optional[str], typer.Option(
    "--interventions", metavar="COLUMN|FILE",
    help="Known intervention targets: the name of a column of DATA naming each row's "
         "intervened variables ('' for observational rows, several joined by ';'; the column "
         "is removed from the variables), or a CSV file of 0/1 with one column per variable "
         "and one row per row of DATA. An intervened variable's equation is left out of "
         "that row's likelihood.")]
InterventionKindOption = Annotated[InterventionKind, typer.Option(
    "--intervention-kind",
    help="What an intervened variable passes on to its children: 'do', its measured value "
         "(a perfect intervention on it, as 'prodag simulate' makes), or 'activity', nothing "
         "that varies within the condition (a drug set an unmeasured activity; the measured "
         "value is a read-out). With 'activity' every distinct set of targets is a condition "
         "unless --conditions is given.")]
ConditionsOption = Annotated[Optional[str], typer.Option(
    "--conditions", metavar="COLUMN",
    help="A column of DATA naming each row's experimental condition (removed from the "
         "variables): every condition gets its own intercept for every variable, so a "
         "condition's shift of the baselines is not read as edges.")]
ForbidOption = Annotated[Optional[Path], typer.Option(
    "--forbid", metavar="FILE", help="CSV of edges no sample may contain: columns source, "
                                     "target (variable names).")]
RequireOption = Annotated[Optional[Path], typer.Option(
    "--require", metavar="FILE", help="CSV of edges every sample contains: columns source, "
                                      "target (variable names).")]
TiersOption = Annotated[Optional[Path], typer.Option(
    "--tiers", metavar="FILE", help="CSV with columns variable, tier (an integer, earlier "
                                    "tiers first): no edge from a later tier to an earlier "
                                    "one; variables not listed are unconstrained.")]
WithinTiersOption = Annotated[bool, typer.Option(
    "--forbid-within-tiers", help="With --tiers: also forbid edges inside a tier.")]
ThresholdOption = Annotated[float, typer.Option(
    min=0.0, max=1.0, help="Edges at or above this posterior probability are drawn in "
                           "graph.png and listed.")]
NDrawsOption = Annotated[int, typer.Option(
    min=1, help="Posterior graphs drawn into samples.npz (and behind edge_probabilities.csv).")]
HiddenUnitsOption = Annotated[int, typer.Option(
    min=1, help="--sem mlp: hidden units per variable's network (the paper's 10; a narrower "
                "network is faster).")]
BiasOption = Annotated[bool, typer.Option(
    "--bias/--no-bias", help="--sem mlp: give the networks' layers biases.")]
ProgressOption = Annotated[bool, typer.Option(
    "--progress/--no-progress", help="Show a progress bar while fitting.")]
TopOption = Annotated[int, typer.Option(min=1, help="Edges printed in the ranked table.")]
OutOption = Annotated[Path, typer.Option(
    help="Folder for the results (created if missing; an existing file is refused before "
         "fitting).")]


DATA, MODEL, FITTING, KNOWLEDGE, OUTPUT = PANELS
PANEL_OPTIONS = {
    DATA: [StandardizeOption, InterventionsOption, InterventionKindOption, ConditionsOption],
    MODEL: [SemOption, NoiseVarianceOption, LikelihoodOption, HiddenUnitsOption, BiasOption,
            ProjectionOption, PruneOption, CandidateParentsOption],
    FITTING: [LamOption, SelectByOption, RestartsOption, ChainsOption, BootstrapOption,
              RefineStepsOption, SamplerOption, NSamplesOption, MaxEpochsOption,
              FitSeedOption],
    KNOWLEDGE: [ForbidOption, RequireOption, TiersOption, WithinTiersOption],
    OUTPUT: [OutOption, ThresholdOption, NDrawsOption, TopOption, ProgressOption],
}
"""The panels that group the options in ``--help`` (``prodag fit --help``: Data, Model,
Fitting, Knowledge, Output), set on each shared option once."""
for _panel, _options in PANEL_OPTIONS.items():
    for _option in _options:
        _option.__metadata__[0].rich_help_panel = _panel

def parse_noise_variance(text: str) -> float | str:
    """The ``--noise-variance`` text as ``ProDAG(noise_variance=...)`` takes it."""
    value = text.strip().lower()
    if value in NOISE_MODELS:
        return value
    try:
        variance = float(value)
    except ValueError:
        raise ValueError(f"--noise-variance must be a positive number, "
                         f"{' or '.join(repr(m) for m in NOISE_MODELS)}; got {text!r}") from None
    if not (variance > 0 and math.isfinite(variance)):
        raise ValueError(f"--noise-variance must be a positive, finite number; got {text!r}")
    return variance


def noise_variance_text(value) -> str:
    """``ProDAG``'s ``noise_variance`` default as ``--noise-variance`` text."""
    return value if isinstance(value, str) else f"{float(value):g}"


def parse_lam(text: str) -> float | str:
    """The ``--lam`` text as ``ProDAG(lam=...)`` takes it: ``"auto"`` (chosen from a grid),
    ``"inf"`` → ``math.inf``, else a positive float."""
    value = text.strip().lower()
    if value == "auto":
        return "auto"
    try:
        lam = float(value)
    except ValueError:
        raise ValueError(f"--lam must be 'auto', 'inf' or a positive number, got {text!r}") \
            from None
    try:
        return check_lam(lam)  # the rule ProDAG(lam=...) and ProDAG.load apply
    except ValueError as error:
        reason = str(error) if lam > 0 else "it must be positive (the l1-ball radius)"
        raise ValueError(f"--lam {text}: {reason}") from None


def parse_candidate_parents(text: str) -> int | str | None:
    """The ``--candidate-parents`` text as ``TrainingOptions(candidate_parents=...)`` takes
    it: ``"auto"``, ``"none"`` → None, else a positive whole number."""
    value = text.strip().lower()
    if value in ("auto", "none"):
        return None if value == "none" else value
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"--candidate-parents must be 'auto', 'none' or a positive whole "
                         f"number of candidate parents, got {text!r}")
    return int(value)


def lam_text(lam: float | str) -> str:
    """The ``--lam`` spelling of a ``ProDAG(lam=...)`` value (inverse of ``parse_lam``)."""
    return lam if isinstance(lam, str) else str(lam)

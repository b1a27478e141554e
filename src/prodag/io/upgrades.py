"""Model files of older formats read as the current one: each step turns version ``v``
metadata into version ``v + 1`` (``prodag.io.persistence.load`` runs them in turn).

Version 2: the mixture posterior and the prior knowledge parameters. Version 3: the
experimental conditions and ``intervention_kind``. Version 4: ``likelihood``. Version 5:
``n_chains``, ``bootstrap`` and the chains' ``diagnostics_``. Version 6: the parameters as the
constructor takes them now (``training`` and ``network`` groups, ``lam="auto"``, ``tiers``
with its ``forbid_within``) and ``fit``'s ``intervention_kind`` as ``intervention_kind_``.
Version 7: ``TrainingOptions.refine_steps=None`` is the default that refines a linear fit;
files before it were written without refinement unless they name its steps. Version 8:
``n_samples=None`` resolves the Monte Carlo samples for the data's size; files before it
name theirs (an older prodag cannot read ``None``), so they read unchanged. Version 9: the
refined draws' acceptance has an entry for jumps between fits (``refinement.KINDS``); the
loader gives older files' a 0 there. Version 10: on candidate parents the refined draws are
kept on their slots, ``(n, p, K)``; older files' dense ``(n, p, p)`` draws read as they are.
"""

from __future__ import annotations

from dataclasses import fields

from prodag.config.parameters import GROUPS, TrainingOptions, as_dict


def upgraded(metadata: dict, check) -> dict:
    """``metadata`` of any readable version as the current version; ``check`` (the loader's
    ``prodag.io.model_file.Checker``) fails with the file's name when an old file cannot be read."""
    for version, step in STEPS.items():
        if metadata["format_version"] == version:
            check.that(isinstance(metadata.get("params"), dict), "'params' is not a JSON object")
            metadata = step(metadata, check)
    return metadata


def _from_version_2(metadata: dict, check) -> dict:
    """No conditions, ``intervention_kind="do"``."""
    return {**metadata, "format_version": 3, "conditions_": None,
            "params": {"intervention_kind": "do", **metadata["params"]}}


def _from_version_3(metadata: dict, check) -> dict:
    """Gaussian noise."""
    return {**metadata, "format_version": 4,
            "params": {"likelihood": "gaussian", **metadata["params"]}}


def _from_version_4(metadata: dict, check) -> dict:
    """One chain, no diagnostics."""
    return {**metadata, "format_version": 5, "diagnostics_": None,
            "params": {"n_chains": 1, "bootstrap": False, **metadata["params"]}}


def _from_version_5(metadata: dict, check) -> dict:
    """Flat parameters grouped: the fields of ``TrainingOptions`` and ``NetworkOptions`` into
    ``training`` and ``network``; ``lam=None`` as ``"auto"``; ``forbid_within_tiers`` into
    ``tiers``; ``intervention_kind`` out of the parameters; the removed ``mix_radii`` (a
    fit-time choice: the saved components sample the same) dropped."""
    params = dict(metadata["params"])
    edges = params.pop("mlp_edges", "group_norm")
    check.that(edges == "group_norm", f"it was saved with mlp_edges={edges!r}, an option "
               "this prodag no longer has; refit the model with this version")
    params.pop("mix_radii", None)
    kind = params.pop("intervention_kind", "do")
    if params.get("lam") is None:
        params["lam"] = "auto"
    for group, cls in GROUPS.items():
        given = {f.name: params.pop(f.name) for f in fields(cls) if f.name in params}
        params[group] = {**as_dict(cls()), **given}
    if params.pop("forbid_within_tiers", False) and params.get("tiers"):
        params["tiers"] = {"groups": params["tiers"], "forbid_within": True}
    return {**metadata, "format_version": 6, "params": params, "intervention_kind_": kind}


def _from_version_6(metadata: dict, check) -> dict:
    """No refinement where the file names none (``refine_steps`` then defaulted to 0)."""
    params = dict(metadata["params"])
    training = params.get("training") or as_dict(TrainingOptions())
    check.that(isinstance(training, dict), "'params.training' is not a JSON object")
    if training.get("refine_steps") is None:
        training = {**training, "refine_steps": 0}
    return {**metadata, "format_version": 7, "params": {**params, "training": training}}


def _from_version_7(metadata: dict, check) -> dict:
    """Nothing to change: version 7 files name their ``n_samples``."""
    return {**metadata, "format_version": 8}


def _from_version_8(metadata: dict, check) -> dict:
    """Nothing to change in the metadata (the loader pads the refined acceptance)."""
    return {**metadata, "format_version": 9}


def _from_version_9(metadata: dict, check) -> dict:
    """Nothing to change (dense refined draws are read as they are)."""
    return {**metadata, "format_version": 10}


STEPS = {2: _from_version_2, 3: _from_version_3, 4: _from_version_4, 5: _from_version_5,
         6: _from_version_6, 7: _from_version_7, 8: _from_version_8, 9: _from_version_9}
"""The step that reads each older version."""

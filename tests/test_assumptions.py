"""The assumption checks before a fit (``prodag.inputs.assumptions``): each fires on the shape it is
for, naming the column and the guide's section, and all stay silent on data from the model
(the simulator's) and on the Sachs cells as the demo and a user fit them."""

import warnings

import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions, datasets, simulate
from prodag.fit import prepare
from prodag.inputs.assumptions import (GUIDE, LAG1_FLOOR, AssumptionWarning, lag1_autocorrelation,
                                name_words, warn_assumptions)
from prodag.inputs.interventions import intervention_mask

TINY = dict(lam=2.0, max_epochs=2, n_samples=4, progress=False, n_chains=1,
            training=TrainingOptions(n_restarts=1, init="prior"))


def _found(frame: pd.DataFrame, **groups):
    """``(found, messages)`` of ``warn_assumptions`` on ``frame``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = warn_assumptions(frame.to_numpy(float), list(frame.columns), **groups)
    messages = [str(w.message) for w in caught if issubclass(w.category, AssumptionWarning)]
    return found, messages


@pytest.fixture(scope="module")
def table():
    """200 rows of a five-variable linear SEM in random order: no check fires on it."""
    data = simulate.dataset(5, 5, 200, seed=1)
    return pd.DataFrame(data.X, columns=["a", "b", "c", "d", "e"])


def test_the_base_table_is_silent(table):
    assert _found(table)[1] == []


def test_a_binary_column_is_named_with_its_values(table):
    table = table.assign(sex=np.random.default_rng(0).integers(0, 2, len(table)))
    found, messages = _found(table)
    assert list(found["few_valued"]) == [5]
    assert len(messages) == 1 and "sex (2 values: 0, 1)" in messages[0]
    assert "--tiers" in messages[0] and f"{GUIDE}#binary-and-few-valued-columns" in messages[0]


@pytest.mark.parametrize("name, values, why", [
    ("year", np.repeat(np.arange(1959, 2009), 4), "named like a calendar"),
    ("quarter", np.tile([1, 2, 3, 4], 50), "named like a calendar"),
    ("patientID", np.random.default_rng(0).normal(size=200), "named like a calendar"),
    ("v", np.arange(200) * 0.5 + 3, "sorted over the rows"),
    ("v", np.random.default_rng(1).permutation(200) + 1001, "distinct integers")])
def test_index_and_calendar_columns_are_named(table, name, values, why):
    found, messages = _found(table.assign(**{name: values}))
    assert found["calendar"] == {5: found["calendar"][5]} and why in found["calendar"][5]
    assert found["few_valued"] == {}  # the quarter is named once, as a calendar column
    assert len(messages) == 1 and f"{name} ({why}" in messages[0] and "Drop them" in messages[0]


def test_calendar_words_are_whole_words():
    assert name_words("patientID_2") == ["patient", "id", "2"]
    assert name_words("dayOfWeek") == ["day", "of", "week"]
    assert not {"id", "date"} & (set(name_words("acid_update")) | set(name_words("Valid")))


def test_time_ordered_rows_are_flagged_and_random_order_is_not():
    rng = np.random.default_rng(0)
    n, p = 300, 4
    ar = np.zeros((n, p))
    for t in range(1, n):  # AR(1) with coefficient 0.9 in every column
        ar[t] = 0.9 * ar[t - 1] + rng.normal(size=p)
    frame = pd.DataFrame(ar, columns=list("abcd"))
    found, messages = _found(frame)
    assert found["lag1"] > 0.7 and "time series" in messages[0]
    assert _found(frame.sample(frac=1.0, random_state=0))[0]["lag1"] is None


def test_time_order_is_judged_within_conditions():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(4), 100)  # four experiments in blocks, shifted means
    data = rng.normal(size=(400, 3)) + 3.0 * groups[:, None]
    frame = pd.DataFrame(data, columns=["a", "b", "c"])
    assert _found(frame)[0]["lag1"] > LAG1_FLOOR
    assert _found(frame, groups=groups)[1] == []
    mask = np.zeros((400, 3), bool)
    mask[groups == 1, 0] = mask[groups == 2, 1] = mask[groups == 3, 2] = True
    assert _found(frame, mask=mask)[1] == []  # without labels: the sets of targets
    np.testing.assert_allclose(lag1_autocorrelation(data, groups),
                               lag1_autocorrelation(data - 3.0 * groups[:, None], groups))


def test_near_duplicates_are_named_and_exact_copies_left_to_the_collinearity_check(table):
    noise = np.random.default_rng(0).normal(size=len(table))
    copy = table["a"] + 0.01 * table["a"].std() * noise  # correlation about 0.99995
    found, messages = _found(table.assign(a2=copy))
    assert [(j, k) for j, k, _ in found["near_duplicates"]] == [(0, 5)]
    assert "a and a2 (0.999" in messages[0]
    assert _found(table.assign(a2=2 * table["a"] + 1))[0]["near_duplicates"] == []
    assert _found(table.assign(a2=table["a"] + 0.1 * noise))[0]["near_duplicates"] == []


@pytest.mark.parametrize("base, rows", [("zeros", 200), ("zeros", 25), ("gaussian", 200)])
def test_a_spike_is_named_with_its_row_once(table, base, rows):
    table = table.iloc[:rows]
    column = (np.zeros(rows) if base == "zeros" else np.random.default_rng(0).normal(size=rows))
    column[17] = 500.0
    found, messages = _found(table.assign(s=column))
    assert found["spikes"] == {5: 17} and found["few_valued"] == {}
    assert len(messages) == 1 and "s (row 17: 500)" in messages[0]


@pytest.mark.parametrize("sem", ["linear", "mlp"])
def test_silent_on_the_simulators_data(sem):
    for p, n, seed in [(5, 50, 0), (10, 200, 1), (20, 2000, 2), (50, 50, 3), (50, 500, 4)]:
        for density in (1, 2):
            data = simulate.dataset(p, density * p, n, sem=sem, seed=seed)
            found, messages = _found(pd.DataFrame(data.X, columns=[f"x{j}" for j in range(p)]))
            assert messages == [], (p, n, seed, messages)


@pytest.mark.parametrize("log", [False, True])
def test_silent_on_sachs_with_its_conditions_or_targets(log):
    sachs = datasets.load_sachs()
    frame = sachs.data[list(sachs.variables)]
    frame = np.log(frame) if log else frame
    codes = pd.factorize(pd.Series(sachs.conditions).astype(str))[0]
    mask = intervention_mask(sachs.interventions, list(sachs.variables), len(frame))
    assert _found(frame, groups=codes)[1] == []
    assert _found(frame, mask=mask)[1] == []  # the demo's --no-conditions


def test_a_fit_checks_once_per_kind_before_fitting(table):
    frame = table.assign(year=np.arange(len(table)) + 1900,
                         sex=np.random.default_rng(0).integers(0, 2, len(table)))
    with pytest.warns(AssumptionWarning) as caught:  # the fit's first step
        prepare.preprocess(ProDAG(seed=0, **TINY), frame, None, None, None)
    messages = [str(w.message) for w in caught if issubclass(w.category, AssumptionWarning)]
    assert len(messages) == 2 and "year" in messages[0] and "sex" in messages[1]
    # with sex in the first tier, as the warning advises, only the calendar column is left
    settings = {**TINY, "tiers": [["sex"], [c for c in frame.columns if c != "sex"]]}
    with pytest.warns(AssumptionWarning) as caught:
        prepare.preprocess(ProDAG(seed=0, **settings), frame, None, None, None)
    messages = [str(w.message) for w in caught if issubclass(w.category, AssumptionWarning)]
    assert len(messages) == 1 and "year" in messages[0]


def test_every_warning_links_a_section_of_the_guide():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    headings = re.findall(r"^#+ (.+)$", (root / GUIDE).read_text(), flags=re.MULTILINE)
    anchors = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
    linked = set()
    for module in ("inputs/assumptions.py", "posterior/sortability.py"):
        source = (root / "src" / "prodag" / module).read_text()
        linked |= set(re.findall(r'messages\["([\w-]+)"\]', source))
        linked |= set(re.findall(r"assumptions\.md#([\w-]+)", source))
    assert len(linked) == 6 and linked <= anchors, linked - anchors

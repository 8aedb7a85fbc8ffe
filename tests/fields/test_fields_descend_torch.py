"""``descend`` against torch.optim, iterate for iterate.

The reference paths were made by torch 2.13.0 (CPU, float64, ``foreach=False``) with the
committed script tests/reference/make_optim.py, which also records each case's own
sensitivity to rounding (every case amplifies a one-ulp change per step by less than
1e-12, so agreement at 1e-12 can only come from the same formulas). Every iterate, step 0
to the last, must agree to 1e-12 relative (|a − b| / |b| per iterate, b torch's).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.fields.descend import descend
from gradcli.fields.function import FieldFunction
from gradcli.fields.optim import settings

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "optim_paths.json").read_text())
CASES = REFERENCE["cases"]
TOLERANCE = 1e-12
#: the torch.optim class (and its keyword arguments) that is each gradcli method
METHOD = {"SGD": lambda kw: "momentum" if kw.get("momentum") else "gd",
          "Adam": lambda kw: "adam", "AdamW": lambda kw: "adamw",
          "RMSprop": lambda kw: "rmsprop"}


def _case_id(case: dict) -> str:
    args = ",".join(f"{k}={v}" for k, v in case["kwargs"].items())
    return f"{case['function']}-{case['optimizer']}({args})"


def _relative(path: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.linalg.norm(path - ref, axis=1) / np.linalg.norm(ref, axis=1)


def test_reference_was_made_by_the_committed_script_with_torch_2_13():
    assert REFERENCE["generator"] == "tests/reference/make_optim.py"
    assert REFERENCE["torch"].startswith("2.13.0")
    assert len(CASES) >= 15
    assert {c["optimizer"] for c in CASES} == {"SGD", "Adam", "AdamW", "RMSprop"}
    assert all(c["sensitivity"] < TOLERANCE for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_every_iterate_matches_torch_optim(case):
    names = "xyz"[:len(case["start"])]
    fn = FieldFunction(case["expression"], dict(zip(names, case["start"], strict=True)))
    method = METHOD[case["optimizer"]](case["kwargs"])
    path = descend(fn, np.array([case["start"]]), settings(method, **case["kwargs"]),
                   steps=case["steps"])
    ref = np.array(case["path"])
    assert path.step.tolist() == list(range(case["steps"] + 1))
    assert path.X[0].tolist() == case["start"]  # step 0 is the start itself
    assert _relative(path.X, ref).max() <= TOLERANCE


def test_many_starts_in_one_run_follow_the_same_paths():
    # Adam's first case started at three points at once: each run of the vectorised
    # computation is exactly the run of its start alone (the formulas are elementwise)
    case = CASES[0]
    starts = np.array([case["start"], [0.0, 0.0], [2.0, -1.0]])
    fn = FieldFunction(case["expression"], {"x": 0.0, "y": 0.0})
    together = descend(fn, starts, settings("adam", **case["kwargs"]), steps=200)
    for r, start in enumerate(starts):
        alone = descend(fn, start[None, :], settings("adam", **case["kwargs"]), steps=200)
        assert np.array_equal(together.X[together.run == r], alone.X)
    first = together.X[together.run == 0]
    assert _relative(first, np.array(case["path"][:201])).max() <= TOLERANCE


def test_the_command_line_writes_torchs_iterates(capsys):
    case = next(c for c in CASES if c["optimizer"] == "Adam" and c["steps"] == 5000)
    argv = ["descend", case["expression"], "--from", "x=-1.2,y=1", "--method", "adam",
            "--lr", "1e-3", "--steps", "5000", "--every", "250"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["step", "x", "y", "f", "|grad f|"]
    steps = [int(float(r[0])) for r in rows[1:]]
    assert steps == list(range(0, 5001, 250))
    got = np.array([[float(r[1]), float(r[2])] for r in rows[1:]])
    ref = np.array(case["path"])[steps]
    assert _relative(got, ref).max() <= TOLERANCE
    assert err.strip() == "stopped at step 5000: --steps 5000 reached (|grad f| = 2.32)"

"""Every note a command says on stderr is in its JSON output's "notes" (stdout and -o FILE,
with --quiet too), and the library's result carries the same lines in ``.notes``: one
channel feeds both (before, JSON said "notes": [] whatever stderr said)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gradcli

# each command with notes of its own kind; the lines it says are checked, not guessed
CASES = {
    "defaulted grid": ["grad", "x^2", "--grid", "x"],
    "expression warning": ["eval", "x/2pi", "--at", "x=1"],
    "non-finite": ["grad", "log(x)", "--at", "x=-1"],
    "check": ["grad", "x^3", "--at", "x=2", "--check"],
    "vjp shapes": ["vjp", "[log(x)*y, x+y]", "--at", "x=-1,y=2", "--vector", "1,0"],
    "jacobian non-finite": ["jacobian", "[sqrt(x), y]", "--at", "x=0,y=1"],
    "taylor non-finite": ["taylor", "log(x)", "--at", "x=-1", "--order", "1"],
    "critical none": ["critical", "x + y^2", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5"],
    "descend": ["descend", "x^2 + 10y^2", "--from", "x=1,y=1", "--lr", "0.01", "--steps",
                "5"],
    "flow dopri5": ["flow", "[-y, x]", "--from", "x=1,y=0", "--t", "0:1:11", "--method",
                    "dopri5"],
    "flow diverged": ["flow", "[x^2, 0]", "--from", "x=1,y=0", "--t", "0:2:21"],
    "propagate monte carlo": ["propagate", "2x - 3y + 1", "--at", "x=1+-0.2, y=2+-0.1",
                              "--monte-carlo", "1000", "--seed", "1"],
    "propagate non-finite": ["propagate", "log(x)", "--at", "x=-1+-0.1"],
}

# what a table shows under it of its own (not said on stderr): a vjp's shapes
OWN = {"vjp shapes": ["shapes per point: v (2,) (like f), J (2, 2) = outputs × inputs, "
                      "vᵀJ (2,): one vjp/d column per input"]}


def _json_notes(text: str) -> list[str]:
    """The notes, after propagate's own first one: the context its result was computed
    from (not said on stderr, as a table's own notes are not)."""
    notes = json.loads(text)["notes"]
    if notes and notes[0].startswith("context: {"):
        assert json.loads(notes[0].removeprefix("context: "))["inputs"]
        return notes[1:]
    return notes


@pytest.mark.parametrize("case", list(CASES))
def test_json_notes_are_what_stderr_says(cli, tmp_path: Path, case: str) -> None:
    """-f json on stdout and -o x.json: "notes" is the lines said on stderr, in order
    (after the table's own); with --quiet stderr is silent (but for a run's failure) and
    the notes are the same."""
    args = CASES[case]
    status, out, err = cli([*args, "-f", "json"])
    said = err.splitlines()
    assert said, f"{case}: the run says nothing, so it tests nothing"
    assert _json_notes(out) == OWN.get(case, []) + said
    path = tmp_path / "x.json"
    status_file, _, err_file = cli([*args, "-o", str(path)])
    assert status_file == status and err_file.splitlines() == said
    assert _json_notes(path.read_text()) == OWN.get(case, []) + said
    status_quiet, out_quiet, err_quiet = cli([*args, "-f", "json", "-q"])
    assert status_quiet == status
    assert _json_notes(out_quiet) == OWN.get(case, []) + said
    if status == 0:  # --check's verdict is its output: said with --quiet too
        assert err_quiet == ("" if case != "check" else err)


def test_the_graphs_json_holds_its_notes(cli) -> None:
    """gradcli graph -f json: the expression's warning said on stderr is in its notes."""
    status, out, err = cli(["graph", "x/2pi", "--at", "x=1", "-f", "json"])
    assert status == 0 and err.startswith("warning: '/2pi' divides by 2 only")
    assert _json_notes(out) == err.splitlines()
    _, out, err = cli(["graph", "x^2", "--at", "x=1", "-f", "json"])
    assert err == "" and _json_notes(out) == []


def test_notes_of_a_session_line_are_its_own(cli) -> None:
    """Commands run one after another in a process (a session) keep their own notes."""
    _, out, _ = cli(["grad", "log(x)", "--at", "x=-1", "-f", "json"])
    assert len(_json_notes(out)) == 1
    _, out, err = cli(["grad", "x^2", "--at", "x=1", "-f", "json"])
    assert err == "" and _json_notes(out) == []


def test_the_library_results_carry_the_same_notes(cli) -> None:
    """gradcli.evaluate/critical/descend/flow/propagate: ``.notes`` hold the lines the
    command says, parameters in the library's names (steps=5 where it says --steps 5)."""
    _, _, err = cli(["grad", "log(x)", "--at", "x=-1"])
    assert gradcli.evaluate("log(x)", "grad", at={"x": -1}).notes == err.splitlines()
    with pytest.warns(gradcli.lang.ExpressionWarning):
        got = gradcli.evaluate("x/2pi", at={"x": 1})
    _, _, err = cli(["eval", "x/2pi", "--at", "x=1"])
    assert got.notes == err.splitlines()
    _, _, err = cli(CASES["critical none"])
    assert gradcli.critical("x + y^2", grid={"x": (-1, 1, 5), "y": (-1, 1, 5)}).notes \
        == err.splitlines()
    _, _, err = cli(CASES["descend"])
    got = gradcli.descend("x^2 + 10y^2", {"x": 1, "y": 1}, lr=0.01, steps=5).notes
    assert got == [line.replace("--steps 5", "steps=5") for line in err.splitlines()]
    assert "--" not in got[0]
    _, _, err = cli(CASES["flow diverged"])
    assert gradcli.flow("[x^2, 0]", {"x": 1, "y": 0}, t=(0, 2, 21)).notes \
        == err.splitlines()
    _, _, err = cli(CASES["flow dopri5"])
    assert gradcli.flow("[-y, x]", {"x": 1, "y": 0}, t=(0, 1, 11), method="dopri5").notes \
        == err.splitlines()
    _, _, err = cli(CASES["propagate non-finite"])
    assert gradcli.propagate("log(x)", at={"x": "-1+-0.1"}).notes == err.splitlines()
    _, _, err = cli(CASES["propagate monte carlo"])
    got = gradcli.propagate("2x - 3y + 1", at={"x": "1+-0.2", "y": "2+-0.1"},
                            monte_carlo=1000, seed=1)
    # 1,000 samples: the note that they are few, and no verdict on so rough an interval
    assert got.notes == err.splitlines() and len(got.notes) == 2
    assert np.isfinite(got["mean"][0])

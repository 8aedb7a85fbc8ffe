"""critical, descend, flow and the picture's marks on awkward formulas and options: every
run ends with a one-line message or a result (exit 0, 1 or 2), never an internal error.

Formulas with poles, domain edges, non-finite values at the start, unused variables and
shapes that do not fit; options at their edges (no steps, huge values, a time grid that
runs backwards).
"""

from __future__ import annotations

import pytest

from gradcli.cli.main import main

FORMULAS = ["x^2+y^2", "[y, -x]", "1/x + y", "log(x)*y", "sqrt(x)+y", "[x, y, x*y]",
            "x^y", "where(x>0, x, -x) + y^2", "0", "exp(x*y)"]
RUNS = [
    ["critical", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5"],
    ["critical", "--grid", "x=0:0:1", "--grid", "y=0:1:2"],
    ["critical", "--grid", "x=-1:1:5", "--at", "y=1"],
    ["descend", "--from", "x=1,y=1", "--method", "newton", "--steps", "50"],
    ["descend", "--from", "x=-1,y=-1", "--method", "newton", "--maximize", "--steps", "50"],
    ["descend", "--from-grid", "x=-1:1:3", "--from-grid", "y=-1:1:3", "--method",
     "rmsprop", "--centered", "--momentum", "0.5", "--steps", "50"],
    ["descend", "--from", "x=1e308,y=1e308", "--lr", "1", "--steps", "5"],
    ["descend", "--from", "x=1", "--at", "y=inf", "--steps", "3"],
    ["descend", "--from", "x=1,y=1", "--steps", "0", "--every", "5"],
    ["flow", "--from", "x=1,y=1", "--t", "0:-1:11"],
    ["flow", "--from", "x=1,y=1", "--t", "0:1e300:3"],
    ["flow", "--from-grid", "x=-1:1:3", "--from-grid", "y=0", "--method", "euler"],
]


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("argv", RUNS, ids=lambda a: " ".join(a[:3]))
def test_no_internal_errors(capsys, formula, argv):
    status = main([argv[0], formula, *argv[1:]])
    err = capsys.readouterr().err
    assert status in (0, 1, 2), err
    assert "internal error" not in err and "Traceback" not in err
    if status == 2:
        assert err.startswith(("gradcli: error:", "  ")) and err.count("error:") == 1


@pytest.mark.parametrize("formula", ["1/x + y", "log(x)*y", "x^y", "sqrt(x)+y"])
@pytest.mark.parametrize("marks", [["--basins"], ["--mark-critical"],
                                   ["--path-from", "x=0.5,y=0.5", "--method", "newton"],
                                   ["--flow-from", "x=0.5,y=0.5", "--t", "0:5:51"]])
def test_pictures_of_awkward_formulas(capsys, tmp_path, formula, marks):
    status = main(["plot", formula, "--grid", "x=-1:1:11", "--grid", "y=-1:1:11", *marks,
                   "-o", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert status in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err

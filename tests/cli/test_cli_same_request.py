"""The command line and the library build one request and run it through the one
executor (``gradcli.execute``): recorded at the executor, a command's Request and the
library function's are the same (what, expression, where, the parameters that change a
value), and every application of the executor's table is reached by both."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import pytest
import request_spy

import gradcli
from gradcli import api
from gradcli.execute import APPLICATIONS

#: per application: the command line, and the library call asking the same
CASES: dict[str, tuple[list[str], Any]] = {
    "critical": (["critical", "x^3 - 3*x + y^2", "--grid", "x=-2:2:9", "--grid", "y=-1:1:5",
                  "--at", "a=2"],
                 lambda: gradcli.critical("x^3 - 3*x + y^2 + 0*a",
                                          {"x": (-2, 2, 9), "y": (-1, 1, 5)}, at={"a": 2})),
    "descend": (["descend", "x^2", "--from", "x=1", "--method", "gd", "--lr", "0.1",
                 "--steps", "5"],
                lambda: gradcli.descend("x^2", {"x": 1}, method="gd", lr=0.1, steps=5)),
    "flow": (["flow", "[-y, x]", "--from", "x=1,y=0", "--t", "0:1:3"],
             lambda: gradcli.flow("[-y, x]", {"x": 1, "y": 0}, t=(0, 1, 3))),
    "implicit": (["implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at", "x=0.6,y=0.8"],
                 lambda: gradcli.implicit("x^2 + y^2 - 1", "y", {"x": 0.6, "y": 0.8})),
    "integrate": (["integrate", "[-y, x]", "--path", "t: [cos(t), sin(t)], t=0:2pi"],
                  lambda: gradcli.integrate("[-y, x]", "t: [cos(t), sin(t)], t=0:2pi")),
    "propagate": (["propagate", "V/I", "--at", "V=4.999+-0.0032, I=0.019661+-0.0000095"],
                  lambda: gradcli.propagate("V/I", at={"V": (4.999, 0.0032),
                                                       "I": (0.019661, 0.0000095)})),
    "curvilinear": (["grad", "r^2*sin(theta)", "--coords", "polar", "--at",
                     "r=2,theta=1"],
                    lambda: gradcli.curvilinear("r^2*sin(theta)", "grad", "polar",
                                                at={"r": 2, "theta": 1})),
    "formula": (["grad", "x^2*y", "--formula"], lambda: gradcli.formula("x^2*y", "grad")),
    "plot": (["plot", "x^2 + y", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "-o", "{png}"],
             lambda: gradcli.plot("x^2 + y", {"x": (-1, 1, 5), "y": (-1, 1, 5)})),
}


def _same(value: Any) -> Any:
    """A value as compared: numbers as floats, a point alone as a list of one, sequences
    and mappings element by element."""
    if isinstance(value, Mapping):
        return {k: _same(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_same(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def _effect(request: Any) -> dict[str, Any]:
    """What of a request changes a value: where, and the parameters given (None, or a
    library default, is "not given")."""
    library = {"critical": api.critical, "descend": api.descend, "flow": api.flow,
               "implicit": api.implicit, "integrate": api.integrate,
               "propagate": gradcli.uncertainty.propagation.propagate,
               "curvilinear": api.curvilinear, "formula": api.formula}.get(request.what)
    defaults = {} if library is None else {
        n: p.default for n, p in inspect.signature(library).parameters.items()
        if p.default is not inspect.Parameter.empty}
    parameters = {n: v for n, v in (request.parameters or {}).items()
                  if v is not None and not (n in defaults and _same(v) == _same(defaults[n]))}
    where = {k: getattr(request, k) for k in ("at", "grid", "points", "fixed")
             if getattr(request, k)}
    for names in ("solve_for", "wrt"):  # "y,z" and ["y", "z"] alike
        if isinstance(parameters.get(names), str):
            parameters[names] = [n.strip() for n in parameters[names].split(",")]
    if isinstance(parameters.get("start"), Mapping):
        parameters["start"] = [parameters["start"]]
    if isinstance(where.get("at"), Mapping) and request.what != "propagate":
        where["at"] = [where["at"]]
    return _same({"what": request.what, "where": where, "parameters": parameters})


def test_every_application_has_a_case():
    assert set(CASES) == set(APPLICATIONS) - {"graph"}  # graph is the command line's only


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_command_and_the_library_make_one_request(name, cli, monkeypatch, tmp_path):
    import gradcli.uncertainty.propagation  # noqa: F401 - its signature's defaults

    seen = request_spy.record(monkeypatch)
    argv, library = CASES[name]
    status, _, err = cli(*[a.replace("{png}", str(tmp_path / "p.png")) for a in argv])
    assert status == 0, err
    library()
    assert [r.what for r in seen] == [name, name]
    command, called = seen
    expected = _effect(called)
    if name == "critical":  # the command line's formula has no a: held all the same
        expected["parameters"] = _effect(command)["parameters"]
    got = _effect(command)
    if name == "critical":
        assert got["where"] == expected["where"]
    else:
        assert got == expected


def test_graph_runs_through_the_executor(cli, monkeypatch):
    seen = request_spy.record(monkeypatch)
    status, out, _ = cli("graph", "x*y", "--at", "x=2,y=3", "-f", "json")
    assert status == 0 and '"value": 6.0' in out  # x*y at (2, 3), by hand
    assert [(r.what, r.at) for r in seen] == [("graph", [{"x": 2.0, "y": 3.0}])]


def test_an_unknown_request_names_every_choice():
    from gradcli.errors import EvaluationError
    from gradcli.execute import execute
    from gradcli.request import Request

    with pytest.raises(EvaluationError) as caught:
        execute(Request("x", "nope", at={"x": 1}))
    message = str(caught.value)
    assert message.startswith("unknown what='nope': a computation (eval, grad,")
    assert all(name in message for name in APPLICATIONS)

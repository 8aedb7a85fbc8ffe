"""The field commands and the library functions of the same name are one request run by
one path (``api.critical_points``, ``api.descend_paths``): the same rows from the command
line's text and from the library's parameters, and the same refusals."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_critical_is_one_path(cli) -> None:
    """x^3 - 3x + y^2 has a minimum at (1, 0) and a saddle at (-1, 0) (by hand: 3x^2 - 3 =
    0, 2y = 0); the command and gradcli.critical find them with the same digits."""
    status, out, _ = cli("critical", "x^3 - 3*x + y^2", "--grid", "x=-2:2:9", "--grid",
                         "y=-1:1:5", "-f", "csv")
    assert status == 0
    rows = _rows(out)
    table = gradcli.critical("x^3 - 3*x + y^2", {"x": (-2, 2, 9), "y": (-1, 1, 5)})
    assert [r["type"] for r in rows] == ["saddle", "minimum"]
    assert [float(r["x"]) for r in rows] == pytest.approx([-1.0, 1.0], abs=1e-12)
    assert [str(t) for t in np.asarray(table["type"])] == ["saddle", "minimum"]
    # the same path: the same digits, not merely close ones
    np.testing.assert_array_equal(np.asarray(table["x"], dtype=float),
                                  [float(r["x"]) for r in rows])


def test_descend_is_one_path(cli) -> None:
    """Five gd steps on x^2 from x = 1 with lr 0.1 shrink x by 0.8 each (x ← x - 0.1·2x):
    0.8^5 = 0.32768, from the command and from gradcli.descend alike."""
    status, out, _ = cli("descend", "x^2", "--from", "x=1", "--method", "gd", "--lr", "0.1",
                         "--steps", "5", "-f", "csv")
    assert status == 0
    last = _rows(out)[-1]
    assert float(last["x"]) == pytest.approx(0.8 ** 5, rel=1e-15)
    table = gradcli.descend("x^2", {"x": 1}, method="gd", lr=0.1, steps=5)
    assert float(np.asarray(table["x"])[-1]) == float(last["x"])


def test_descend_refuses_a_field_in_both(cli) -> None:
    """A vector field has trajectories (flow), not a descent: both say so the same way."""
    status, _, err = cli("descend", "[x, y]", "--from", "x=1,y=1")
    assert status == 2 and "descend needs a scalar formula f" in err
    with pytest.raises(EvaluationError, match="descend needs a scalar formula f"):
        gradcli.descend("[x, y]", {"x": 1, "y": 1})

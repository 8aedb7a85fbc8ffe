"""The terminal preview a new user expects: f' drawn when asked, a small grid drawn across
the terminal's width with readable axis labels, one glyph per curve without colour, and a
categorical key naming each basin's minimum.

Truths: x² and its derivative 2x placed on the preview's rows by hand (the rows split the
y-range evenly, top row highest); Himmelblau's minima from mpmath
(tests/reference/critical_points.json).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.plot.terminal import CURVE_ROWS, LETTERS, RAMP

HIMMELBLAU = json.loads((Path(__file__).parents[1] / "reference" /
                         "critical_points.json").read_text())["functions"]["himmelblau"]
LEFT = 11  # the curve's columns start after the y labels


def _preview(monkeypatch, capsys, args: list[str], columns: int) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    assert main(["plot", *args, "--preview"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out
    return out.splitlines()


def _column(body: list[str], c: int, glyph: str) -> list[int]:
    return [r for r, line in enumerate(body) if len(line) > c and line[c] == glyph]


def test_derivative_is_drawn_beside_f(monkeypatch, capsys):
    """x² and 2x on [-1, 1]: the y-range is that of both (-2 to 2, padded 8 %), f is *,
    f' is o, and in every column f' sits on the row of 2x."""
    lines = _preview(monkeypatch, capsys, ["x^2", "--grid", "x=-1:1:101", "--derivative"], 60)
    body = lines[1:1 + CURVE_ROWS]
    lo, hi = -2 - 0.32, 2 + 0.32
    assert float(body[0][:LEFT]) == pytest.approx(hi, abs=5e-3)
    assert float(body[-1][:LEFT]) == pytest.approx(lo, abs=5e-3)
    cols = 60 - 13 - 1
    for c, x in enumerate(np.linspace(-1, 1, cols)):
        row = min(CURVE_ROWS - 1, int((hi - 2 * x) / (hi - lo) * CURVE_ROWS))
        assert _column(body, LEFT + c, "o") == [row]
    assert _column(body, LEFT, "*") == [int((hi - 1) / (hi - lo) * CURVE_ROWS)]
    assert lines[-1].split() == ["*", "f(x)", "o", "f'(x)"]


def test_a_small_grid_fills_the_terminals_width_with_readable_labels(monkeypatch, capsys):
    """Five points of x² still draw a curve in every column; the axis reads -1 ... 1 x."""
    lines = _preview(monkeypatch, capsys, ["x^2", "--grid", "x=-1:1:5"], 60)
    body = lines[1:1 + CURVE_ROWS]
    cols = 60 - 13 - 1
    for c in range(cols):
        assert any(line[LEFT + c] != " " for line in body if len(line) > LEFT + c), c
    assert all(line == line.rstrip() for line in lines)  # no trailing spaces to copy
    axis = lines[1 + CURVE_ROWS]
    assert axis.split() == ["-1", "1", "x"]
    assert axis.index(" 1 x") - (axis.index("-1") + 2) >= 2
    assert max(len(line) for line in lines) <= 60


def test_each_curve_has_its_own_glyph_without_colour(monkeypatch, capsys):
    lines = _preview(monkeypatch, capsys, ["[sin(x),cos(x)]", "--grid", "x=0:2pi:101"], 70)
    body = "".join(lines[1:1 + CURVE_ROWS])
    assert "*" in body and "o" in body and not set("─╱╲│") & set(body)
    assert lines[-1].split() == ["*", "f[0]", "=", "sin(x)", "o", "f[1]", "=", "cos(x)"]
    # sin(0) = 0 is mid-height, cos(0) = 1 near the top, in the first column
    first = [line.ljust(LEFT + 1)[LEFT] for line in lines[1:1 + CURVE_ROWS]]
    assert first.index("o") < first.index("*")


def test_basins_get_a_key_naming_each_minimum(monkeypatch, capsys):
    lines = _preview(monkeypatch, capsys, [HIMMELBLAU["expression"], "--grid", "x=-5:5:41",
                                           "--grid", "y=-5:5:41", "--basins"], 100)
    key = lines[-1]
    assert key.startswith("basin (newton): ")
    assert not any(RAMP[2:] in line for line in lines)  # no continuous ramp
    entries = re.findall(r"([A-Z]) \(([^)]*)\)", key)
    assert [letter for letter, _ in entries] == list(LETTERS[:4])
    shown = np.array([[float(v) for v in point.split(", ")] for _, point in entries])
    minima = np.array([[float(p["x"]), float(p["y"])] for p in HIMMELBLAU["points"]
                       if p["type"] == "minimum"])
    order = np.lexsort((minima[:, 1], minima[:, 0]))
    np.testing.assert_allclose(np.sort(shown, axis=0), np.sort(minima[order], axis=0),
                               rtol=5e-3)
    body = "".join(lines[1:-1])
    assert set(body) - set("→↗↑↖←↙↓↘· ") <= set(LETTERS[:4])
    # the corner (5, 5) descends to (3, 2): the top right cell shows that basin's letter
    letter = dict((point, letter) for letter, point in entries)["3, 2"]
    assert lines[1].rstrip()[-2] in (letter, *"→↗↑↖←↙↓↘")
    plain = _preview(monkeypatch, capsys, [HIMMELBLAU["expression"], "--grid", "x=-5:5:41",
                                           "--grid", "y=-5:5:41", "--basins", "--arrows",
                                           "none"], 100)
    assert plain[1].rstrip()[-1] == letter and plain[-2].rstrip()[0] != letter

"""plot takes the same "where" as every other command: --at beside --grid holds
variables fixed, numbers, vectors and matrices alike."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.plot import compute_field


def test_a_held_vector_parameter_in_the_plotted_values_and_derivatives() -> None:
    """sum(v)*x with v = [1, 2] is 3x, its derivative 3, and v is listed as held."""
    fl = compute_field("sum(v)*x", {"x": (-1.0, 1.0, 5)}, fixed={"v": [1.0, 2.0]})
    x = np.linspace(-1.0, 1.0, 5)
    assert np.array_equal(fl.values[0], 3.0 * x)
    assert np.array_equal(fl.grad[0], np.full(5, 3.0))
    assert np.array_equal(fl.held["v"], [1.0, 2.0])


def test_a_held_matrix_in_a_quadratic_form() -> None:
    """[x, y] @ A @ [x, y] with A = [[2, 1], [1, 3]] is 2x² + 2xy + 3y², gradient
    (4x + 2y, 2x + 6y), on every grid point."""
    fl = compute_field("[x, y] @ A @ [x, y]", {"x": (-1.0, 1.0, 5), "y": (0.0, 2.0, 3)},
                       fixed={"A": [[2.0, 1.0], [1.0, 3.0]]})
    x, y = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(0, 2, 3), indexing="ij")
    assert fl.kind == "scalar"
    assert np.allclose(fl.values[0], 2 * x**2 + 2 * x * y + 3 * y**2, rtol=1e-15, atol=0)
    assert np.allclose(fl.grad[0], 4 * x + 2 * y, rtol=1e-15, atol=0)
    assert np.allclose(fl.grad[1], 2 * x + 6 * y, rtol=1e-15, atol=0)


@pytest.mark.parametrize("argv", [
    ["sum(v)*x", "--grid", "x=-1:1:5", "--at", "v=[1,2]"],
    ["[x,y] @ A @ [x,y]", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--at",
     "A=[[2,1],[1,3]]"],
])
def test_plot_at_on_the_command_line_writes_the_picture(capsys, tmp_path, argv) -> None:
    """The commands of the issue run and write their picture."""
    out = tmp_path / "a.png"
    assert main(["plot", *argv, "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_at_and_grid_naming_one_variable_is_refused(capsys, tmp_path) -> None:
    """A variable both held (--at) and on the grid is an error, as for grad."""
    status = main(["plot", "a*x", "--grid", "x=-1:1:5", "--grid", "a=1", "--at", "a=2",
                   "-o", str(tmp_path / "a.png")])
    err = capsys.readouterr().err
    assert status == 2 and "'a' is given by --at and by --grid" in err
    assert not (tmp_path / "a.png").exists()


def test_held_vector_is_shown_in_the_interactive_page(capsys, tmp_path) -> None:
    """The html hover text names the held vector's value."""
    importlib.import_module("plotly")
    out = tmp_path / "a.html"
    assert main(["plot", "sum(v)*x*y", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--at",
                 "v=[1,2]", "-o", str(out)]) == 0
    assert "v = [1, 2] (held)" in out.read_text(encoding="utf-8")

"""plot --color divergence|curl|laplacian paints what the div, curl and laplacian
computations give (the same kernels as the commands), against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli
from gradcli.plot import compute_field
from gradcli.plot.colors import heat

GRID = {"x": (-1.0, 1.0, 5), "y": (-0.5, 2.0, 6)}
X, Y = np.meshgrid(np.linspace(-1.0, 1.0, 5), np.linspace(-0.5, 2.0, 6), indexing="ij")


@pytest.mark.parametrize("color, what, expression, closed", [
    ("divergence", "div", "[x^2*y, sin(y)*x]", 2 * X * Y + np.cos(Y) * X),
    ("curl", "curl", "[x^2*y, sin(y)*x]", np.sin(Y) - X**2),
    ("laplacian", "laplacian", "x^3*y^2 + exp(y)", 6 * X * Y**2 + 2 * X**3 + np.exp(Y)),
])
def test_the_heat_is_the_computation_of_the_command(color, what, expression, closed):
    """The painted values equal gradcli.evaluate(what) on the same grid, bit for bit, and
    the closed form to rounding."""
    fl = compute_field(expression, GRID, color=color)
    painted = heat(fl, color).values
    command = np.broadcast_to(gradcli.evaluate(expression, what, grid=GRID)[what], X.shape)
    assert np.array_equal(painted, command)
    assert np.allclose(painted, closed, rtol=1e-14, atol=1e-14)


def test_a_slice_of_a_3d_field_paints_the_full_divergence_and_the_curl_across_it():
    """For F = [x*y, y*z, z*x] on the plane z = 0.5: div F = y + z + x, and the curl's
    component across the plane is ∂v/∂x − ∂u/∂y = −x."""
    grid = {**GRID, "z": (-1.0, 1.0, 3)}
    fl = compute_field("[x*y, y*z, z*x]", grid, color="divergence", slice_=("z", 0.5))
    div = heat(fl, "divergence")
    assert np.array_equal(div.values, Y + 0.5 + X)
    assert div.label.startswith("div F = ∂u/∂x + ∂v/∂y + ∂w/∂z")
    fl = compute_field("[x*y, y*z, z*x]", grid, color="curl", slice_=("z", 0.5))
    assert np.array_equal(heat(fl, "curl").values, -X + 0.0)


def test_the_color_quantities_are_one_list() -> None:
    """--color's choices, the fields each applies to and the drawn quantities all come from
    plot.options.COLOR_FIELDS; every one of them has a renderer in colors.HEATS."""
    from gradcli.cli.definition import BY_NAME
    from gradcli.plot import colors, data, options

    assert tuple(BY_NAME["plot"].option("color").choices) == options.COLORS
    assert set(options.COLORS) <= set(colors.HEATS)
    assert set(options.KERNEL_COLORS) <= set(options.COLORS)
    assert data.FIELD_COLORS == {"vector": ("magnitude", "divergence", "curl"),
                                 "scalar": ("magnitude", "laplacian")}

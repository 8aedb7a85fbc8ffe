"""critical classifies a function's critical points and a field's fixed points by one
rule: an eigenvalue is zero only relative to the scale of the eigenvalues, so an
ill-conditioned but definite Hessian (or Jacobian) keeps its type, and a truly degenerate
point stays degenerate."""

from __future__ import annotations

import pytest

from gradcli.cli.main import main

# seeds that miss the critical point at 0, so the iteration has to find it
GRID = ["--grid", "x=-1.3:1.1:8", "--grid", "y=-0.9:1.2:8"]


def types(capsys, expression: str) -> list[str]:
    status = main(["critical", expression, *GRID, "-f", "csv"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return [line.rsplit(",", 1)[1] for line in out.splitlines()[1:]]


@pytest.mark.parametrize("expression, kind", [
    # Hessian diag(2e4, 2e-3): condition 1e7, definite
    ("1e4*x^2 + 1e-3*y^2", "minimum"),
    ("-1e4*x^2 - 1e-3*y^2", "maximum"),
    ("1e4*x^2 - 1e-3*y^2", "saddle"),
    # Jacobians diag(1e4, -1), diag(1e4, 1e-3), diag(-1e4, -1e-3)
    ("[1e4*x, -y]", "saddle"),
    ("[1e4*x, 1e-3*y]", "unstable node"),
    ("[-1e4*x, -1e-3*y]", "stable node"),
])
def test_ill_conditioned_but_definite_points_keep_their_type(capsys, expression, kind):
    """Eigenvalues 1e7 apart are both nonzero, for a function and for a field alike."""
    assert types(capsys, expression) == [kind]


@pytest.mark.parametrize("expression", [
    "x^3 - 3*x*y^2", "x^4 + y^2", "x^4 + y^4", "[x^2, y]", "[x^3, y]",
    "[x^3 - 3*x*y^2, -3*x^2*y + y^3]",
])
def test_degenerate_points_stay_degenerate(capsys, expression):
    """A Hessian or Jacobian with a vanishing eigenvalue at the point is degenerate,
    although the point is only found to about 1e-15 (its eigenvalue is then ~1e-14)."""
    assert types(capsys, expression) == ["degenerate"]

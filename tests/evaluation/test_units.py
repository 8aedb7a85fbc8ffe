"""Physical units: derivative units against hand derivations, conversions against the SI
brochure's and NIST SP 811's factors, and the one-line error of every binary operation and
every function of the language (read from the tables) given mismatched units."""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

import gradcli
from gradcli.lang import ExpressionError
from gradcli.lang.names import FUNCTIONS, PRECEDENCE

importlib.import_module("pint")


def units_of(result):
    return {b.name: b.unit for b in result.result.blocks}


def test_resistance_units_by_hand():
    # R = V/I: dR/dV = 1/I in 1/A, dR/dI = -V/I^2 in V/A^2, d2R/dI2 = 2V/I^3 in V/A^3
    at = {"V": 4.999, "I": 0.019661}
    r = gradcli.evaluate("V/I", "grad", at=at, units={"V": "V", "I": "A"})
    assert units_of(r) == {"V": "V", "I": "A", "f": "V/A", "df/dV": "1/A", "df/dI": "V/A^2"}
    # rel 1e-15: one division and a product, a few ulps
    assert r["df/dI"][0] == pytest.approx(-4.999 / 0.019661 ** 2, rel=1e-14)
    h = gradcli.evaluate("V/I", "hessian", at=at, units={"V": "V", "I": "A"})
    assert units_of(h)["d2f/dIdI"] == "V/A^3"
    assert units_of(h)["d2f/dVdI"] == "1/A^2" and units_of(h)["d2f/dVdV"] == "1/(V*A)"
    assert h["d2f/dIdI"][0] == pytest.approx(2 * 4.999 / 0.019661 ** 3, rel=1e-13)


def test_milliamperes_are_converted_and_shown():
    r = gradcli.evaluate("V/I", "grad", at={"V": "4.999 V", "I": "19.661 mA"})
    assert units_of(r)["f"] == "V/mA" and units_of(r)["df/dI"] == "V/mA^2"
    # V/mA: 4.999/19.661 (rel 1e-14: the base-unit round trip through 1e-3 and 1e3)
    assert r["f"][0] == pytest.approx(4.999 / 19.661, rel=1e-14)
    to = gradcli.evaluate("V/I", "grad", at={"V": "4.999 V", "I": "19.661 mA"},
                          to={"f": "kohm", "df/dI": "ohm/mA"})
    assert units_of(to)["f"] == "kΩ" and units_of(to)["df/dI"] == "Ω/mA"
    assert to["f"][0] == pytest.approx(4.999 / 19.661, rel=1e-14)  # V/mA is kΩ
    # -V/I^2 = -4.999 V / (19.661 mA)^2 = -4.999/19.661^2 V/mA^2 = that * 1000 ohm/mA
    assert to["df/dI"][0] == pytest.approx(-4.999 / 19.661 ** 2 * 1e3, rel=1e-13)


# Factors of the SI brochure (9th ed., 2019) and NIST SP 811 (2008), appendix B:
# T/K = t/degC + 273.15 (SI brochure 2.3.1); 1 deg = pi/180 rad (SI brochure table 8);
# 1 km/h = (1000/3600) m/s (NIST SP 811 B.8: 2.777 778 E-01); 1 eV = 1.602 176 634 E-19 J
# exactly (SI brochure table 8, the 2019 value of e).
@pytest.mark.parametrize(("value", "unit", "to", "expected"), [
    (25.0, "degC", "K", 298.15),
    (300.0, "K", "degC", 26.85),
    (180.0, "deg", "rad", math.pi),
    (36.0, "km/h", "m/s", 10.0),
    (1.0, "eV", "J", 1.602176634e-19),
])
def test_conversions_against_published_factors(value, unit, to, expected):
    r = gradcli.evaluate("x", at={"x": value}, units={"x": unit}, to={"f": to})
    # rel 1e-14: one multiply and add in float64
    assert r["f"][0] == pytest.approx(expected, rel=1e-14, abs=1e-12 * abs(expected))


def test_degrees_go_into_sin_converted():
    assert gradcli.evaluate("sin(a)", at={"a": "30 deg"})["f"][0] == pytest.approx(0.5, rel=1e-15)


def test_compatible_units_add_after_conversion():
    r = gradcli.evaluate("x + y", "grad", at={"x": "1 m", "y": "20 cm"})
    assert units_of(r)["f"] == "m"
    assert r["f"][0] == pytest.approx(1.2, rel=1e-15)
    assert r["df/dy"][0] == pytest.approx(0.01, rel=1e-15)  # in m/cm


def test_pint_quantities_are_values():
    import pint

    q = pint.UnitRegistry().Quantity
    r = gradcli.evaluate("V/I", at={"V": q(5.0, "V"), "I": q(2.0, "A")})
    assert units_of(r)["f"] == "V/A" and r["f"][0] == 2.5


def test_a_program_step_gets_its_unit():
    r = gradcli.evaluate("g = 9.81; h = g*t^2/2; h", "grad", at={"t": 2.0},
                         units={"g": "m/s^2", "t": "s"})
    assert units_of(r)["f"] == "m" and units_of(r)["df/dt"] == "m/s"
    assert r["f"][0] == pytest.approx(9.81 * 2.0, rel=1e-15)


def test_without_units_nothing_changes():
    r = gradcli.evaluate("x*y", "grad", at={"x": 2.0, "y": 3.0})
    assert all(b.unit == "" for b in r.result.blocks)


def _mismatch(expression: str) -> ExpressionError:
    with pytest.raises(ExpressionError) as info:
        gradcli.evaluate(expression, at={"x": "1 m", "t": "2 s"})
    return info.value


ADDITIVE = [op for op in PRECEDENCE if op not in ("*", "/", "@", "^", "**")]


@pytest.mark.parametrize("op", ADDITIVE)
def test_every_additive_operation_refuses_mismatched_units(op):
    err = _mismatch(f"x {op} t")
    assert err.position == 2 and "m" in err.reason and "s" in err.reason


@pytest.mark.parametrize("op", ["^", "**"])
def test_a_dimensioned_exponent_is_refused(op):
    err = _mismatch(f"x {op} t")
    assert err.position is not None and "exponent" in err.reason


@pytest.mark.parametrize("op", ["*", "/"])
def test_products_carry_both_units(op):
    r = gradcli.evaluate(f"x {op} t", at={"x": "1 m", "t": "2 s"})
    assert units_of(r)["f"] == {"*": "m*s", "/": "m/s"}[op]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_refuses_mismatched_units(name):
    # every function of the language, called on lengths and added to a time: either the
    # function refuses a length (sin, exp, log...), or its result's unit is no time
    spec = FUNCTIONS[name]
    args = ", ".join(["x"] * spec.arity)
    err = _mismatch(f"{name}({args}) + t")
    assert err.position is not None and err.expression.startswith(name)
    assert "m" in err.reason or "s" in err.reason


def test_the_cli_error_is_one_caret_line(cli):
    status, out, err = cli("eval", "x + t", "--at", "x=1 m, t=2 s")
    assert status == 2 and out == ""
    assert err.splitlines() == ["  x + t", "    ^",
                                "error: '+' adds values of different dimensions: m and s"]


def test_cli_header_carries_units(cli):
    status, out, _ = cli("grad", "V/I", "--at", "V=4.999, I=19.661", "--unit", "V=V",
                         "--unit", "I=mA", "-f", "csv")
    assert status == 0
    assert out.splitlines()[0] == "V [V],I [mA],f [V/mA],df/dV [1/mA],df/dI [V/mA^2]"


def test_unknown_unit_is_one_line(cli):
    status, out, err = cli("eval", "x", "--at", "x=1", "--unit", "x=furlongz")
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert "furlongz" in err


def test_grid_with_units_values_in_declared_unit():
    r = gradcli.evaluate("x^2", "grad", grid={"x": (0, 2, 3)}, units={"x": "cm"})
    assert units_of(r)["df/dx"] == "cm"
    np.testing.assert_allclose(np.ravel(r["df/dx"]), [0.0, 2.0, 4.0], rtol=1e-15)


def test_xarray_units_round_trip_through_pint_xarray():
    importlib.import_module("xarray")
    importlib.import_module("pint_xarray")
    r = gradcli.evaluate("V/I", "grad", grid={"V": (1, 5, 3), "I": (10, 20, 3)},
                         units={"V": "V", "I": "mA"}, to={"f": "ohm"})
    ds = gradcli.to_xarray(r)
    assert ds["f"].attrs["units"] == "ohm" and ds["df_dI"].attrs["units"] == "ohm/mA"
    q = ds.pint.quantify()
    # 5 V / 10 mA = 500 ohm (hand); pint's own conversion of the quantified array
    kohm = q["f"].pint.to("kohm").pint.dequantify()
    assert float(kohm.isel(V=-1, I=0)) == pytest.approx(0.5, rel=1e-14)


def test_results_expose_units_and_pandas_keeps_them():
    r = gradcli.evaluate("V/I", "grad", at={"V": "5 V", "I": "2 A"})
    assert r.units == {"V": "V", "I": "A", "f": "V/A", "df/dV": "1/A", "df/dI": "V/A^2"}
    importlib.import_module("pandas")
    frame = r.to_pandas()
    assert frame.attrs["units"]["df/dI"] == "V/A^2" and frame.attrs["units"]["V"] == "V"


def test_parquet_fields_carry_units(tmp_path, cli):
    pq = importlib.import_module("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    status, _, _ = cli("grad", "V/I", "--at", "V=5 V, I=2 A", "-o", str(path))
    assert status == 0
    schema = pq.read_schema(path)
    assert schema.field("df/dI").metadata == {b"units": b"V/A^2"}
    assert schema.field("V").metadata == {b"units": b"V"}


@pytest.mark.parametrize(("what", "expression", "parameters", "expected"), [
    # hand derivations with x in m, t in s: d(x/t)/dx = 1/t in 1/s; d(x/t)/dt = -x/t^2 in m/s^2
    ("jacobian", "[x/t, x*t]", {}, {"df[0]/dx": "1/s", "df[0]/dt": "m/s^2",
                                    "df[1]/dx": "s", "df[1]/dt": "m"}),
    ("laplacian", "x^3", {"wrt": "x"}, {"laplacian": "m"}),      # 6x: m^3/m^2
    ("diff", "x^2*t", {"wrt": "x,t"}, {"d2f/dxdt": "m"}),         # 2x: m^2 s/(m s)
    ("diff", "x^4", {"wrt": "x", "order": 3}, {"d3f/dx3": "m"}),  # 24x: m^4/m^3
    ("hvp", "x^2*t", {"direction": {"x": 1}}, {"hvp/dx": "s", "hvp/dt": "m"}),  # 2t, 2x
    ("jvp", "x^2*t", {"direction": {"x": 1}}, {"jvp": "m*s"}),
])
def test_derivative_units_by_hand(what, expression, parameters, expected):
    r = gradcli.evaluate(expression, what, at={"x": "2 m", "t": "3 s"}, **parameters)
    assert {k: r.units.get(k) for k in expected} == expected


def test_a_number_with_a_unit_in_the_expression():
    # 9.81 m/s^2 * (2 s)^2 / 2 = 19.62 m (hand)
    r = gradcli.evaluate("h = 9.81 'm/s^2' * t^2/2; h", "grad", at={"t": "2 s"})
    assert r.units["f"] == "m" and r["f"][0] == pytest.approx(19.62, rel=1e-15)
    # 1 m/s + 3 km/h = 1 + 3000/3600 m/s (NIST SP 811 B.8)
    r = gradcli.evaluate("x + 3 'km/h'", at={"x": "1 m/s"})
    assert r["f"][0] == pytest.approx(1 + 3000 / 3600, rel=1e-15)


@pytest.mark.parametrize(("text", "column"), [("b'x'", 2), ("'m' + 1", 1), ("x + 3 'furlongz'", 5)])
def test_a_misplaced_or_unknown_unit_has_a_caret(text, column):
    with pytest.raises(ExpressionError) as info:
        gradcli.evaluate(text, at={"b": 1.0, "x": 1.0})
    assert info.value.column == column


def test_implicit_products_and_indexing_are_unchanged():
    assert gradcli.evaluate("3x", at={"x": 2.0})["f"][0] == 6.0
    assert gradcli.evaluate("x[0]", at={"x": [4.0, 5.0]})["f"][0] == 4.0


H2 = ("[V/I*cos(phi), V/I*sin(phi), V/I]",
      {"V": "4.9990 V+-3.2 mV", "I": "19.6610 mA+-0.0095 mA", "phi": "1.04446 rad+-0.00075 rad"},
      {("V", "I"): -0.36, ("V", "phi"): 0.86, ("I", "phi"): -0.65})


def test_gum_h2_with_units_in_ohms():
    expression, at, corr = H2
    r = gradcli.propagate(expression, at=at, corr=corr, to={"f": "ohm"})
    assert {b.name: b.unit for b in r.blocks if b.unit} == {
        "V": "V", "I": "mA", "phi": "rad", "f": "Ω", "u(f)": "Ω", "U(f)": "Ω"}
    # GUM H.2, Table H.3: R = 127.732 Ω, X = 219.847 Ω, Z = 254.260 Ω (3 decimals printed);
    # u = 0.071, 0.295, 0.236 Ω (the GUM's from the five readings' own correlations: 0.001)
    np.testing.assert_allclose(np.asarray(r["f"]), [127.732, 219.847, 254.260], atol=5e-4)
    np.testing.assert_allclose(np.asarray(r["u(f)"]), [0.071, 0.295, 0.236], atol=1.5e-3)
    # the same numbers as without units, with I in amperes (rel 1e-12: a 1e-3 scale)
    plain = gradcli.propagate(expression, at={"V": "4.9990+-0.0032",
                                              "I": "19.6610e-3+-0.0095e-3",
                                              "phi": "1.04446+-0.00075"}, corr=corr)
    np.testing.assert_allclose(np.asarray(r["u(f)"]), np.asarray(plain["u(f)"]), rtol=1e-12)


def test_budget_sensitivities_in_unit_f_per_unit_x():
    b = gradcli.propagate("V/I", at={"V": "4.9990 V+-3.2 mV", "I": "19.6610 mA+-0.0095 mA"},
                          budget=True, to={"f": "ohm"})
    # the rows of V and I, then the total (its value is f, in Ω)
    assert list(b["unit(c)"]) == ["Ω/V", "Ω/mA", ""]
    assert list(b["unit(x)"]) == ["V", "mA", "Ω"]
    # c_V = 1/I = 1/0.019661 Ω/V; c_I = -V/I^2 in Ω/mA = -4.999/19.661^2 * 1e3
    np.testing.assert_allclose(np.asarray(b["c"])[:2],
                               [1 / 0.019661, -4.999 / 19.661 ** 2 * 1e3], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(b["u(x)"])[:2], [0.0032, 0.0095], rtol=1e-15)


def test_cli_propagate_with_units(cli):
    expression, _, _ = H2
    status, out, _ = cli("propagate", "V/I", "--at", "V=4.9990 V +- 3.2 mV, I=19.6610 mA +- "
                         "0.0095 mA", "--to", "f=ohm", "-f", "csv")
    assert status == 0
    assert out.splitlines()[0] == "V [V],I [mA],f [Ω],u(f) [Ω],U(f) [Ω],k"


def test_netcdf_variables_carry_cf_units(tmp_path, cli):
    xr = importlib.import_module("xarray")
    importlib.import_module("h5netcdf")
    grid, jac, prop = (tmp_path / n for n in ("g.nc", "j.nc", "p.nc"))
    assert cli("grad", "V/I", "--grid", "V=1:5:5", "--grid", "I=10:20:3", "--unit",
               "V=V,I=mA", "--to", "f=ohm", "-o", str(grid))[0] == 0
    assert cli("jacobian", "[x*t, y*t]", "--grid", "x=1:2:3", "--grid", "y=1:2:3", "--grid",
               "t=1:2:2", "--unit", "x=m,y=m,t=m", "-o", str(jac))[0] == 0
    assert cli("propagate", "V/I", "--at", "V=4.999 V +- 3.2 mV, I=19.661 mA +- 0.0095 mA",
               "--to", "f=ohm", "-o", str(prop))[0] == 0
    units = {}
    for path in (grid, jac, prop):
        with xr.open_dataset(path) as ds:
            units[path.name] = {k: v.attrs.get("units") for k, v in ds.variables.items()
                                if "units" in v.attrs}
    # UDUNITS-2 spellings: ohm for Ω; a Jacobian of one unit keeps it (m^2/m = m)
    assert units["g.nc"] == {"f": "ohm", "df_dV": "ohm/V", "df_dI": "ohm/mA", "V": "V",
                             "I": "mA"}
    assert units["j.nc"]["jacobian"] == "m" and units["j.nc"]["f"] == "m^2"
    # u(f) and U(f): names distinct when case is ignored (CF 1.11 §2.3), long_name kept
    assert units["p.nc"] == {"V": "V", "I": "mA", "f": "ohm", "u_f_": "ohm", "U_f__2": "ohm"}
    with xr.open_dataset(prop) as ds:
        assert ds["U_f__2"].attrs["long_name"] == "U(f)"
        assert len({n.lower() for n in ds.variables}) == len(ds.variables)


def test_plot_axes_and_colour_bar_carry_units():
    importlib.import_module("matplotlib")
    from gradcli.plot import plot_expression
    from gradcli.plot.options import parse_options

    fig, drawn = plot_expression("x*y", {"x": (0, 1, 5), "y": (0, 2, 5)},
                                 options=parse_options(units={"x": "m", "y": "m"}))
    ax = drawn.ax
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x [m]", "y [m]")
    assert drawn.colorbar.ax.get_ylabel().endswith("[m^2]")


def test_arrows_of_mixed_units_are_refused(cli):
    status, out, err = cli("plot", "x*t", "--grid", "x=0:1:5", "--grid", "t=0:2:5", "--unit",
                           "x=m,t=s", "--preview")
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "df/dx is in s and df/dt in m" in err and "--arrows none" in err
    status, _, _ = cli("plot", "x*t", "--grid", "x=0:1:5", "--grid", "t=0:2:5", "--unit",
                       "x=m,t=s", "--arrows", "none", "--preview")
    assert status == 0


def test_critical_points_with_units():
    # f = (x - 1 km)^2 + y^2 over x in m: the minimum is at x = 1000 m (hand); the
    # Hessian's eigenvalues 2 and 2 are in m^2/m^2 = 1
    t = gradcli.critical("(x - 1 'km')^2 + y^2", {"x": (-2000, 2000, 5), "y": (-2, 2, 5)},
                         units={"x": "m", "y": "m"})
    units = {b.name: b.unit for b in t.blocks if b.unit}
    assert units == {"x": "m", "y": "m", "f": "m^2", "|grad f|": "m", "eig[0]": "1",
                     "eig[1]": "1"}
    assert float(t["x"][0]) == pytest.approx(1000.0, abs=1e-9)  # Newton's fixed point
    np.testing.assert_allclose([float(t["eig[0]"][0]), float(t["eig[1]"][0])], [2.0, 2.0],
                               rtol=1e-12)


def test_descend_path_with_units():
    # gradient descent on (x - 1 km)^2 from 0 m with lr 0.25: x <- x - 0.25*2(x - 1000),
    # so 500, 750, 875 m (hand)
    t = gradcli.descend("(x - 1 'km')^2", {"x": 0.0}, method="gd", lr=0.25, steps=3,
                        units={"x": "m"})
    assert {b.name: b.unit for b in t.blocks if b.unit} == {"x": "m", "f": "m^2",
                                                             "|grad f|": "m"}
    np.testing.assert_allclose(np.asarray(t["x"], dtype=float), [0, 500, 750, 875], rtol=0,
                               atol=1e-9)


def test_the_session_keeps_declared_units():
    import subprocess
    import sys

    lines = ("unit V=V,I=mA\ngrad V/I --at V=4.999,I=19.661 -f csv\n"
             "eval x*2 --at x=1 -f csv\nunit x=furlongz\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input=lines,
                          capture_output=True, text=True, timeout=120)
    out = done.stdout.splitlines()
    # the grad line has V and I's units; x*2 uses neither, so it has none
    assert out[0] == "V [V],I [mA],f [V/mA],df/dV [1/mA],df/dI [V/mA^2]"
    assert out[2] == "x,f"
    assert done.returncode == 2 and "furlongz" in done.stderr


def test_taylor_coefficients_each_in_their_own_unit(cli):
    # f = v*t with v in m/s, t in s, at v=2, t=3 (hand): c_00 = 6 m; c_10 = df/dv = t =
    # 3 s; c_01 = df/dt = v = 2 m/s; c_20 = 0 in m/(m/s)^2 = s^2/m; c_11 = 1 in
    # m/((m/s)*s) = 1; c_02 = 0 in m/s^2
    status, out, _ = cli("taylor", "v*t", "--at", "v=2 m/s, t=3 s", "--order", "2",
                         "-f", "csv")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == ("v [m/s],t [s],order,deg(v),deg(t),coefficient,derivative,unit")
    rows = [line.split(",") for line in lines[1:]]
    assert [(r[3], r[4], r[7]) for r in rows] == [
        ("0", "0", "m"), ("1", "0", "s"), ("0", "1", "m/s"), ("2", "0", "s^2/m"),
        ("1", "1", "1"), ("0", "2", "m/s^2")]
    # exact small integers: a product and its derivatives
    assert [float(r[5]) for r in rows] == [6.0, 3.0, 2.0, 0.0, 1.0, 0.0]


def test_taylor_coefficients_of_a_temperature_are_differences():
    # T = T0 + 2 Δ°C/m * x shown in degC, x in m, at T0 = 20, x = 1 (hand): order 0 is
    # 22 °C, order 1 is 2 Δ°C/m, a difference of temperatures per metre
    r = gradcli.evaluate("T0 + 2 'delta_degC/m' * x", "taylor", at={"T0": 20, "x": 1},
                         units={"T0": "degC", "x": "m"}, order=1, wrt="x", to={"f": "degC"})
    per = next(b.units for b in r.result.blocks if b.name == "coefficient")
    assert per == ("°C", "Δ°C/m")
    # rel 1e-12: 20 °C goes through kelvin and back (293.15 - 273.15 loses a few ulps)
    np.testing.assert_allclose(r.result.arrays["coefficient"][0], [22.0, 2.0], rtol=1e-12)


def test_flow_time_in_minutes_converts_the_field(cli):
    # x' = c with c = 2 m/s held, x in m, the time in minutes (hand): dx/dt = 120 m/min,
    # so x = 1 + 120 t: 61 m at 0.5 min and 121 m at 1 min (RK4 is exact on a constant)
    status, out, _ = cli("flow", "[c]", "--from", "x=1", "--at", "c=2", "--unit",
                         "x=m,c=m/s,t=min", "--t", "0:1:3", "-f", "csv")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "t [min],x [m],|F| [m/min]"
    np.testing.assert_allclose([[float(v) for v in line.split(",")] for line in lines[1:]],
                               [[0, 1, 120], [0.5, 61, 120], [1, 121, 120]], rtol=1e-13)


def test_flow_in_the_library_with_units_and_its_refusal(cli):
    # x' = c with c = 2 m/s and x in km, time in s: x = 1 + 0.002 t km (hand)
    t = gradcli.flow("[c]", {"x": 1.0}, at={"c": 2.0}, t=(0, 10, 3),
                     units={"x": "km", "c": "m/s", "t": "s"})
    assert {b.name: b.unit for b in t.blocks if b.unit} == {"t": "s", "x": "km",
                                                             "|F|": "km/s"}
    np.testing.assert_allclose(np.asarray(t["x"], dtype=float), [1.0, 1.01, 1.02],
                               rtol=1e-13)
    # a time without a unit: unit(x)/unit(F) = km/(m/s), shown and used as is
    t = gradcli.flow("[c]", {"x": 1.0}, at={"c": 2.0}, t=(0, 10, 3),
                     units={"x": "km", "c": "m/s"})
    assert {b.name: b.unit for b in t.blocks if b.unit}["t"] == "km*s/m"
    np.testing.assert_allclose(np.asarray(t["x"], dtype=float), [1.0, 11.0, 21.0],
                               rtol=1e-13)
    # a field in m/s cannot move x in m over a time in metres: one line, exit 2
    status, out, err = cli("flow", "[c]", "--from", "x=1", "--at", "c=2", "--unit",
                           "x=m,c=m/s,t=m", "--t", "0:1:3")
    # (the field [c] does not use x: the warning saying so comes first)
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status == 2 and out == "" and len(errors) == 1
    assert "dx/dt is in m/s by the field, but x is in m and the time in m" in errors[0]


def test_graph_values_and_adjoints_with_units(cli):
    from gradcli.graph.nodes import build_graph

    # f = 4*(x^2 + x*1 cm) in cm^2 at x = 3 cm (hand): f = 48 cm^2, df/dx = 4(2x + 1 cm)
    # = 28 cm; the step m = x^2 is computed in m^2 (9e-4 m^2), and df/dm = 4 cm^2/m^2...
    # = 4e4 cm^2/m^2
    nodes, out = build_graph("m = x^2; y = m + x*1 'cm'; p = 4*y", {"x": "3 cm"})
    by = {n.id: n for n in nodes}
    assert (by["x"].unit, by["x"].adjoint_unit) == ("cm", "cm")
    assert (by["m"].unit, by["m"].adjoint_unit) == ("m^2", "cm^2/m^2")
    assert (by[out].unit, by[out].adjoint_unit) == ("cm^2", "1")
    # rel 1e-12: the conversions by 0.01 and 1e4 round a few ulps
    assert by["x"].adjoint == pytest.approx(28.0, rel=1e-12)
    assert by["m"].value == pytest.approx(9e-4, rel=1e-12)
    assert by["m"].adjoint == pytest.approx(4e4, rel=1e-12)
    assert by[out].value == pytest.approx(48.0, rel=1e-12)
    # R = V/I in ohm, V = 5 V, I = 20 mA (hand): dR/dV = 1/I = 50 ohm/V, dR/dI = -V/I^2
    # = -12.5 ohm/mA
    import json

    status, text, _ = cli("graph", "V/I", "--at", "V=5, I=20", "--unit", "V=V,I=mA", "--to",
                          "f=ohm", "-f", "json")
    assert status == 0
    nodes = {n["id"]: n for n in json.loads(text)["nodes"]}
    assert (nodes["V"]["adjoint_unit"], nodes["I"]["adjoint_unit"]) == ("Ω/V", "Ω/mA")
    assert nodes["V"]["adjoint"] == pytest.approx(50.0, rel=1e-12)
    assert nodes["I"]["adjoint"] == pytest.approx(-12.5, rel=1e-12)
    # without units, no unit keys at all
    status, text, _ = cli("graph", "V/I", "--at", "V=5, I=20", "-f", "json")
    assert all("unit" not in n for n in json.loads(text)["nodes"])


def test_every_graph_node_has_its_unit(cli):
    import json

    # f = x·y + 2 m·s·sin(y/1 s), x = 50 cm, y = 0.5 s, computed in base units and shown
    # in cm·s (x·y's unit). By hand, node by node (value in its unit; adjoint ∂f/∂node in
    # cm·s per that unit):
    #   n1 = x·0.01        = 0.5 m                  ∂f/∂n1 = 100·y        = 50 cm·s/m
    #   n2 = n1·y          = 0.25 m·s               ∂f/∂n2 = 100          cm/m
    #   n3 = y/1           = 0.5 (a pure number)    ∂f/∂n3 = 200·cos(0.5) cm·s
    #   n4 = sin(n3)       = sin(0.5)               ∂f/∂n4 = 200          cm·s
    #   n5 = 2·n4          = 2 sin(0.5) m·s         ∂f/∂n5 = 100          cm/m
    #   n6 = n2 + n5       = 0.25 + 2 sin(0.5) m·s  ∂f/∂n6 = 100          cm/m
    #   n7 = f = 100·n6    cm·s                     1
    # and the leaves: ∂f/∂x = y = 0.5 s (cm·s per cm), ∂f/∂y = x + 200 cos(0.5) cm
    status, text, err = cli("graph", "x*y + 2 'm*s'*sin(y/(1 's'))", "--at",
                            "x=50 cm,y=0.5 s", "-f", "json")
    assert status == 0, err
    got = {n["id"]: n for n in json.loads(text)["nodes"]}
    s5, c5 = math.sin(0.5), math.cos(0.5)
    truth = {"x": (50.0, "cm", 0.5, "s"), "y": (0.5, "s", 50 + 200 * c5, "cm"),
             "n1": (0.5, "m", 50.0, "cm*s/m"), "n2": (0.25, "m*s", 100.0, "cm/m"),
             "n3": (0.5, "1", 200 * c5, "cm*s"), "n4": (s5, "1", 200.0, "cm*s"),
             "n5": (2 * s5, "m*s", 100.0, "cm/m"),
             "n6": (0.25 + 2 * s5, "m*s", 100.0, "cm/m"),
             "n7": (25 + 200 * s5, "cm*s", 1.0, "1")}
    assert list(got) == list(truth)
    for name, (value, unit, adjoint, adjoint_unit) in truth.items():
        node = got[name]
        assert (node["unit"], node["adjoint_unit"]) == (unit, adjoint_unit), name
        # rel 1e-14: the conversions by 0.01 and 100 round a few ulps
        assert node["value"] == pytest.approx(value, rel=1e-14), name
        assert node["adjoint"] == pytest.approx(adjoint, rel=1e-14), name
    # a sum's partial sums (no step of the program names them) and a degC temperature:
    # f = (x + y + z)·T with x, y, z in cm and T = 20 degC, computed in m and K; the
    # partial sum x + y is 0.03 m, the temperature 293.15 K (T + 273.15)
    from gradcli.graph.nodes import build_graph

    nodes, _ = build_graph("sum([x, y, z])*T", {"x": "1 cm", "y": "2 cm", "z": "3 cm",
                                                "T": "20 degC"})
    assert all(n.unit for n in nodes)
    by_value = {round(float(n.value), 12): n.unit for n in nodes}
    assert by_value[0.03] == "m" and by_value[0.06] == "m" and by_value[293.15] == "K"


@pytest.mark.parametrize("n", [3, 300])  # the per-row path and the vectorised one (> 256)
def test_jsonl_lines_each_carry_the_units(cli, n):
    import json

    status, out, _ = cli("grad", "V/I", "--grid", f"V=1:5:{n}", "--at", "I=19.661 mA",
                         "--unit", "V=V", "-f", "jsonl")
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == n
    # unit(f) = V/mA, df/dV = 1/I in 1/mA, df/dI = -V/I^2 in V/mA^2 (hand)
    assert all(r["units"] == {"V": "V", "I": "mA", "f": "V/mA", "df/dV": "1/mA",
                              "df/dI": "V/mA^2"} for r in rows)
    assert rows[-1]["f"] == pytest.approx(5 / 19.661, rel=1e-14)
    status, out, _ = cli("grad", "V/I", "--grid", f"V=1:5:{n}", "--at", "I=19.661",
                         "-f", "jsonl")
    assert all("units" not in json.loads(line) for line in out.splitlines())


def test_jsonl_units_key_steps_aside_for_a_column_named_units():
    import io
    import json

    from gradcli.output.jsonl_writer import write_jsonl
    from gradcli.plan.blocks import Block, Layout, Result

    columns = Result(Layout([Block("units"), Block("f", unit="m")]),
                     {"units": np.array([1.0]), "f": np.array([2.0])}, (1,))
    buf = io.StringIO()
    write_jsonl(buf, columns)
    assert json.loads(buf.getvalue()) == {"units": 1.0, "f": 2.0, "@units": {"f": "m"}}


def test_html_page_hover_values_carry_units(tmp_path, cli):
    importlib.import_module("matplotlib")
    # R = V/I at V = 1 V, I = 10 mA, in ohm (hand): R = 100 Ω, dR/dV = 1/I = 100 Ω/V,
    # dR/dI = -V/I^2 = -0.01 V/mA^2 = -10 Ω/mA
    page = tmp_path / "x.html"
    status, _, _ = cli("plot", "V/I", "--grid", "V=1:5:3", "--grid", "I=10:20:2", "--unit",
                       "V=V,I=mA", "--to", "f=ohm", "--arrows", "none", "-o", str(page))
    assert status == 0
    text = page.read_text(encoding="utf-8")
    assert ("V = 1.0 V<br>I = 10.0 mA<br>f = 100.0 Ω<br>df/dV = 100.0 Ω/V<br>"
            "df/dI = -10.0 Ω/mA") in text
    from gradcli.plot.data import compute_field
    from gradcli.plot.html import hover_lines

    # a held value says its unit too; without units the labels are bare
    fl = compute_field("x*y", {"x": (0, 1, 2)}, fixed={"y": 2}, units={"x": "m", "y": "s"})
    assert hover_lines(fl)[1] == ("x = 1.0 m<br>y = 2.0 s (held)<br>f = 2.0 m*s<br>"
                                  "df/dx = 2.0 s<br>df/dy = 1.0 m")
    fl = compute_field("x*y", {"x": (0, 1, 2)}, fixed={"y": 2})
    assert hover_lines(fl)[1] == ("x = 1.0<br>y = 2.0 (held)<br>f = 2.0<br>df/dx = 2.0<br>"
                                  "df/dy = 1.0")


def test_cf_names_differ_beyond_case(tmp_path, cli):
    xr = importlib.import_module("xarray")
    importlib.import_module("h5netcdf")
    # a grid over x and X: CF 1.11 §2.3 wants names that differ when case is ignored;
    # the CSV columns keep their own names
    path = tmp_path / "g.nc"
    assert cli("grad", "x*X", "--grid", "x=0:1:2", "--grid", "X=0:1:3", "-o", str(path))[0] \
        == 0
    with xr.open_dataset(path) as ds:
        names = list(ds.variables)
        assert len({n.lower() for n in names}) == len(names)
        # the later of two names equal but for case gets _2; long_name keeps the column's
        assert sorted(names) == sorted(["x", "X_2", "f", "df_dx", "df_dX_2"])
        assert ds["df_dX_2"].attrs["long_name"] == "df/dX"
        # d(x*X)/dx = X (hand): at x = 1, X = 0.5 it is 0.5 (exact)
        assert float(ds["df_dx"].sel(x=1.0, X_2=0.5)) == 0.5
    status, out, _ = cli("grad", "x*X", "--at", "x=1,X=2", "-f", "csv")
    assert out.splitlines()[0] == "x,X,f,df/dx,df/dX"


def test_implicit_isotherm_in_kilopascals_and_litres(cli):
    # an isotherm p*V = c (c = nRT) with p in kPa, V in L, c in J (hand): F = pV - c,
    # dV/dp = -F_p/F_V = -V/p in L/kPa and d2V/dp2 = 2V/p^2 in L/kPa^2 (V = c/p);
    # at p = 100 kPa, V = 24.79 L (c = 2479 J = 2479 kPa*L): -0.2479 and 0.004958
    t = gradcli.implicit("p*V - c", "V", {"p": 100.0, "V": "24.79 L", "c": 2479.0},
                         wrt="p", order=2, units={"p": "kPa", "c": "J"})
    shown = {b.name: b.unit for b in t.blocks if b.unit}
    assert shown["dV/dp"] == "l/kPa" and shown["d2V/dp2"] == "l/kPa^2"
    assert shown["p"] == "kPa" and shown["V"] == "l"
    # rel 1e-12: c converted J -> base and F back to kPa*L, a few ulps each
    assert float(t["dV/dp"][0]) == pytest.approx(-0.2479, rel=1e-12)
    assert float(t["d2V/dp2"][0]) == pytest.approx(2 * 24.79 / 100 ** 2, rel=1e-12)
    # the same asked in m^3/Pa: 1 L/kPa = 1e-3 m^3 / 1e3 Pa = 1e-6 m^3/Pa
    status, out, _ = cli("implicit", "p*V - c", "--solve-for", "V", "--wrt", "p", "--at",
                         "p=100,V=24.79,c=2479", "--unit", "p=kPa,V=L,c=J", "--to",
                         "dV/dp=m^3/Pa", "-f", "csv")
    assert status == 0
    head, row = out.splitlines()
    assert head.split(",")[-1] == "dV/dp [m^3/Pa]"
    assert float(row.split(",")[-1]) == pytest.approx(-0.2479e-6, rel=1e-12)


def test_implicit_refuses_terms_of_different_dimensions(cli):
    # p*V is an energy, c a length: F's terms disagree, one line naming both, exit 2
    status, out, err = cli("implicit", "p*V - c", "--solve-for", "V", "--at",
                           "p=100,V=24.79,c=2479", "--unit", "p=kPa,V=L,c=m")
    assert status == 2 and out == ""
    assert "'-' adds values of different dimensions: kPa*l and m" in err
    assert "Traceback" not in err


def test_circulation_of_a_rotation_in_newtons_around_a_circle_in_metres(cli):
    # F = (-y, x) N/m * k with k = 1 N/m, i.e. (-y, x) N at (x, y) in m, around the
    # circle of radius 2 m (hand): ∮F·dr = ∫ k(4 sin² + 4 cos²) dt = 8π N·m = 8π J
    status, out, _ = cli("integrate", "[-k*y, k*x]", "--path",
                         "t: [2cos(t), 2sin(t)], t=0:2pi", "--unit", "x=m,y=m", "--at",
                         "k=1 N/m", "-f", "csv")
    assert status == 0
    head, row = out.splitlines()
    assert head == "circulation [N*m],error [N*m]"
    # rel 1e-12: the quadrature's tolerance is 1e-10 relative, reached to ~1e-15 here
    assert float(row.split(",")[0]) == pytest.approx(8 * math.pi, rel=1e-12)
    # in kJ, its error estimate too; Green's other side in the same unit
    t = gradcli.integrate("[-k*y, k*x]", disc="0,0,2", check="green", at={"k": "1 N/m"},
                          units={"x": "m", "y": "m"}, to={"circulation": "kJ"})
    shown = {b.name: b.unit for b in t.blocks}
    assert shown == {"circulation": "kJ", "error": "kJ", "green": "N*m",
                     "green_error": "N*m"}
    assert float(t["circulation"][0]) == pytest.approx(8e-3 * math.pi, rel=1e-12)
    assert float(t["green"][0]) == pytest.approx(8 * math.pi, rel=1e-12)


def test_line_and_surface_integrals_units(cli):
    # ∫ k(x² + y²) ds over the circle of radius 2 m, k = 1 N/m^2 (hand): k·4·4π = 16π N·m
    t = gradcli.integrate("k*(x^2 + y^2)", "t: [2cos(t), 2sin(t)], t=0:2pi",
                          at={"k": "1 N/m^2"}, units={"x": "m", "y": "m"})
    assert {b.name: b.unit for b in t.blocks} == {"integral": "N*m", "error": "N*m"}
    assert float(t["integral"][0]) == pytest.approx(16 * math.pi, rel=1e-12)
    # the flux of k·r (k = 1 N/m) out of the sphere of radius 2 m: k·R·4πR² = 32π N·m²,
    # and the divergence theorem's side in the same unit (div = 3k, 3k·(4/3)πR³)
    t = gradcli.integrate("[k*x, k*y, k*z]", ball="0,0,0,2", check="divergence",
                          at={"k": "1 N/m"}, units={"x": "m", "y": "m", "z": "m"})
    assert {b.name: b.unit for b in t.blocks if b.name in ("flux", "divergence")} == {
        "flux": "N*m^2", "divergence": "N*m^2"}
    # rel 1e-9: the cubature's tolerance 1e-10 relative
    assert float(t["flux"][0]) == pytest.approx(32 * math.pi, rel=1e-9)
    assert float(t["divergence"][0]) == pytest.approx(32 * math.pi, rel=1e-9)
    # a path over x in m and y in cm: the components dx, dy cannot be summed
    status, out, err = cli("integrate", "[-y, x]", "--disc", "0,0,1", "--unit", "x=m,y=cm")
    assert status == 2 and out == ""
    assert "must share one unit (here m and cm)" in err


def test_explore_computes_in_the_command_lines_units():
    import json

    from gradcli.cli.explore.compute import field, panel
    from gradcli.cli.explore.server import Engine

    # R = V/I at V = 5 V, I = 20 mA, in ohm (hand): R = 250 Ω, dR/dV = 1/I = 50 Ω/V,
    # dR/dI = -V/I² = -12.5 Ω/mA; the server adds the command line's units to every request
    engine = Engine(30.0, 256 << 20, physical={"units": {"V": "V", "I": "mA"},
                                               "to": {"f": "ohm"}})
    try:
        status, body = engine.run("p1", "point", {"expression": "V/I",
                                                  "point": {"V": 5.0, "I": 20.0}, "at": []})
    finally:
        engine.close()
    got = json.loads(body)
    assert status == 200
    assert got["units"] == {"V": "V", "I": "mA", "f": "Ω", "df/dV": "Ω/V", "df/dI": "Ω/mA"}
    # rel 1e-12: the base-unit round trip through 1e-3 and back
    assert got["values"]["f"] == pytest.approx(250.0, rel=1e-12)
    assert got["values"]["df/dV"] == pytest.approx(50.0, rel=1e-12)
    assert got["values"]["df/dI"] == pytest.approx(-12.5, rel=1e-12)
    # the panel's graph as gradcli graph gives it: I*0.001 is 0.02 A, ∂R/∂n1 = -V/n1² =
    # -12500 Ω/A (hand)
    graph = {n["id"]: n for n in got["graph"]["nodes"]}
    assert (graph["I"]["unit"], graph["I"]["adjoint_unit"]) == ("mA", "Ω/mA")
    assert (graph["n1"]["unit"], graph["n1"]["adjoint_unit"]) == ("A", "Ω/A")
    assert graph["n1"]["adjoint"] == pytest.approx(-12500.0, rel=1e-12)
    # the field carries each column's unit for the axes, colour bar and hover labels:
    # f = kxy with k in N/m, x and y in m: df/dx = ky in N (hand)
    fl = field({"expression": "k*x*y", "grid": ["x=0:1:3", "y=0:1:3"], "at": ["k=2"],
                "units": {"x": "m", "y": "m", "k": "N/m"}})
    assert fl["units"]["x"] == "m" and fl["units"]["df/dx"] == "N"
    assert field({"expression": "x*y", "grid": ["x=0:1:3", "y=0:1:3"], "at": []})[
        "units"] == {}
    # a panel without units says none
    assert "units" not in panel({"expression": "x*y", "point": {"x": 1.0, "y": 2.0},
                                 "at": []})


def _explored(kind, payload):
    """The explorer's answer to one request (as its worker computes it), the columns
    decoded."""
    import base64

    from gradcli.cli.explore.compute import handle

    status, body = handle(kind, payload)
    assert status == 200, body
    columns = {k: (v if k == "type" else np.frombuffer(base64.b64decode(v), "<f8"))
               for k, v in body["columns"].items()}
    return columns, body.get("units", {})


def test_explore_paths_and_critical_points_carry_units():
    # descend f = x² from x = 2 m, gd with lr 0.25 (hand): x1 = x0 - 0.25·2·x0 = 1 m,
    # f = 4 then 1 m², |grad f| = 2x = 4 then 2 m
    columns, units = _explored("descend", {"expression": "x^2", "start": {"x": 2.0},
                                           "at": [], "method": "gd", "lr": 0.25,
                                           "steps": 1, "units": {"x": "m"}})
    assert units == {"x": "m", "f": "m^2", "|grad f|": "m"}
    assert list(columns["x"]) == [2.0, 1.0] and list(columns["f"]) == [4.0, 1.0]
    assert list(columns["|grad f|"]) == [4.0, 2.0]
    # |grad f| over x in cm and y in m is in cm: at (100 cm, 1 m) 200·√2 cm (hand)
    columns, units = _explored("descend", {"expression": "x^2 + y^2", "at": [],
                                           "start": {"x": 100.0, "y": 1.0}, "steps": 0,
                                           "units": {"x": "cm", "y": "m"}})
    assert units["|grad f|"] == "cm"
    assert columns["|grad f|"][0] == pytest.approx(200 * math.sqrt(2), rel=1e-15)
    # flow of x' = -y/s, y' = x/s with the time in s (the command line's --unit t=s):
    # |F| = r/s, r² = x² + (100 y)² in cm² (hand), row by row
    columns, units = _explored("flow", {
        "expression": "[-y/(1 's'), x/(1 's')]", "start": {"x": 100.0, "y": 0.0},
        "at": [], "t": "0:1:11", "units": {"x": "cm", "y": "m", "t": "s"}})
    assert units == {"t": "s", "x": "cm", "y": "m", "|F|": "cm/s"}
    # rel 1e-13: one hypot of two values rounded once each
    assert columns["|F|"] == pytest.approx(np.hypot(columns["x"], 100 * columns["y"]),
                                           rel=1e-13)
    # a curve: the gradient flow of f = x² (x' = -2x, the time a pure number: m over
    # m²/m) drawn on f, in m²: x = 2e^(-2t); RK4 with h = 0.01 errs by ~1e-9 relative
    columns, units = _explored("flow", {"expression": "x^2", "start": {"x": 2.0}, "at": [],
                                        "t": "0:1:101", "units": {"x": "m"}})
    assert units == {"x": "m", "|F|": "m", "f": "m^2"}
    assert columns["x"][-1] == pytest.approx(2 * math.exp(-2), rel=1e-8)
    assert columns["f"][-1] == pytest.approx(columns["x"][-1] ** 2, rel=1e-15)
    # critical points of f = k((x - 1 km)² + y²), k = 3 J/m² (hand): the minimum at
    # (1000 m, 0 m), f = 0 J, the Hessian's eigenvalues 2k = 6 J/m²
    columns, units = _explored("critical", {
        "expression": "k*((x - 1 'km')^2 + y^2)", "grid": ["x=-2000:2000:5", "y=-2:2:5"],
        "at": ["k=3 J/m^2"], "units": {"x": "m", "y": "m"}})
    assert units["x"] == "m" and units["f"] == "J" and units["eig[0]"] == "J/m^2"
    assert columns["type"] == ["minimum"]
    # abs 1e-9 m: Newton's last step leaves rounding of the 1e3 m coordinate
    assert columns["x"][0] == pytest.approx(1000.0, abs=1e-9)
    assert columns["eig[0]"][0] == pytest.approx(6.0, rel=1e-12)
    assert columns["eig[1]"][0] == pytest.approx(6.0, rel=1e-12)
    # the time's unit is flow's alone: the field of the same session leaves it out
    _, units = _explored("descend", {"expression": "x^2", "start": {"x": 2.0}, "at": [],
                                     "steps": 0, "units": {"x": "m", "t": "s"}})
    assert units["x"] == "m"
    # without units nothing says one
    _, units = _explored("critical", {"expression": "x^2", "grid": ["x=-1:1:5"], "at": []})
    assert units == {}


def test_explore_refuses_a_unit_mistake_before_serving(cli):
    status, out, err = cli("explore", "V/I", "--unit", "V=V,I=mA", "--to", "f=kg",
                           "--no-browser")
    assert status == 2 and out == ""
    assert "f is in V/mA, which cannot be converted to kg" in err


def test_descent_starts_given_with_units_are_converted(cli):
    # 200 cm = 2 m (SI brochure: c = 10^-2); the start row is the start itself
    status, out, err = cli(["descend", "x^2+y^2", "--from", "x=1 m,y=200 cm", "--unit",
                            "x=m,y=m", "--steps", "1", "-f", "csv"])
    assert status == 0, err
    header, first = out.splitlines()[:2]
    assert header == "step,x [m],y [m],f [m^2],|grad f| [m]"
    step, x, y, f, g = map(float, first.split(","))
    assert (x, y, f) == (1.0, 2.0, 5.0) and g == pytest.approx(2 * math.sqrt(5), rel=1e-15)


def test_a_start_unit_declares_an_undeclared_variable(cli):
    status, out, _ = cli(["descend", "x^2", "--from", "x=3 km", "--steps", "0", "-f", "csv"])
    assert status == 0
    assert out.splitlines()[:2] == ["step,x [km],f [km^2],|grad f| [km]", "0,3.0,9.0,6.0"]


def test_a_start_in_the_wrong_dimension_is_one_line(cli):
    status, out, err = cli(["descend", "x^2+y^2", "--from", "x=1 m,y=2 s", "--unit",
                            "x=m,y=m", "--steps", "1"])
    assert (status, out) == (2, "")
    assert err.strip().splitlines() == [
        "gradcli: error: 'y' is given in s but declared in m: they cannot be converted"]


def test_library_starts_take_quantities():
    import pint

    u = pint.UnitRegistry()
    path = gradcli.descend("x^2", start={"x": 150 * u.cm}, units={"x": "m"}, steps=0)
    assert path["x"][0] == pytest.approx(1.5, rel=1e-15)  # 150 cm in m


def test_flow_from_starts_with_units_is_the_circle(cli):
    # x' = -y/s, y' = x/s from (1 m, 0 m): x = cos t, y = sin t (t in s); RK4 with
    # h = 0.01 s errs by about h^4 = 1e-8; a start in cm keeps x in cm (x = 100 cos t)
    for start, scale, header in (("x=1 m,y=0 m", 1.0, "t [s],x [m],y [m],|F| [m/s]"),
                                 ("x=100 cm,y=0 m", 100.0, "t [s],x [cm],y [m],")):
        status, out, err = cli(["flow", "[-y/(1 's'), x/(1 's')]", "--from", start,
                                "--t", "0:1:101", "--unit", "t=s", "-f", "csv"])
        assert status == 0, err
        lines = out.splitlines()
        assert lines[0].startswith(header)
        t, x, y, _ = map(float, lines[-1].split(","))
        assert t == 1.0
        assert x == pytest.approx(scale * math.cos(1.0), abs=scale * 1e-8)
        assert y == pytest.approx(math.sin(1.0), abs=1e-8)
# --- what loading pint costs (the "Speed" goals: pint only with units, its registry cached) --

def _fresh(code: str, **env: str) -> list:
    """What ``code`` prints (one JSON line) in a fresh interpreter with ``env`` added."""
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_request_without_units_never_imports_pint():
    got = _fresh("import json, sys, gradcli\n"
                 "r = gradcli.evaluate('V/I', 'grad', at={'V': 4.999, 'I': 19.661})\n"
                 "print(json.dumps(['pint' in sys.modules, float(r['df/dV'][0])]))")
    assert got == [False, pytest.approx(1 / 19.661, rel=1e-15)]  # one division


def test_the_registry_cache_survives_another_environments_entries(tmp_path):
    # pint's own shared cache folder (cache_folder=":auto:") finds entries by the
    # definitions' content, but they name the files that wrote them: an environment
    # removed after writing them made every other one's cache fail (a missing
    # .../default_en.txt/constants_en.txt), and units parsed pint's definitions anew
    # each time. gradcli's folder is its own per pint installation.
    import shutil

    import pint

    cache, other = tmp_path / "cache", tmp_path / "other"
    shutil.copytree(Path(pint.__file__).parent, other / "pint")
    _fresh(f"import json, pint\nassert pint.__file__.startswith({str(other)!r})\n"
           "print(json.dumps(str(pint.UnitRegistry(cache_folder=':auto:').cache_folder)))",
           PYTHONPATH=str(other), XDG_CACHE_HOME=str(cache))
    shutil.rmtree(other)  # that environment is gone; its cache entries stay
    code = ("import json\nfrom gradcli.lang.units import registry\nr = registry()\n"
            "print(json.dumps([str(r.cache_folder), r.Quantity(19.661, 'mA').to('A').m]))")
    for _ in range(2):  # the first run writes the cache, the second reads it
        folder, amperes = _fresh(code, XDG_CACHE_HOME=str(cache))
        assert Path(folder).parent == cache / "gradcli" and amperes == pytest.approx(
            0.019661, rel=1e-15)  # one product by 1e-3
        assert any(Path(folder).glob("*.pickle"))


def test_a_registry_cache_cut_short_is_written_anew(tmp_path):
    # pint writes its cache files in place: two first runs at once can leave one cut
    # short, and every later run then parsed pint's definitions again (no cache)
    code = ("import json\nfrom gradcli.lang.units import registry\nr = registry()\n"
            "print(json.dumps([str(r.cache_folder), r.Quantity(2.5, 'ms').to('s').m]))")
    folder = Path(_fresh(code, XDG_CACHE_HOME=str(tmp_path))[0])
    for entry in folder.glob("*.pickle"):
        entry.write_bytes(entry.read_bytes()[:100])
    for _ in range(2):  # the first repairs the cache, the second reads it
        # 2.5 ms = 0.0025 s (one product by 1e-3)
        assert _fresh(code, XDG_CACHE_HOME=str(tmp_path)) == [
            str(folder), pytest.approx(0.0025, rel=1e-15)]
        assert all(e.stat().st_size > 100 for e in folder.glob("*.pickle"))


def test_the_registry_without_a_writable_cache_folder(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the cache directory would be under a file: it cannot be made
    code = ("import json\nfrom gradcli.lang.units import registry\nr = registry()\n"
            "print(json.dumps([r.cache_folder and str(r.cache_folder),\n"
            "                  r.Quantity(1, 'km/h').to('m/s').m]))")
    # 1 km/h = 1/3.6 m/s (NIST SP 811, B.8)
    assert _fresh(code, XDG_CACHE_HOME=str(blocked)) == [None, pytest.approx(1 / 3.6,
                                                                             rel=1e-15)]


def test_pint_loads_without_importlib_metadata_and_keeps_its_versions():
    got = _fresh(
        "import json, sys\nfrom gradcli.lang.units import registry\nregistry()\n"
        "import flexcache, flexparser, pint\n"
        "loaded = 'importlib.metadata' in sys.modules\n"
        "import importlib.metadata as m\n"
        "print(json.dumps([loaded, pint.__version__ == m.version('pint'),\n"
        "                  flexcache.__version__ == m.version('flexcache'),\n"
        "                  flexparser.__version__ == m.version('flexparser'),\n"
        "                  m.__file__ != '', callable(m.entry_points)]))")
    assert got == [False, True, True, True, True, True]


def test_dist_versions_as_importlib_metadata_reads_them():
    import importlib.metadata

    from gradcli.lang.units import _dist_version

    for name in ("pint", "flexcache", "flexparser", "numpy", "typing-extensions",
                 "Platformdirs"):
        assert _dist_version(name) == importlib.metadata.version(name), name
    assert _dist_version("no-such-distribution") is None


def test_flow_speed_of_compatible_units_is_in_the_first_ones(cli):
    # x' = -y/s, y' = x/s from x = 100 cm, y = 0 m: F = (-y, x)/s, so |F| = r/s with r the
    # radius in the first variable's unit (hand): r² = x² + (100·y)² in cm², row by row
    status, out, err = cli(["flow", "[-y/(1 's'), x/(1 's')]", "--from", "x=100 cm,y=0 m",
                            "--t", "0:1:11", "--unit", "t=s", "-f", "csv"])
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "t [s],x [cm],y [m],|F| [cm/s]"
    for line in lines[1:]:
        _, x, y, speed = map(float, line.split(","))
        # rel 1e-13: one hypot of two values rounded once each
        assert speed == pytest.approx(math.hypot(x, 100.0 * y), rel=1e-13)
    assert float(lines[1].split(",")[3]) == 100.0  # the start: r = 100 cm exactly
    # x in m and y in s (x' = y·1 m/s² in m/s, y' = x/1 m in s/s): no common unit, so
    # |F| keeps none (as before)
    status, out, err = cli(["flow", "[y*1 'm/s^2', x/(1 'm')]", "--from", "x=1 m,y=0 s",
                            "--t", "0:1:3", "--unit", "t=s", "-f", "csv"])
    assert status == 0, err
    assert out.splitlines()[0] == "t [s],x [m],y [s],|F|"


def test_gradient_norm_of_compatible_units_is_in_the_first_ones(cli):
    # f = x² + y² at x = 100 cm, y = 1 m (hand): ∂f/∂x = 200 cm, ∂f/∂y = 2 m in cm²/m is
    # 20000 cm²/m = 200 cm, so |grad f| = 200·√2 cm (not the 20000.99 of mixed numbers)
    status, out, err = cli(["descend", "x^2 + y^2", "--from", "x=100 cm,y=1 m",
                            "--steps", "0", "-f", "csv"])
    assert status == 0, err
    head, row = out.splitlines()[:2]
    assert head == "step,x [cm],y [m],f [cm^2],|grad f| [cm]"
    # rel 1e-15: one conversion factor (10⁻², exact in pint's rationals) and a hypot
    assert float(row.split(",")[4]) == pytest.approx(200 * math.sqrt(2), rel=1e-15)
    t = gradcli.descend("x^2 + y^2", start={"x": 100.0, "y": 1.0},
                        units={"x": "cm", "y": "m"}, steps=0)
    assert {b.name: b.unit for b in t.blocks}["|grad f|"] == "cm"
    # a field F = [x - 1 m, y] over x in cm, y in m (hand): |F| at (0 cm, 1 m) is
    # |(-100 cm, 100 cm)| = 100·√2 cm; the eigenvalues keep no unit (x and y differ)
    found = gradcli.critical("[x - 1 'm', y - 1 'm']", grid={"x": (0, 200, 3),
                             "y": (0, 2, 3)}, units={"x": "cm", "y": "m"})
    shown = {b.name: b.unit for b in found.blocks}
    assert shown["|F|"] == "cm" and shown["x"] == "cm" and shown["y"] == "m"
    assert not shown.get("re[0]")
    assert float(found["x"][0]) == pytest.approx(100.0, rel=1e-12)
    assert float(found["y"][0]) == pytest.approx(1.0, rel=1e-12)
    # dimensions that differ (x in m, t in s): |grad f| keeps no unit, as the eigenvalues
    status, out, _ = cli(["descend", "x*t", "--from", "x=1 m,t=2 s", "--steps", "0",
                          "-f", "csv"])
    assert status == 0
    assert out.splitlines()[0] == "step,x [m],t [s],f [m*s],|grad f|"


def test_plot_magnitude_of_compatible_units_is_in_the_first_ones():
    from gradcli.plot.colors import heat
    from gradcli.plot.data import compute_field

    # |∇f| of x² + y² at x = 100 cm, y = 1 m (hand, as above): 200·√2 cm
    fl = compute_field("x^2 + y^2", {"x": (0, 100, 3), "y": (0, 1, 3)},
                       units={"x": "cm", "y": "m"})
    assert fl.magnitude()[2, 2] == pytest.approx(200 * math.sqrt(2), rel=1e-15)
    assert fl.magnitude_unit() == "cm"
    assert heat(fl, "magnitude").label.endswith("[cm]")
    # x in m and t in s: no unit for |∇f|; arrows are refused (one length scale)
    fl = compute_field("x*t", {"x": (0, 1, 3), "t": (0, 1, 3)}, units={"x": "m", "t": "s"})
    assert fl.magnitude_unit() == ""


def test_explore_takes_flows_time_unit(cli, tmp_path):
    # --unit t=s is the flow lines' time unit; the field and the saved page leave it out
    page = tmp_path / "view.html"
    status, out, err = cli(["explore", "[-y/(1 's'), x/(1 's')]", "--grid", "x=-1:1:5",
                            "--grid", "y=-1:1:5", "--unit", "x=m,y=m,t=s", "--save",
                            str(page)])
    assert status == 0, err
    text = page.read_text(encoding="utf-8")
    # |F| of (-y, x)/s over x, y in m is in m/s; each hover label gives x in m
    assert "x = -1.0 m<br>y = -1.0 m<br>f[0] = 1.0 m/s" in text and "[m/s]" in text

"""Type A evaluation from readings (gradcli.uncertainty.readings, propagate(readings=),
--readings FILE) against GUM H.2: the five simultaneous readings of Table H.2 give the
published R, X, Z, their uncertainties and correlations; the inputs' means, s/√n, n − 1
and eq. 17's correlations against hand computation."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from gradcli import propagate
from gradcli.uncertainty.propagation import PropagationError
from gradcli.uncertainty.readings import type_a

# GUM H.2, Table H.2: five simultaneous observations of V (V), I (A) and phi (rad)
H2 = {"V": [5.007, 4.994, 5.005, 4.990, 4.999],
      "I": [19.663e-3, 19.639e-3, 19.640e-3, 19.685e-3, 19.678e-3],
      "phi": [1.0456, 1.0438, 1.0468, 1.0428, 1.0433]}
H2_F = "[V/I*cos(phi), V/I*sin(phi), V/I]"


def _check_h2(got):
    """GUM H.2 Table H.3 (approach 1, the law of propagation from the readings' means,
    uncertainties and correlations): R = 127.732 Ω, X = 219.847 Ω, Z = 254.260 Ω;
    u = 0.071, 0.295, 0.236 Ω; r(R,X) = -0.588, r(R,Z) = -0.485, r(X,Z) = 0.993. u(X) is
    0.29558, within one unit of the printed 0.295's last digit (the GUM's rounding)."""
    assert [round(v, 3) for v in got["f"]] == [127.732, 219.847, 254.260]
    assert round(got["u(f)"][0], 3) == 0.071
    assert abs(got["u(f)"][1] - 0.295) < 0.001
    assert round(got["u(f)"][2], 3) == 0.236
    assert round(got["r(f[0],f[1])"][0], 3) == -0.588
    assert round(got["r(f[0],f[2])"][0], 3) == -0.485
    assert round(got["r(f[1],f[2])"][0], 3) == 0.993


def test_gum_h2_from_its_five_readings():
    _check_h2(propagate(H2_F, readings=H2))


def test_gum_h2_inputs_by_hand():
    """GUM H.2.2 (Table H.2's summary): V̄ = 4.9990 V, s(V̄) = 0.0032 V, Ī = 19.6610 mA,
    s(Ī) = 0.0095 mA, φ̄ = 1.04446 rad, s(φ̄) = 0.00075 rad; r(V,I) = -0.36,
    r(V,φ) = 0.86, r(I,φ) = -0.65 (Table H.2, to its digits); ν = 4 each."""
    a = type_a(H2)
    assert round(a.mean["V"], 4) == 4.9990 and round(a.u["V"], 4) == 0.0032
    assert round(a.mean["I"] * 1e3, 4) == 19.6610 and round(a.u["I"] * 1e3, 4) == 0.0095
    assert round(a.mean["phi"], 5) == 1.04446 and round(a.u["phi"], 5) == 0.00075
    assert {k: round(v, 2) for k, v in a.corr.items()} == {
        ("V", "I"): -0.36, ("V", "phi"): 0.86, ("I", "phi"): -0.65}
    assert a.nu == {"V": 4.0, "I": 4.0, "phi": 4.0}
    v = np.array(H2["V"])
    assert a.u["V"] == pytest.approx(math.sqrt(np.sum((v - v.mean()) ** 2) / 4 / 5),
                                     rel=1e-14)


def test_readings_observed_together_count_as_one_unit_in_nu_eff():
    """V, I, φ from the same five readings: Willink's unit has ν = 4, so ν_eff = 4 for
    R, X and Z (GUM H.2.4's ν), and k₉₅ = t₀.₉₇₅(4) = 2.78 (GUM Table G.2)."""
    got = propagate(H2_F, readings=H2, coverage=0.95)
    np.testing.assert_allclose(got["nu_eff"], 4.0, rtol=1e-12)
    assert [round(k, 2) for k in got["k"]] == [2.78] * 3


def test_a_pandas_dataframe_and_missing_readings():
    """A DataFrame works as a dict; a missing reading (nan) makes its variable observed on
    other rows than the rest: independent of them, with its own n."""
    pd = importlib.import_module("pandas")
    _check_h2(propagate(H2_F, readings=pd.DataFrame(H2)))
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [2.0, 1.0, np.nan, 3.0]})
    a = type_a(frame)
    assert a.count == {"x": 4, "y": 3} and a.corr == {} and a.together == []
    assert a.u["y"] == pytest.approx(math.sqrt(1.0 / 3), rel=1e-14)  # s = 1, n = 3
    got = propagate("x + y", readings=frame)
    assert got["u(f)"][0] == pytest.approx(math.sqrt(5 / 12 + 1 / 3), rel=1e-14)


@pytest.mark.parametrize("kwargs, param, words", [
    (dict(readings={"x": [1.0]}), "readings", "at least 2"),
    (dict(readings={"x": [1.0, 2.0]}, at={"x": 1.0}), "at", "has readings too"),
    (dict(readings={"x": [1.0, 2.0]}, nu={"x": 3}), "nu", "has readings too"),
    (dict(readings={"x": [[1.0, 2.0]]}), "readings", "a sequence"),
    (dict(readings={"1x": [1.0, 2.0]}), "readings", "not a variable name"),
    (dict(readings=[1, 2]), "readings", "a mapping"),
    (dict(readings={"x": [1.0, 2.0], "y": [2.0, 1.5]}, corr={("x", "y"): 0.1}), "corr",
     "give it once"),
])
def test_bad_readings(kwargs, param, words):
    with pytest.raises(PropagationError) as err:
        propagate("x + 0*y" if "y" in str(kwargs) else "x", **kwargs)
    assert err.value.param == param and words in err.value.detail


def test_cli_readings_file(cli, tmp_path):
    """--readings FILE: the same numbers as the library; the variables' means as columns."""
    path = tmp_path / "h2.csv"
    rows = zip(*H2.values(), strict=True)
    path.write_text("# GUM H.2, Table H.2\nV,I,phi\n" +
                    "".join(",".join(repr(v) for v in r) + "\n" for r in rows))
    status, out, err = cli(["propagate", H2_F, "--readings", str(path)])
    assert status == 0, err
    header, *lines = out.strip().splitlines()
    assert header.split(",")[:4] == ["output", "V", "I", "phi"]
    lib = propagate(H2_F, readings=H2)
    assert [float(line.split(",")[5]) for line in lines] == list(lib["u(f)"])


@pytest.mark.parametrize("text, message", [
    ("V,I\n1,x\n", "line 2: 'x' is not a number"),
    ("V,I\n1,2\n3\n", "line 3 has 1 values, the header names 2 variables"),
    ("V,2I\n1,2\n", "line 1: '2I' is not a variable name (the first line names the "
     "variables)"),
    ("V,V\n1,2\n", "line 1: 'V' is named twice"),
    ("V,I\n1,inf\n", "line 2: 'inf' is not a finite number (leave the cell empty for a "
     "missing reading)"),
    ("", "the file is empty (expected a header naming the variables, then one row per "
     "observation)"),
    ("V,I\n1,2\n", "V: 1 reading: a Type A evaluation needs at least 2"),
    ("V,I\n1," + "9" * 60 + "x\n", "line 2: '" + "9" * 37 + "...' is not a number"),
])
def test_cli_bad_readings_file_is_one_line(cli, tmp_path, text, message):
    path = tmp_path / "r.csv"
    path.write_text(text)
    status, out, err = cli(["propagate", "V/I", "--readings", str(path)])
    assert (status, out) == (2, "")
    assert err == f"gradcli: error: --readings {path}: {message}\n"


def test_cli_readings_file_bounds(cli, tmp_path, monkeypatch):
    """Past the size bound: a clear error naming it, nothing read into memory beyond it."""
    from gradcli.cli import calibration_files

    monkeypatch.setattr(calibration_files, "MAX_READINGS_BYTES", 1 << 10)
    path = tmp_path / "big.csv"
    path.write_text("x\n" + "1.0\n" * 1000)
    status, out, err = cli(["propagate", "x", "--readings", str(path)])
    assert (status, out) == (2, "")
    assert err.startswith(f"gradcli: error: --readings {path}") and "1,024" in err

"""propagate --inputs FILE (CSV or TOML) and the library's inputs=: everything --at, --u,
--nu, --dist and --corr say, the file says, with the same numbers; an input in both places
is an error; a bad file is one line naming the file, the line and the offending token."""

from __future__ import annotations

import sys

import pytest

from gradcli import propagate
from gradcli.uncertainty.propagation import PropagationError

H2_F = "[V/I*cos(phi), V/I*sin(phi), V/I]"
H2_ARGS = ["--at", "V=4.9990+-0.0032;nu=4, I=19.6610e-3+-0.0095e-3;nu=4, "
           "phi=1.04446+-0.00075;nu=4", "--corr", "V,I=-0.36", "--corr", "V,phi=0.86",
           "--corr", "I,phi=-0.65", "--dist", "T=uniform:0.05", "--at", "T=20"]
F = H2_F.replace("V/I]", "V/I + 0*T]")

TOML = """\
# GUM H.2's inputs, with a temperature that does nothing
[inputs.V]
value = 4.9990
u = 0.0032
nu = 4
unit = "V"
description = "voltage across the terminals"

[inputs.I]
value = 19.6610e-3
u = 0.0095e-3
nu = 4

[inputs.phi]
value = "1.04446"
u = 0.00075
nu = 4

[inputs.T]
value = 20
dist = "uniform:0.05"

[correlations]
"V,I" = -0.36
"V,phi" = 0.86
"I,phi" = -0.65
"""

CSV = """\
name,value,u,nu,dist,unit,description,corr
V,4.9990,0.0032,4,,V,"voltage, across the terminals",I=-0.36;phi=0.86
I,19.6610e-3,0.0095e-3,4,,A,current,phi=-0.65
phi,1.04446,0.00075,4,,rad,phase,
T,20,,,uniform:0.05,degC,temperature,
"""


@pytest.mark.parametrize("name, text", [("in.toml", TOML), ("in.csv", CSV)])
def test_input_file_says_what_the_command_line_says(cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    want = cli(["propagate", F, *H2_ARGS, "--coverage", "0.95"])
    got = cli(["propagate", F, "--inputs", str(path), "--coverage", "0.95"])
    assert want[0] == 0 and got == want


def test_library_inputs_records():
    """inputs= takes the records a file holds; unit and description are carried along."""
    records = {"x": {"value": 1.0, "u": 0.1, "nu": 9, "unit": "m", "description": "x"},
               "y": {"value": "2", "dist": "triangular:0.6"}}
    got = propagate("x + y", inputs=records, coverage=0.95)
    same = propagate("x + y", at={"x": "1+-0.1;nu=9", "y": 2.0},
                     dist={"y": "triangular:0.6"}, coverage=0.95)
    assert dict(got) .keys() == dict(same).keys()
    for col in got:
        assert list(got[col]) == list(same[col])


@pytest.mark.parametrize("kwargs, param, key, words", [
    (dict(inputs={"x": {"value": 1, "u": 0.1}}, at={"x": 1}), "at", "x", "in the inputs"),
    (dict(inputs={"x": {"value": 1}}, dist={"x": "uniform:1"}), "dist", "x", "give it once"),
    (dict(inputs={"x": {"u": 0.1}}), "inputs", "x", "no value"),
    (dict(inputs={"x": {"value": 1, "sigma": 0.1}}), "inputs", "x", "unknown key 'sigma'"),
    (dict(inputs={"x": 1.0}), "inputs", "x", "a record"),
])
def test_library_inputs_errors(kwargs, param, key, words):
    with pytest.raises(PropagationError) as err:
        propagate("x", **kwargs)
    assert (err.value.param, err.value.key) == (param, key) and words in err.value.detail


@pytest.mark.parametrize("name, text, message", [
    ("a.csv", "name,value,sigma\nx,1,2\n", "line 1: unknown column 'sigma' (the columns "
     "are name, value, u, nu, dist, unit, description, corr)"),
    ("a.csv", "name,u\nx,1\n", "line 1: the header needs the columns name and value"),
    ("a.csv", "name,value\nx,1\nx,2\n", "line 3: 'x' is given twice"),
    ("a.csv", "name,value\n2x,1\n", "line 2: '2x' is not a variable name"),
    ("a.csv", "name,value,corr\nx,1,y\n", "line 2: 'y' in corr: expected NAME=R"),
    ("a.csv", "name,value\nx,1,3\n", "line 2 has 3 fields, the header 2"),
    ("a.csv", "", "the file is empty (expected a header such as name,value,u,nu,dist, then "
     "one row per input)"),
    ("a.toml", "[inputs.x]\nvalue = \n", "not valid TOML (at line 2, column 9)"),
    ("a.toml", "[input.x]\nvalue = 1\n", "unknown table 'input' (the file has "
     "[inputs.NAME] tables and [correlations])"),
    ("a.toml", "[inputs.x]\nvalue = 1\nmean = 2\n", "x: unknown key 'mean': an input says "
     "value, u, nu, dist, unit, description"),
    ("a.txt", "x", "an input file is .csv or .toml, not '.txt'"),
])
def test_bad_input_file_is_one_line(cli, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    status, out, err = cli(["propagate", "x", "--inputs", str(path)])
    assert (status, out, err) == (2, "", f"gradcli: error: --inputs {path}: {message}\n")


def test_an_input_in_the_file_and_on_the_command_line(cli, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("name,value,u,corr\nx,1,0.1,y=0.5\ny,2,0.1,\n")
    status, out, err = cli(["propagate", "x+y", "--inputs", str(path), "--u", "x=0.2"])
    assert (status, out) == (2, "")
    assert err == "gradcli: error: --u x: 'x' is in the inputs too: give it once\n"
    status, out, err = cli(["propagate", "x+y", "--inputs", str(path), "--corr", "y,x=0.1"])
    assert (status, out) == (2, "")
    assert err == (f"gradcli: error: --corr y,x: the correlation is in --inputs {path} too: "
                   "give it once\n")


def test_toml_without_tomllib_says_what_to_do(cli, tmp_path, monkeypatch):
    """Python 3.10 has no tomllib: without tomli too, one line says what to do."""
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    path = tmp_path / "in.toml"
    path.write_text(TOML)
    status, out, err = cli(["propagate", "x", "--inputs", str(path)])
    assert (status, out) == (2, "")
    assert "needs Python 3.11 or the tomli package" in err and "a .csv input file" in err


def test_input_file_bound(cli, tmp_path, monkeypatch):
    from gradcli.cli import calibration_files

    monkeypatch.setattr(calibration_files, "MAX_INPUTS_BYTES", 1 << 10)
    path = tmp_path / "big.csv"
    path.write_text("name,value\n" + "".join(f"x{i},1\n" for i in range(500)))
    status, out, err = cli(["propagate", "x0", "--inputs", str(path)])
    assert (status, out) == (2, "") and "1,024" in err and str(path) in err

"""Reporting a propagate result: --round (GUM 7.2.6, against its own worked numbers) on
the table and CSV only, and the context every file keeps (JSON notes, the history of
.nc, .zarr and .parquet)."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from gradcli.uncertainty.rounding import gum_rounded, significant, to_place


def test_gum_7_2_rounding_example():
    """GUM 7.2.2 and 7.2.4: m_S = 100.021 47 g, u_c = 0.35 mg, U = 0.79 mg (k = 2.26):
    the unrounded values round to the printed ones, the estimate at U's last digit."""
    got = gum_rounded({"f": np.array([100.0214734]), "u(f)": np.array([0.00034917]),
                       "U(f)": np.array([0.00078912])})
    assert list(got["f"]) == [100.02147]
    assert list(got["u(f)"]) == [0.00035] and list(got["U(f)"]) == [0.00079]
    text = gum_rounded({"f": np.array([127.73216992810208]), "u(f)": np.array([0.29558]),
                        "U(f)": np.array([0.1973])}, text=True)
    assert (text["f"][0], text["u(f)"][0], text["U(f)"][0]) == ("127.73", "0.30", "0.20")


def test_rounding_rules():
    """Half away from zero on the decimal value (0.125 -> 0.13, which binary round()
    gives as 0.12); a carry into a new digit keeps two significant digits (0.0996 ->
    0.10, 99.6 -> 100); nan stays."""
    assert to_place(0.125, -2) == 0.13 and round(0.125, 2) == 0.12
    assert significant(0.0996) == 0.1 and significant(99.6) == 100.0
    assert significant(-0.0123456) == -0.012
    assert np.isnan(gum_rounded({"U(f)": np.array([np.nan])})["U(f)"][0])
    budget = gum_rounded({"input": np.array(["x", "total"], dtype=object),
                          "value": np.array([1.23456, 5.67891]),
                          "U(f)": np.array([np.nan, 0.0123])})
    assert list(budget["value"]) == [1.23456, 5.679]  # only the total row's estimate


H2 = ["propagate", "[V/I*cos(phi), V/I*sin(phi), V/I]", "--at",
      "V=4.9990+-0.0032;nu=40, I=19.6610e-3+-0.0095e-3, phi=1.04446+-0.00075",
      "--corr", "V,I=-0.36", "--corr", "V,phi=0.86", "--corr", "I,phi=-0.65",
      "--coverage", "0.95"]


def test_round_on_table_and_csv_not_json(cli):
    status, out, err = cli([*H2, "--round", "-f", "csv"])
    assert status == 0, err
    head, *rows = out.strip().splitlines()
    cols = head.split(",")
    first = dict(zip(cols, rows[0].split(","), strict=False))
    # k = 1.96 (ν_eff ≈ 5e3, truncated: 1.9604), U = 0.137 -> 0.14: the place is 0.01
    assert (first["f"], first["u(f)"], first["U(f)"]) == ("127.73", "0.07", "0.14")
    status, out, err = cli([*H2, "--round", "-f", "table"])
    assert status == 0 and "127.73 " in out and " 0.070 " in out  # text keeps the 0
    status, out, err = cli([*H2, "--round", "-f", "json"])
    raw = json.loads(out)
    assert raw["rows"][0][raw["columns"].index("u(f)")] != 0.07  # exact in JSON


def test_json_notes_carry_the_verdict_and_the_context(cli):
    status, out, err = cli(["propagate", "x + y", "--at", "x=1+-0.3;nu=5", "--at", "y=1",
                            "--dist", "y=uniform:0.1", "--corr", "x,y=0", "--monte-carlo",
                            "200000", "--seed", "3", "--interval", "shortest", "-f",
                            "json", "-q"])
    assert status == 0, err
    notes = json.loads(out)["notes"]
    assert any("law of propagation" in n for n in notes)
    context = json.loads(notes[0].removeprefix("context: "))  # the table's own, first
    assert context["inputs"]["x"] == {"value": 1.0, "u": 0.3, "nu": 5.0,
                                      "distribution": "normal"}
    assert context["inputs"]["y"]["distribution"] == "uniform:0.1"
    assert context["inputs"]["y"]["nu"] == "inf"
    assert context["monte_carlo"] == {"samples": 200000, "adaptive": False, "digits": 2,
                                      "seed": 3, "interval": "shortest"}
    assert (context["order"], context["coverage"], context["k"]) == (1, 0.95, None)


@pytest.mark.parametrize("ext", ["nc", "parquet", "zarr"])
def test_files_keep_the_context_in_their_history(cli, tmp_path, ext):
    importlib.import_module("xarray" if ext != "parquet" else "pyarrow")
    if ext == "zarr":
        importlib.import_module("zarr")
    path = tmp_path / f"out.{ext}"
    status, _, err = cli([*H2, "--monte-carlo", "1e4", "--seed", "7", "-q", "-o",
                          str(path)])
    assert status == 0, err
    if ext == "parquet":
        import pyarrow.parquet as pq

        history = pq.read_schema(path).metadata[b"history"].decode()
    else:
        import xarray as xr

        opened = xr.open_dataset(path) if ext == "nc" else xr.open_zarr(path)
        history = opened.attrs["history"]
        opened.close()
    command, context = history.split("\n", 1)
    assert command.startswith("gradcli propagate '[V/I*cos(phi), V/I*sin(phi), V/I]'")
    assert "--seed 7" in command
    ctx = json.loads(context.removeprefix("context: "))
    # r = Σ_ij/(u_i u_j) back from the covariance: to rounding (1e-15)
    assert ctx["correlations"] == pytest.approx({"V,I": -0.36, "V,phi": 0.86,
                                                 "I,phi": -0.65}, rel=1e-14)
    assert ctx["inputs"]["V"]["nu"] == 40.0 and ctx["inputs"]["I"]["nu"] == "inf"
    assert ctx["monte_carlo"]["seed"] == 7

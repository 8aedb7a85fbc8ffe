"""Points files: spreadsheet CSVs, carried columns, exact values,
clear errors, and the reader's chunked, whole-array parsing."""

from __future__ import annotations

import csv
import importlib
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from gradcli.cli.points_file import read_points
from gradcli.errors import EvaluationError


@pytest.fixture(params=["pyarrow", "loadtxt"])
def native(request, monkeypatch) -> str:
    """Each test that takes it runs with both native parsers: pyarrow's (when the data
    extra is installed) and numpy.loadtxt (without it)."""
    from gradcli.cli import points_file
    if request.param == "pyarrow":
        importlib.import_module("pyarrow")
        monkeypatch.setattr(points_file, "_ARROW_FROM", 0)
    else:
        monkeypatch.setattr(points_file, "_arrow_parser", lambda columns: None)
    return request.param


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# --- item 9: a points file from a spreadsheet -------------------------------------------------

def test_excel_utf8_bom_and_crlf(cli, tmp_path, native) -> None:
    """Excel's "CSV UTF-8": a byte-order mark, CRLF line ends."""
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfx,y\r\n1,2\r\n3,4\r\n")
    status, out, err = cli("grad", "x*y", "--points", str(path))
    assert (status, err) == (0, "")
    assert out == "x,y,f,df/dx,df/dy\n1.0,2.0,2.0,2.0,1.0\n3.0,4.0,12.0,4.0,3.0\n"


SHEET = ('id,x,label,weight,y\r\n'
         '007,1.5,"Smith, J.",3.10,2\r\n'
         'a-12,-2,"say ""hi""",,0.5\r\n'
         '\r\n'
         '13,0.25,Zoë,1e3,4\r\n')


def test_other_columns_are_carried_as_text_before_the_variables(cli, tmp_path, native) -> None:
    path = tmp_path / "sheet.csv"
    path.write_text(SHEET, encoding="utf-8")
    status, out, err = cli("grad", "x*y", "--points", str(path))
    assert (status, err) == (0, "")
    header, *rows = rows_of(out)
    assert header == ["id", "label", "weight", "x", "y", "f", "df/dx", "df/dy"]
    assert [r[:3] for r in rows] == [["007", "Smith, J.", "3.10"], ["a-12", 'say "hi"', ""],
                                     ["13", "Zoë", "1e3"]]  # text stays text, as written
    assert [[float(v) for v in r[3:]] for r in rows] == [
        [1.5, 2.0, 3.0, 2.0, 1.5], [-2.0, 0.5, -1.0, 0.5, -2.0], [0.25, 4.0, 1.0, 4.0, 0.25]]
    assert out.splitlines()[1].startswith('007,"Smith, J.",3.10,1.5,')  # RFC 4180 quoting


def test_carried_columns_in_json_table_and_npz(cli, tmp_path, native) -> None:
    path = tmp_path / "sheet.csv"
    path.write_text(SHEET, encoding="utf-8")
    status, out, _ = cli("eval", "x+y", "--points", str(path), "-f", "json")
    doc = json.loads(out)
    assert doc["columns"] == ["id", "label", "weight", "x", "y", "f"]
    assert doc["rows"][0] == ["007", "Smith, J.", "3.10", 1.5, 2.0, 3.5]
    assert doc["rows"][1][:3] == ["a-12", 'say "hi"', ""]
    status, out, _ = cli("eval", "x+y", "--points", str(path), "-f", "table")
    assert status == 0 and "Smith, J." in out and "Zoë" in out and "007" in out
    target = tmp_path / "r.npz"
    assert cli("eval", "x+y", "--points", str(path), "-o", str(target))[0] == 0
    with np.load(target) as data:  # no pickle needed: text is a unicode array
        assert list(data) == ["id", "label", "weight", "x", "y", "f"]
        assert data["id"].dtype.kind == "U" and data["id"].tolist() == ["007", "a-12", "13"]
        assert data["label"].tolist() == ["Smith, J.", 'say "hi"', "Zoë"]
        np.testing.assert_array_equal(data["f"], [3.5, -1.5, 4.25])


def test_unused_variables_and_other_names_are_carried(tmp_path) -> None:
    """Only the expression's variables bind: a z column it does not use, or x[0] columns of a
    vector it does not name, are carried like any label."""
    path = tmp_path / "p.csv"
    path.write_text("x,z,v[0],v[1],Temperature (K)\n1,2,3,4,300\n")
    table = read_points(str(path), ["x"], 100)
    assert list(table.variables) == ["x"]
    assert list(table.carried) == ["z", "v[0]", "v[1]", "Temperature (K)"]
    assert table.carried["Temperature (K)"].tolist() == ["300"]


def test_vector_columns_form_a_vector_variable(tmp_path, native) -> None:
    path = tmp_path / "p.csv"
    path.write_text("label,x[1],x[0],y\nA,2,1,5\nB,4,3,6\n")
    table = read_points(str(path), ["x", "y"], 100)
    np.testing.assert_array_equal(table.variables["x"], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(table.variables["y"], [5.0, 6.0])


@pytest.mark.parametrize("content, words", [
    ("x,y\n1,2\n3,abc\n", ["p.csv", "line 3", "column 'y'", "'abc' is not a number"]),
    ("x,y\n\n1,2\n\n3,\n", ["p.csv", "line 5", "column 'y'", "'' is not a number"]),
    ('x,y\n1,"2"\n"0x10",3\n', ["p.csv", "line 3", "column 'x'", "'0x10'"]),
    ("x,y\n1,2\n3\n", ["p.csv", "line 3 has 1 fields", "header has 2"]),
    ("x,y\n1,2\n3,4,5\n", ["p.csv", "line 3 has 3 fields", "header has 2"]),
    ("x,y\n1,NA\n", ["p.csv", "line 2", "column 'y'", "'NA' is not a number"]),
    ("x,y\nnull,1\n", ["p.csv", "line 2", "column 'x'", "'null' is not a number"]),
    ("", ["p.csv", "empty"]),
    ("a,b\n1,2\n", ["p.csv", "no column names a variable", "x, y"]),
    ("x,x\n1,2\n", ["p.csv", "appears twice"]),
    ("x[0],x[2],y\n1,2,3\n", ["x[0], x[1], ... without gaps"]),
    ("f,x,y\n1,2,3\n", ["points file's column 'f'", "result column"]),
])
def test_bad_files_name_the_file_line_and_column(cli, tmp_path, native, content, words) -> None:
    path = tmp_path / "p.csv"
    path.write_text(content)
    status, out, err = cli("grad", "x*y" if "x[" not in content else "sum(x)*y",
                           "--points", str(path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gradcli: error: ")
    for word in words:
        assert word in err, (word, err)


def test_numbers_are_read_exactly_over_many_chunks(tmp_path, native) -> None:
    """Every spelling float() reads gives float()'s double, bit for bit, over several MiB
    (many chunks, on threads), with a quoted cell spanning a line break among them."""
    rng = np.random.default_rng(7)
    n = 120_000
    vals = np.concatenate([rng.standard_normal(n // 2),
                           rng.standard_normal(n // 2) * 10.0 ** rng.integers(-300, 300, n // 2)])
    spell = [repr, lambda v: f"{v:.17e}", lambda v: f"{v:.6g}", lambda v: f"{v:+.3f}",
             lambda v: f"{v:.20f}", lambda v: f" {v!r} "]
    cells = [spell[i % len(spell)](v) for i, v in enumerate(vals.tolist())]
    cells[5], cells[6], cells[7], cells[8] = "nan", "-inf", "1_000.5", ".5e-3"
    lines = [f"{c},{i},r{i}" for i, c in enumerate(cells)]
    lines[n // 2] = f'{cells[n // 2]},{n // 2},"two\nlines"'
    path = tmp_path / "big.csv"
    path.write_text("x,i,label\n" + "\n".join(lines) + "\n")
    table = read_points(str(path), ["x", "i"], 10**7)
    expected = np.array([float(c) for c in cells])
    assert table.variables["x"].view(np.int64).tolist() == expected.view(np.int64).tolist()
    np.testing.assert_array_equal(table.variables["i"], np.arange(n))
    assert table.carried["label"][n // 2] == "two\nlines"
    assert table.carried["label"][-1] == f"r{n - 1}"


def test_plain_files_take_the_native_parser_and_read_exactly(tmp_path, native,
                                                           monkeypatch) -> None:
    """Files as numpy.savetxt, repr and printf write them are read by the native parser
    alone (the csv/float() path is never taken) and give float()'s double bit for bit,
    over many chunks, with a carried column."""
    from gradcli.cli import points_file
    monkeypatch.setattr(points_file, "_CHUNK", 1 << 16)  # many chunks

    def refuse(self, chunk, first_line):
        raise AssertionError(f"chunk at line {first_line} left the native parser")
    monkeypatch.setattr(points_file._Parser, "_general", refuse)
    rng = np.random.default_rng(3)
    n = 30_000
    vals = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    spell = [repr, lambda v: f"{v:.18e}", lambda v: f"{v:.6g}", lambda v: f"{v:+.3f}",
             lambda v: f"{v:.17g}", lambda v: f"{v:.20f}" if abs(v) < 1e20 else repr(v)]
    cells = [spell[i % len(spell)](v) for i, v in enumerate(vals.tolist())]
    path = tmp_path / "plain.csv"
    path.write_text("id,x,y\r\n" + "".join(f"r{i},{c},{i}\r\n" for i, c in enumerate(cells)))
    table = read_points(str(path), ["x", "y"], 10**6)
    expected = np.array([float(c) for c in cells])
    assert table.variables["x"].view(np.int64).tolist() == expected.view(np.int64).tolist()
    np.testing.assert_array_equal(table.variables["y"], np.arange(n))
    assert table.carried["id"].tolist() == [f"r{i}" for i in range(n)]


# --- item 23: very wide files -------------------------------------------------------------------

def test_a_200000_column_file_carries_its_other_columns(tmp_path) -> None:
    """200,000 columns, one of them named in the expression: the others are carried through,
    in linear time (not bound as variables). The timeout only guards against a hang."""
    ncol, named = 200_000, 123_456
    names = [f"c{j}" for j in range(ncol)]
    names[named] = "x"
    rows = [[str(r * ncol + j) for j in range(ncol)] for r in range(2)]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(",".join(r) for r in [names, *rows]) + "\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "grad", "x^2", "--points",
                           str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    header, *out = rows_of(proc.stdout)
    assert len(header) == ncol + 2
    assert header[:3] == ["c0", "c1", "c2"] and header[-4:] == [f"c{ncol - 1}", "x", "f",
                                                                    "df/dx"]
    for r, row in enumerate(out):
        x = float(r * ncol + named)
        assert row[:ncol - 1] == [v for j, v in enumerate(rows[r]) if j != named]
        assert [float(v) for v in row[-3:]] == [x, x * x, 2 * x]


def test_read_points_errors_are_evaluation_errors(tmp_path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("x\n1\n2\n3\n")
    with pytest.raises(EvaluationError, match="at least 3 points, over the limit of 2"):
        read_points(str(path), ["x"], 2)


@pytest.mark.parametrize("content", ["x\n", "x\n\n", "x\n\n\n\n", "id,x\n\n", "id,x,y[0]\r\n\r\n"])
def test_a_header_without_rows_is_an_empty_table(tmp_path, native, content) -> None:
    """Blank lines after the header are no rows, exactly as a header alone (they once
    reached the whole-array parser with zero rows and crashed)."""
    path = tmp_path / "p.csv"
    path.write_text(content, newline="")
    table = read_points(str(path), ["x", "y"], 100)
    assert table.variables["x"].shape == (0,)
    assert all(col.shape == (0,) for col in table.carried.values())
    assert list(table.carried) == (["id"] if content.startswith("id") else [])

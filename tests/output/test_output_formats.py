"""The one format table: a format registered at run time is a choice of -f, an -o
extension, in --help and in the library; the generated docs page follows the table."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import gradcli.output as output
from gradcli.cli import reference
from gradcli.cli.definition import BY_NAME
from gradcli.cli.main import main
from gradcli.output import formats

ROOT = Path(__file__).resolve().parents[2]


def _toy_writer(columns, request) -> list[str]:
    """Writes the column names and the row count: ``TOY x,f,df/dx 2``."""
    cols = output._columns.as_arrays(columns)
    text = f"TOY {','.join(cols)} {output.row_count(columns)}\n"
    if request.path is None:
        request.stdout.write(text)
    else:
        with output.atomic_open(request.path, "w") as fh:
            fh.write(text)
    return []


@pytest.fixture
def toy():
    """A toy rows format ``toy`` (``.toy``), registered for one test."""
    record = formats.register(formats.Format(
        "toy", (".toy",), (formats.ROWS,), "A toy format for a test.", writer=_toy_writer))
    yield record
    formats.unregister("toy")


def test_a_registered_format_is_written_by_the_cli_and_the_library(toy, capsys,
                                                                    tmp_path) -> None:
    """One record and a writer: -f toy, -o x.toy, every row command, the library."""
    assert main(["grad", "x^2", "--at", "x=3", "--at", "x=4", "-f", "toy"]) == 0
    assert capsys.readouterr().out == "TOY x,f,df/dx 2\n"
    target = tmp_path / "x.toy"
    assert main(["descend", "x^2", "--from", "x=1", "--steps", "2", "-q",
                 "-o", str(target)]) == 0
    assert target.read_text() == "TOY step,x,f,|grad f| 3\n"
    assert main(["taylor", "exp(x)", "--at", "x=0", "--order", "3", "-o",
                 str(tmp_path / "t.toy")]) == 0
    assert (tmp_path / "t.toy").read_text() == \
        "TOY x,order,deg(x),coefficient,derivative 4\n"
    buf = io.StringIO()
    output.write({"x": np.arange(5.0)}, fmt="toy", stdout=buf)
    assert buf.getvalue() == "TOY x 5\n"
    assert "toy" in output.FORMATS
    for name in ("grad", "critical", "flow", "taylor"):
        assert "toy" in BY_NAME[name].formats
        assert (".toy", "toy") in BY_NAME[name].files
    assert "toy" not in BY_NAME["plot"].formats and "toy" not in BY_NAME["graph"].formats


def test_a_registered_format_is_in_help(toy, capsys) -> None:
    """--help lists the new format among -f's formats and its extension under -o."""
    assert main(["grad", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Formats: table csv json jsonl toy, and with -o FILE npz" in text
    assert ".csv .json .jsonl .npz .npy .toy, and with gradcli[data] .nc .zarr .parquet" \
        in text


def test_an_unregistered_format_is_refused(capsys) -> None:
    """Without its record, -f toy and -o x.toy are errors that list the real choices."""
    assert main(["grad", "x^2", "--at", "x=3", "-f", "toy"]) == 2
    err = capsys.readouterr().err
    assert "toy" in err and "jsonl" in err
    assert main(["grad", "x^2", "--at", "x=3", "-o", "x.toy"]) == 2
    assert capsys.readouterr().err == (
        "gradcli: error: unknown output extension '.toy': use .csv, .json, .jsonl, .npz, "
        ".npy, .nc, .zarr, .parquet\n")


def test_an_extension_means_one_format() -> None:
    """Registering a second format for an extension already taken is refused."""
    with pytest.raises(ValueError, match=r"\.csv already means csv"):
        formats.register(formats.Format("csv2", (".csv",), (formats.ROWS,), "x"))
    assert "csv2" not in formats.FORMATS


def test_the_formats_page_is_generated_from_the_table() -> None:
    """docs/reference/formats.md carries the table as rendered from the records
    (regenerate with ``make reference``)."""
    page = (ROOT / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    assert reference.updated(page) == page
    assert "| `jsonl` | `.jsonl` | rows | no | yes | — |" in page


def test_the_formats_page_changes_with_the_table(toy) -> None:
    """A registered format appears as a row of the rendered page."""
    assert "| `toy` | `.toy` | rows | no | no | — | A toy format for a test. |" in \
        reference.render("formats")


def test_plot_reads_its_extensions_from_the_table() -> None:
    """The picture and animation records are the plot's extensions."""
    from gradcli.plot import options

    assert options.FORMATS == {".png": "png", ".svg": "svg", ".pdf": "pdf",
                               ".html": "html", ".gif": "gif", ".mp4": "mp4"}
    assert options.MOVIES == ("gif", "mp4") and options.IMAGES == ("png", "svg", "pdf")

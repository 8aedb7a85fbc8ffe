"""Files named by arguments: only programs are read as programs, messages never quote a
line of a file that is not a program, and --no-files / GRADCLI_NO_FILES=1 refuse every
argument that would read a file."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

SECRET = "ghp_Zq81SecretToken0123456789"
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADCLI_NO_FILES", raising=False)
    (tmp_path / "passwd").write_text(PASSWD)
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "secret.csv").write_text(SECRET + "\n")
    (tmp_path / "secret.gc").write_text(SECRET + "\n")
    (tmp_path / "loss.gc").write_text("m = x^2\nm + 1\n")
    (tmp_path / "v.csv").write_text("1\n2\n")
    (tmp_path / "pts.csv").write_text("x\n1\n2\n")
    np.save(tmp_path / "v.npy", np.array([1.0, 2.0]))
    np.save(tmp_path / "c.npy", np.array([1 + 2j, 3.0]))
    return tmp_path


def _no_content(err: str) -> None:
    assert SECRET not in err
    for line in PASSWD.splitlines():
        assert line not in err
        assert "root:x" not in err and "/bin/bash" not in err


@pytest.mark.parametrize("argv", [
    ["grad", "@passwd", "--at", "x=1"],
    ["grad", "@secret.txt", "--at", "x=1"],
    ["grad", "x", "--at", "x=@secret.txt"],
    ["grad", "x", "--at", "x=@secret.csv"],
    ["vjp", "[x, x]", "--at", "x=1", "--vector", "@secret.csv"],
    ["grad", "x", "--points", "passwd"],
    ["grad", "x", "--points", "secret.csv"],
    ["critical", "x^2", "--points", "secret.txt"],
])
def test_a_file_that_is_not_a_program_is_never_quoted(cli, files, argv):
    """A file that is not data or a program: exit 2, one line, and no line of the file
    (not even a token that fills a line) in the message."""
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    assert err.startswith("gradcli: error: ") and err.count("\n") == 1, err
    _no_content(err)


def test_a_program_must_be_named_as_one(cli, files):
    """@FILE reads a program only from a .gc file (or @-); others are refused unread."""
    status, _, err = cli("grad", "@passwd", "--at", "x=1")
    assert status == 2 and "'@passwd': a program file's name ends in .gc" in err
    status, out, _ = cli("grad", "@loss.gc", "--at", "x=3")
    assert status == 0 and out.splitlines()[-1].split(",")[-1] == "6.0"
    # a .gc file is a program: its own errors point into it, as a compiler's do
    status, _, err = cli("grad", "@secret.gc", "--at", "x=1")
    assert status == 2 and "secret.gc, line 1" in err


def test_a_vector_file_quotes_a_bad_token_only_beside_others(cli, files):
    (files / "m.csv").write_text("1,2\n3,abc\n")
    status, _, err = cli("grad", "sum(x)", "--at", "x=@m.csv")
    assert status == 2 and "line 2: 'abc' is not a number" in err
    status, _, err = cli("grad", "x", "--at", "x=@secret.csv")
    assert status == 2 and "line 1: the line's only value is not a number" in err


def test_a_complex_npy_file_is_refused(cli, files):
    status, _, err = cli("grad", "sum(x)", "--at", "x=@c.npy")
    assert status == 2 and "x=@c.npy" in err and "complex" in err


NO_FILES_CASES = [
    (["grad", "@loss.gc", "--at", "x=1"], "'@loss.gc'"),
    (["grad", "sum(x)", "--at", "x=@v.csv"], "--at x=@v.csv"),
    (["grad", "sum(x)", "--at", "x=@v.npy"], "--at x=@v.npy"),
    (["grad", "sum(x)", "--at", "x=@missing.npy"], "--at x=@missing.npy"),
    (["vjp", "[x, x]", "--at", "x=1", "--vector", "@v.csv"], "--vector=@v.csv"),
    (["grad", "x", "--points", "pts.csv"], "--points pts.csv"),
    (["grad", "x", "-p", "missing.csv"], "--points missing.csv"),
    (["critical", "x^2", "--points", "pts.csv"], "--points pts.csv"),
    (["graph", "sum(x)", "--at", "x=@v.npy"], "x=@v.npy"),
]


@pytest.mark.parametrize("argv, named", NO_FILES_CASES)
@pytest.mark.parametrize("how", ["option", "environment"])
def test_no_files_refuses_every_argument_that_reads_a_file(cli, files, monkeypatch, argv,
                                                           named, how):
    """--no-files (or GRADCLI_NO_FILES=1) is an exit-2 error naming the argument, before
    the file is opened (a missing file gives the same message)."""
    if how == "option":
        argv = [*argv, "--no-files"]
    else:
        monkeypatch.setenv("GRADCLI_NO_FILES", "1")
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    assert "reading files is turned off" in err and named in err, err
    assert err.count("\n") == 1


def test_no_files_still_reads_standard_input(cli, files, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\n1\n2\n"))
    status, out, _ = cli("grad", "x^2", "--points", "-", "--no-files")
    assert status == 0 and out.splitlines()[1:] == ["1.0,1.0,2.0", "2.0,4.0,4.0"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("x^2\n"))
    status, out, _ = cli("grad", "@-", "--at", "x=3", "--no-files")
    assert status == 0 and out.splitlines()[1] == "3.0,9.0,6.0"


def test_files_are_read_without_the_option(cli, files, monkeypatch):
    monkeypatch.setenv("GRADCLI_NO_FILES", "0")
    status, out, _ = cli("grad", "sum(x)", "--at", "x=@v.csv")
    assert status == 0


def test_formula_like_carried_text_is_written_verbatim(cli, files):
    """Carried text that a spreadsheet would run as a formula is data to gradcli: written
    as it was read (RFC 4180 quoting only), so CSV round-trips exactly; SECURITY.md says
    how to open such a file safely."""
    import csv

    payload = "=cmd|' /C calc'!A0"
    (files / "inj.csv").write_text(f'"{payload}",x\n"+1+1,@SUM(A1)",1\n-2,2\n')
    status, out, _ = cli("eval", "x", "--points", "inj.csv")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == [payload, "x", "f"]
    assert [r[0] for r in rows[1:]] == ["+1+1,@SUM(A1)", "-2"]


def test_csv_safe_escapes_what_a_spreadsheet_would_run(cli, files):
    """--csv-safe: carried names and cells starting with = + - @ (and not numbers) get a
    leading ' (OWASP); numbers such as -2, other text, and gradcli's own columns are
    unchanged."""
    import csv

    (files / "inj.csv").write_text('"=cmd|\' /C calc\'!A0",x,note\n"+1+1",1,-2\n'
                                   '@SUM(A1),2,"=HYPERLINK(""x"")"\nplain,3,\tx\n')
    status, out, _ = cli("eval", "x", "--points", "inj.csv", "--csv-safe")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["'=cmd|' /C calc'!A0", "note", "x", "f"]
    assert [r[:2] for r in rows[1:]] == [["'+1+1", "-2"], ["'@SUM(A1)", "'=HYPERLINK(\"x\")"],
                                         ["plain", "'\tx"]]
    assert [r[2:] for r in rows[1:]] == [["1.0", "1.0"], ["2.0", "2.0"], ["3.0", "3.0"]]


def test_spreadsheet_safe_cells():
    from gradcli.output.csv_writer import spreadsheet_safe

    assert [spreadsheet_safe(t) for t in ["=1+1", "+A1", "-A1", "@x", "\tx", "\rx", "-2",
                                          "+1e3", "-inf", "a=b", "", "x"]] == [
        "'=1+1", "'+A1", "'-A1", "'@x", "'\tx", "'\rx", "-2", "+1e3", "-inf", "a=b", "", "x"]


def test_no_files_refuses_a_scheduler_file(cli, tmp_path) -> None:
    """--scheduler-file names a file too: under --no-files it is refused unread, exit 2,
    one line naming the option (no cluster is contacted)."""
    path = tmp_path / "scheduler.json"
    path.write_text('{"address": "tcp://127.0.0.1:1"}')
    status, out, err = cli("grad", "x", "--grid", "x=0:1:3", "--scheduler-file", str(path),
                           "--no-files")
    assert status == 2 and out == ""
    assert err.startswith(f"gradcli: error: --scheduler-file {path}: reading files is "
                          "turned off") and len(err.splitlines()) == 1


def test_no_files_refuses_a_covariance_file(cli, tmp_path) -> None:
    """propagate --cov names a file: under --no-files it is refused unread (exit 2)."""
    path = tmp_path / "cov.csv"
    path.write_text("x,y\n0.01,0\n0,0.04\n")
    status, out, err = cli("propagate", "x+y", "--at", "x=1,y=2", "--cov", str(path),
                           "--no-files")
    assert status == 2 and out == ""
    assert err.startswith(f"gradcli: error: --cov {path}: reading files is turned off")
    status, out, _ = cli("propagate", "x+y", "--at", "x=1,y=2", "--cov", str(path))
    assert status == 0 and out.splitlines()[1].split(",")[3] == repr(0.05 ** 0.5)

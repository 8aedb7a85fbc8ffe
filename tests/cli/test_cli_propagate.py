"""`gradcli propagate` on the command line: the issue's example against the `uncertainties`
package's values (tests/reference/propagate_refs.json), the option syntax (+-, ±, --u,
--corr, --cov CSV and .npy, --dist), one-line errors with exit status 2, byte-identical
output for a --seed, and the how-to page's examples printing exactly what it shows."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]
REFS = json.loads((ROOT / "tests" / "reference" / "propagate_refs.json").read_text("utf-8"))
H2 = ["propagate", "[V/I*cos(phi), V/I*sin(phi), V/I]", "--at",
      "V=4.9990+-0.0032, I=19.6610e-3+-0.0095e-3, phi=1.04446+-0.00075",
      "--corr", "V,I=-0.36", "--corr", "V,phi=0.86", "--corr", "I,phi=-0.65"]


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_issue_example_equals_the_uncertainties_package(cli):
    """The H.2 command of the issue: f, u(f) and r(f[i],f[j]) as uncertainties 3.2.3
    computes them from the same rounded data (1e-12), U(f) = 2·u(f), k = 2."""
    ref = next(c for c in REFS["cases"] if c["expression"] == H2[1])
    status, out, err = cli([*H2, "-f", "csv"])
    assert status == 0 and err == ""
    rows = _rows(out)
    assert [r["output"] for r in rows] == ["f[0]", "f[1]", "f[2]"]
    for i, row in enumerate(rows):
        assert float(row["f"]) == pytest.approx(ref["f"][i], rel=1e-12)
        assert float(row["u(f)"]) == pytest.approx(ref["u(f)"][i], rel=1e-12)
        assert float(row["U(f)"]) == 2 * float(row["u(f)"])
        assert float(row["k"]) == 2.0
        assert float(row["r(f[0],f[1])"]) == pytest.approx(ref["r"][0][1], rel=1e-12)
        assert float(row["r(f[1],f[2])"]) == pytest.approx(ref["r"][1][2], rel=1e-12)


def test_plus_minus_is_arithmetic_in_the_other_commands(cli):
    """`1+-0.1` stays 0.9 in eval; in propagate it is 1 with u = 0.1, as is `1±0.1`."""
    status, out, _ = cli(["eval", "x", "--at", "x=1+-0.1", "-f", "csv"])
    assert status == 0 and _rows(out)[0]["f"] == "0.9"
    for spec in ("x=1+-0.1", "x=1±0.1"):
        status, out, _ = cli(["propagate", "3x", "--at", spec, "-f", "csv"])
        row = _rows(out)[0]
        assert (row["f"], row["u(f)"]) == ("3.0", repr(3 * 0.1))


def test_u_option_and_k(cli):
    """--u gives the uncertainties by name; --k scales U(f)."""
    status, out, _ = cli(["propagate", "x + y", "--at", "x=1,y=2", "--u",
                                   "x=0.3,y=0.4", "--k", "3", "-f", "csv"])
    row = _rows(out)[0]
    assert status == 0
    assert float(row["u(f)"]) == pytest.approx(0.5, rel=1e-15)
    assert float(row["U(f)"]) == pytest.approx(1.5, rel=1e-15)


def test_cov_file_csv_in_any_order_and_npy(cli, tmp_path):
    """A CSV covariance with its header in another order, and a .npy in --at order, give
    what the same correlations give by --corr."""
    s = {"V": 0.0032, "I": 0.0095e-3, "phi": 0.00075}
    r = {("V", "I"): -0.36, ("V", "phi"): 0.86, ("I", "phi"): -0.65}
    names = ["phi", "I", "V"]

    def c(a, b):
        return s[a] * s[b] * (1.0 if a == b else r.get((a, b), r.get((b, a))))

    path = tmp_path / "cov.csv"
    path.write_text(",".join(names) + "\n" + "".join(
        ",".join(repr(c(a, b)) for b in names) + "\n" for a in names))
    at = "V=4.9990, I=19.6610e-3, phi=1.04446"
    _, by_corr, _ = cli([*H2, "-f", "csv"])
    status, by_csv, err = cli([*H2[:2], "--at", at, "--cov", str(path), "-f", "csv"])
    assert status == 0, err
    order = ["V", "I", "phi"]
    np.save(tmp_path / "cov.npy", np.array([[c(a, b) for b in order] for a in order]))
    _, by_npy, _ = cli([*H2[:2], "--at", at, "--cov", str(tmp_path / "cov.npy"),
                                 "-f", "csv"])
    for got in (by_csv, by_npy):
        for want, row in zip(_rows(by_corr), _rows(got), strict=True):
            assert float(row["u(f)"]) == pytest.approx(float(want["u(f)"]), rel=1e-13)


def test_vector_uncertainties_from_files(cli, tmp_path):
    """x=@x.npy+-@u.npy: a vector's estimates and uncertainties from files."""
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0, 3.0]))
    np.save(tmp_path / "u.npy", np.array([0.1, 0.1, 0.2]))
    status, out, _ = cli(["propagate", "sum(x^2)", "--at",
                                   f"x=@{tmp_path / 'x.npy'}+-@{tmp_path / 'u.npy'}",
                                   "-f", "csv"])
    row = _rows(out)[0]
    assert status == 0 and row["x[2]"] == "3.0"
    assert float(row["u(f)"]) == pytest.approx(np.sqrt(0.04 + 0.16 + 1.44), rel=1e-14)


@pytest.mark.parametrize("args, message", [
    (["x*y", "--at", "x=1+-0.1,y=2+-0.1", "--corr", "x,y=1.2"],
     "gradcli: error: --corr x,y: the correlation 1.2 is outside [-1, 1]"),
    (["x*y+z", "--at", "x=1+-0.3,y=2+-0.1,z=1+-1", "--corr", "x,y=0.9", "--corr", "x,z=0.9",
      "--corr", "y,z=-0.9"],
     "gradcli: error: --corr: the correlation matrix of x, y, z is not positive "
     "semi-definite (its smallest eigenvalue is -0.8): no joint distribution has these "
     "correlations"),
    (["x", "--at", "x=1+--0.3"],
     "gradcli: error: --at x: the uncertainty -0.3 is negative: a standard uncertainty "
     "is >= 0"),
    (["x", "--at", "x=1", "--u", "x=-2"],
     "gradcli: error: --u x: the uncertainty -2 is negative: a standard uncertainty is >= 0"),
    (["x", "--at", "x=1+-0.3", "--dist", "x=uniform:0.1"],
     "gradcli: error: --dist x: uniform:0.1 means u = 0.057735 (a/√3), but the uncertainty "
     "given is 0.3: give one of them"),
    (["x", "--at", "x=1+-0.3", "--corr", "x=0.3"],
     "gradcli: error: --corr 'x=0.3': expected A,B=R, e.g. --corr V,I=-0.36"),
    (["x", "--at", "x=1+-0.3", "--dist", "x=gauss:1"],
     "gradcli: error: --dist x: unknown distribution 'gauss': choose normal, t, uniform, "
     "triangular, arcsine, trapezoid, ctrapezoid, exponential, gamma"),
    (["x", "--at", "x=1+-0.3", "--budget", "--monte-carlo", "10"],
     "gradcli: error: --budget: the budget is the law of propagation's; ask for it or for "
     "monte_carlo, not both"),
    (["x", "--at", "x=1+-"], "gradcli: error: --at 'x=1+-': no uncertainty for 'x' after "
     "its +-"),
    (["x*y", "--at", "x=1+-0.1,y=2+-0.1", "--corr", "x,y=1.0000001"],
     "gradcli: error: --corr x,y: the correlation 1.0000001 is outside [-1, 1]"),
    (["x", "--at", "x=1+-0.1+-0.2"],
     "gradcli: error: --at x: the uncertainty 0.1+-0.2 (= -0.1) is negative: a standard "
     "uncertainty is >= 0"),
    (["x", "--at", "x=1", "--dist", "x=uniform:-0.30"],
     "gradcli: error: --dist x: the half-width -0.30 is negative"),
    (["x", "--at", "x=1+-0.1", "--cov", "c.txt2"],
     "gradcli: error: --cov c.txt2: a covariance file is .csv (with a header naming the "
     "variables) or .npy, not '.txt2'"),
])
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    """Each bad input: exit 2, one line on stderr naming the option, nothing on stdout."""
    status, out, err = cli(["propagate", *args])
    assert (status, out, err) == (2, "", message + "\n")


def test_the_same_seed_writes_the_same_bytes(tmp_path, cli):
    """--seed: the same command writes the same file; another seed another one. The
    agreement line goes to stderr."""
    paths = [tmp_path / f"{i}.csv" for i in range(3)]
    for path, seed in zip(paths, ("4", "4", "5"), strict=True):
        status, _, err = cli(["propagate", "x*exp(y)", "--at", "x=1+-0.1,y=0+-0.2",
                                       "--monte-carlo", "2e5", "--seed", seed, "-o",
                                       str(path)])
        assert status == 0
        assert re.fullmatch(r"f: the law of propagation (agrees|does NOT agree) with Monte "
                            r"Carlo to JCGM 101 §8's tolerance: .*\n", err)
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()
    header = paths[0].read_text().splitlines()[0]
    assert header == "x,y,f,u(f),U(f),k,mean,sd,low,high"


def test_budget_csv_shares_add_up(cli):
    """--budget's CSV: one row per output and input, shares adding up to 100, then the
    output's total row (k and U(f) only there); its nan cells are not warned about."""
    status, out, err = cli([*H2, "--budget", "-f", "csv"])
    rows = _rows(out)
    assert status == 0 and list(rows[0]) == ["output", "input", "value", "u(x)", "c",
                                             "u_i(f)", "share", "k", "U(f)"]
    assert err == ""
    for k in range(3):
        assert sum(float(r["share"]) for r in rows[4 * k:4 * k + 3]) == pytest.approx(100.0)
        total = rows[4 * k + 3]
        assert total["input"] == "total" and float(total["k"]) == 2.0
        assert float(total["U(f)"]) == pytest.approx(2 * float(total["u_i(f)"]), rel=1e-15)


def test_help_explains_the_plus_minus_rule(cli):
    """--help says that +- separates the estimate and its uncertainty here."""
    status, out, _ = cli(["propagate", "--help"])
    assert status == 0
    text = " ".join(out.split())
    assert "the first +- or ± outside brackets separates the two" in text
    assert "x=[1,2]+-[0.1,0.2]" in text


PAGE = (ROOT / "docs" / "how-to" / "propagate.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```console\n\$ (gradcli [^\n]*)\n(.*?)```", PAGE, flags=re.DOTALL)


def test_the_page_has_its_examples():
    """The how-to shows the H.2 example, its budget and the end gauge's second order."""
    commands = [c for c, _ in BLOCKS]
    assert any("--budget" in c and "V/I*cos(phi)" in c for c in commands)
    assert any("--order 2" in c for c in commands)
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("command, shown", BLOCKS, ids=lambda v: str(v)[:50])
def test_the_page_examples_print_what_it_shows(cli, monkeypatch, tmp_path, command, shown):
    """Each console block prints exactly its lines (`...` stands for any lines), run
    where the page's example files are, as the documentation's own test runs them."""
    import shutil

    shutil.copytree(ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    status, out, _ = cli(shlex.split(command)[1:])
    assert status == 0
    want = shown.splitlines()
    got = out.splitlines()
    if "..." in want:
        cut = want.index("...")
        assert got[:cut] == want[:cut]
        tail = want[cut + 1:]
        assert got[len(got) - len(tail):] == tail if tail else True
    else:
        assert got == want


def test_output_file_is_written_atomically_where_asked(tmp_path, cli):
    """-o FILE.json writes the table there (nothing on stdout)."""
    path = tmp_path / "u.json"
    status, out, _ = cli(["propagate", "x^2", "--at", "x=3+-0.1", "-o", str(path)])
    assert status == 0 and out == ""
    data = json.loads(path.read_text())
    assert data["columns"][:3] == ["x", "f", "u(f)"]
    assert data["rows"][0][2] == pytest.approx(0.6, rel=1e-14)
    assert not [p for p in os.listdir(tmp_path) if p != "u.json"]


# --- the covariance file: quoted at most a token, read only as far as it is used ---------

PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
          "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")


@pytest.mark.parametrize("text, says", [
    (PASSWD, "line 1: the header's only column does not name a variable with an estimate "
             "(these are: V, x)"),
    ("TOKEN_s3cr3t_9f8e7d\n1.0\n", "line 1: the header's only column does not name a "
     "variable with an estimate (these are: V, x)"),
    ("V\nTOKEN_s3cr3t_9f8e7d\n", "line 2: the line's only value is not a number"),
    ("V,x,TOKEN_s3cr3t_9f8e7d\n", "line 1: column 3 of the header, 'TOKEN_s3cr3t_9f8e7d', "
     "is not a variable with an estimate or one of its components (these are: V, x)"),
    ("V,x[1]\n1,0\n0,TOKEN_s3cr3t_9f8e7d\n", "line 3: 'TOKEN_s3cr3t_9f8e7d' is not a "
     "number"),
    ("V,x[1]\n1,0,2\n", "line 2 has 3 values, the header's variables have 2 components"),
    ("V,x[0],V\n", "line 1: column 3 of the header names V again"),
    ("x,x[1]\n", "line 1: column 2 of the header names x[1] again"),
])
def test_a_covariance_file_is_quoted_at_most_a_token(cli, tmp_path, text, says):
    """A .csv (a symlink to a passwd-like file, a secret on its first line) is never
    quoted a whole line: a header name only among several, a bad value only beside others
    on its line (SECURITY.md §7), as the points and vector readers do."""
    target = tmp_path / "target"
    target.write_text(text)
    link = tmp_path / "cov.csv"
    link.symlink_to(target)
    status, out, err = cli(["propagate", "V + sum(x)", "--at", "V=1+-0.1, x=[1,2]+-0.1",
                            "--cov", str(link)])
    assert (status, out) == (2, "")
    assert err == f"gradcli: error: --cov {link}: {says}\n"
    lines = [line for line in text.splitlines() if "," not in line]
    assert not any(line in err for line in lines if "TOKEN" in line or ":" in line)


def test_a_covariance_file_names_a_vector_for_all_its_components(cli, tmp_path):
    """A vector's name in the header stands for its components: the rows are as wide as
    the components (x of 2 and V: 3 values), and the result is --corr's."""
    path = tmp_path / "cov.csv"
    path.write_text("x,V\n0.01,0.002,0\n0.002,0.04,0\n0,0,0.25\n")
    status, out, err = cli(["propagate", "x[0] + x[1] + V", "--at", "x=[1,2], V=3",
                            "--cov", str(path), "-f", "csv"])
    assert status == 0, err
    # u² = Σ₀₀ + Σ₁₁ + 2Σ₀₁ + u(V)²
    assert float(_rows(out)[0]["u(f)"]) == pytest.approx(
        np.sqrt(0.01 + 0.04 + 0.004 + 0.25), rel=1e-14)


_PEAK = """
import resource, subprocess, sys, time
started = time.monotonic()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
took = time.monotonic() - started
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(peak, took, done.returncode, done.stderr.decode().replace(chr(10), ' '))
"""


def _peak(*argv: str, cwd: Path) -> tuple[int, float, int, str]:
    """Peak resident bytes, seconds, status and stderr of one fresh child."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True,
                         text=True, env=env, timeout=300, check=True, cwd=cwd).stdout
    peak, took, status, err = out.split(" ", 3)
    return int(peak), float(took), int(status), err.strip()


@pytest.mark.parametrize("header, says", [
    ("nope", "line 1: the header's only column does not name a variable with an estimate "
             "(these are: V, x)"),
    ("x", "line 5: more than 3 rows of values for 3 components: the matrix must be square"),
])
def test_a_large_covariance_file_is_refused_without_reading_it(tmp_path, header, says):
    """A 100 MB CSV is refused from its header (a name that is no variable) or at its
    first row past the matrix's size: quickly and in little memory, whatever follows.
    (Read whole, it took 41 s and 5.2 GB for 200 MB.)"""
    import sys

    path = tmp_path / "big.csv"
    row = ",".join(["1e-3"] * 3) + "\n"
    filler = ",".join(["1e-3"] * 10_000) + "\n"  # 50 kB a line, 2,000 lines
    with path.open("w") as fh:
        fh.write(header + "\n" + row * 3)
        fh.writelines(filler for _ in range(2_000))
    assert path.stat().st_size > 100e6
    peak, took, status, err = _peak(sys.executable, "-m", "gradcli", "propagate",
                                    "V + sum(x)", "--at", "V=1, x=[1,2,3]", "--cov",
                                    str(path), cwd=tmp_path)
    assert status == 2 and err == f"gradcli: error: --cov {path}: {says}", err
    # the interpreter with numpy and gradcli is about 60 MB; a few 4 MiB reads on top
    assert peak < 200e6, peak
    assert took < 15, took  # a hang guard: the run is well under a second of work


def test_numbers_in_notes_are_said_as_given(cli):
    """--coverage 0.9999999999 is said as such in the agreement note, not rounded to 1."""
    status, _, err = cli(["propagate", "x", "--at", "x=1+-0.1", "--monte-carlo", "1000",
                          "--seed", "1", "--coverage", "0.9999999999", "-f", "csv"])
    assert status == 0
    # the run is too short to judge at this p: its note says p as given (and no verdict)
    assert "for p = 0.9999999999:" in err and "for p = 1:" not in err, err


def test_overflow_is_a_result_without_numpy_warnings(tmp_path):
    """x=1+-1e308: u(f)² overflows to inf, which is a result: written, counted in the one
    warning line; no RuntimeWarning with a source path reaches stderr (also with
    correlations, second order and Monte Carlo, whose threads draw the samples)."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for extra in ([], ["--corr", "x,y=0.5"], ["--order", "2"],
                  ["--monte-carlo", "1000", "--seed", "1"]):
        done = subprocess.run([sys.executable, "-m", "gradcli", "propagate", "x*y", "--at",
                               "x=1+-1e308, y=1+-0.1", *extra, "-f", "csv"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert _rows(done.stdout)[0]["u(f)"] == "inf"
        lines = done.stderr.splitlines()
        assert lines and lines[-1].startswith("warning: ") and "non-finite" in lines[-1]
        assert not [line for line in lines if "Warning" in line or ".py" in line], lines


# --- a vector's layout: one row per output component, linear in the vector -------------

def _vector_files(folder: Path, n: int) -> str:
    x = np.linspace(-2.0, 3.0, n)
    np.save(folder / f"x{n}.npy", x)
    np.save(folder / f"u{n}.npy", np.full(n, 0.25))
    return f"x=@{folder / f'x{n}.npy'}+-@{folder / f'u{n}.npy'}"


def test_a_vector_result_has_one_row_per_component_and_no_repeated_inputs(cli, tmp_path):
    """f = x^2 of an n-vector: n rows, columns output, f, u(f), U(f), k (the estimates are
    not repeated on every row: that made the table n × (n + 5)); u(f[i]) = 2|x_i|·u_i."""
    for n in (2_000, 4_000):
        status, out, err = cli(["propagate", "x^2", "--at", _vector_files(tmp_path, n),
                                "-o", str(tmp_path / f"f{n}.csv")])
        assert status == 0, err
    for n in (2_000, 4_000):
        rows = _rows((tmp_path / f"f{n}.csv").read_text())
        assert list(rows[0]) == ["output", "f", "u(f)", "U(f)", "k"]
        assert len(rows) == n and rows[-1]["output"] == f"f[{n - 1}]"
        x = np.linspace(-2.0, 3.0, n)
        np.testing.assert_allclose([float(r["u(f)"]) for r in rows], 2 * np.abs(x) * 0.25,
                                   rtol=1e-15, atol=0)
    small, large = ((tmp_path / f"f{n}.csv").stat().st_size for n in (2_000, 4_000))
    assert large < 2.2 * small  # linear in n (quadratic was 4 x)


def test_a_vector_result_is_computed_in_memory_linear_in_the_vector(tmp_path):
    """An 8,000-vector (out of memory before, even to .npz): the Jacobian is taken a
    block of rows at a time, so the peak stays near the interpreter's own."""
    import sys

    at = _vector_files(tmp_path, 8_000)
    peak, took, status, err = _peak(sys.executable, "-m", "gradcli", "propagate", "x^2",
                                    "--at", at, "-o", str(tmp_path / "f.npz"), "-q",
                                    cwd=tmp_path)
    assert status == 0, err
    with np.load(tmp_path / "f.npz") as got:
        assert got["u(f)"].shape == (8_000,) and "x" not in got.files
    # a dense 8,000² Jacobian is 512 MB; blocks of 2^20 values (8 MB) need far less
    assert peak < 250e6, peak


def test_a_jacobian_past_the_bound_is_refused_with_what_propagate_offers(cli, tmp_path):
    """Output components × uncertain inputs past 10^8: one line naming the bound and what
    to do, never advice to use vjp --vector (which propagate does not have)."""
    status, out, err = cli(["propagate", "x", "--at", _vector_files(tmp_path, 20_000)])
    assert (status, out) == (2, "")
    assert err == ("gradcli: error: --at: the law of propagation needs ∂f/∂x of every "
                   "output component and uncertain input: 20,000 × 20,000 = 400,000,000 "
                   "derivatives, over the limit of 100,000,000: use fewer components\n")
    assert "vjp" not in err

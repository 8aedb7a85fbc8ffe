"""The installed form: what `make dist` builds, installed into a fresh venv, used from outside
the source tree.

Most users `pipx install gradcli` or `pip install "gradcli[data,dask,html,units,explore]"`;
nothing in the checkout's test venv proves that a built wheel carries what the program needs
(package data, the console script, the extras' metadata). These tests install the wheel
`make dist` built from the sdist into a new venv, run everything from a temporary directory
with a clean environment (so nothing is imported from the checkout by accident), and check
that the sdist and the source tree build the same wheel. `make test-dist` builds the
artifacts and runs them (marker ``dist``; CI runs it after `make test`).
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.dist

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
EXTRAS = "data,dask,html,units,explore"


def _version() -> str:
    """``__version__`` read from the source as text: the one definition of the version."""
    tree = ast.parse((ROOT / "gradcli" / "_version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("gradcli/_version.py defines no __version__")


def _one(pattern: str, where: Path) -> Path:
    found = sorted(where.glob(pattern))
    if len(found) != 1:
        pytest.fail(f"expected one {pattern} in {where} (run `make dist`), found {found}")
    return found[0]


@pytest.fixture(scope="module")
def wheel() -> Path:
    """The wheel `python -m build` made from the sdist (its default route)."""
    return _one(f"gradcli-{_version()}-py3-none-any.whl", DIST)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> dict[str, Path]:
    """A fresh venv with the wheel and every extra installed, and an empty working dir."""
    base = tmp_path_factory.mktemp("installed")
    home = base / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    bin_dir = home / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", f"{wheel}[{EXTRAS}]"],
         cwd=base, timeout=900)
    work = base / "work"
    work.mkdir()
    return {"bin": bin_dir, "work": work}


def _clean_env() -> dict[str, str]:
    """The caller's environment without anything that points Python at the checkout."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["NO_COLOR"] = "1"
    return env


def _run(args: list, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(), text=True,
                          capture_output=True, timeout=timeout, check=False)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def test_console_script_reports_the_one_version(env: dict[str, Path]) -> None:
    out = _run([env["bin"] / "gradcli", "--version"], env["work"]).stdout
    assert out.strip() == f"gradcli {_version()}"


def test_console_script_computes_the_seed_example(env: dict[str, Path]) -> None:
    out = _run([env["bin"] / "gradcli", "grad", "x^2 + 3x + 1", "--at", "x=4", "-f", "csv"],
               env["work"]).stdout
    assert out.splitlines() == ["x,f,df/dx", "4.0,29.0,11.0"]


def test_python_m_gradcli_runs_the_installed_package(env: dict[str, Path]) -> None:
    py = env["bin"] / "python"
    out = _run([py, "-m", "gradcli", "jacobian", "[-x^3, 5x]", "--at", "x=2", "-f", "csv"],
               env["work"]).stdout
    assert out.splitlines()[1] == "2.0,-8.0,10.0,-12.0,5.0"
    where = _run([py, "-c", "import gradcli; print(gradcli.__file__, gradcli.__version__)"],
                 env["work"]).stdout.split()
    assert Path(where[0]).resolve().is_relative_to((env["bin"].parent).resolve())
    assert not Path(where[0]).resolve().is_relative_to(ROOT)
    assert where[1] == _version()


def test_pip_check_passes(env: dict[str, Path]) -> None:
    _run([env["bin"] / "python", "-m", "pip", "check"], env["work"])


def test_html_extra_writes_a_self_contained_page(env: dict[str, Path]) -> None:
    page = env["work"] / "sin.html"
    _run([env["bin"] / "gradcli", "plot", "sin(x)", "--grid", "x=0:2pi:50", "-o", page],
         env["work"])
    text = page.read_text(encoding="utf-8")
    assert "Plotly.newPlot" in text and "<script src=" not in text


def test_data_extra_writes_netcdf_that_xarray_reads(env: dict[str, Path]) -> None:
    target = env["work"] / "field.nc"
    _run([env["bin"] / "gradcli", "grad", "x*y", "--grid", "x=0:1:3", "--grid", "y=0:2:2",
          "-o", target], env["work"])
    check = ("import xarray, sys; ds = xarray.open_dataset(sys.argv[1]);"
             "print(ds['df_dx'].values.tolist(), ds['df_dy'].values.tolist())")
    out = _run([env["bin"] / "python", "-c", check, target], env["work"]).stdout
    # df/dx = y, df/dy = x on x = 0, 0.5, 1 (first axis) and y = 0, 2
    assert out.strip() == ("[[0.0, 2.0], [0.0, 2.0], [0.0, 2.0]] "
                           "[[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]]")


def test_dask_extra_runs_on_a_local_cluster(env: dict[str, Path]) -> None:
    target = env["work"] / "field.zarr"
    _run([env["bin"] / "gradcli", "grad", "x^2 + y", "--grid", "x=0:1:5", "--grid", "y=0:1:3",
          "--scheduler", "local:1", "-q", "-o", target], env["work"], timeout=600)
    check = ("import xarray, sys; ds = xarray.open_zarr(sys.argv[1]);"
             "print(ds['df_dx'].values[:, 0].tolist())")
    out = _run([env["bin"] / "python", "-c", check, target], env["work"]).stdout
    assert out.strip() == "[0.0, 0.5, 1.0, 1.5, 2.0]"  # 2x on x = 0, 0.25, ..., 1


def _members(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zf:
        return {name: hashlib.sha256(zf.read(name)).hexdigest() for name in zf.namelist()}


def test_sdist_rebuilds_the_same_wheel_as_the_tree(wheel: Path) -> None:
    direct = _one(wheel.name, DIST / "from-tree")
    assert _members(wheel) == _members(direct)


def test_wheel_carries_what_the_program_needs(wheel: Path) -> None:
    names = set(_members(wheel))
    info = f"gradcli-{_version()}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    package_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "gradcli").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts}
    assert package_files <= names, sorted(package_files - names)
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(f"{info}/METADATA").decode()
        entry = zf.read(f"{info}/entry_points.txt").decode()
    assert "gradcli = gradcli:main" in entry
    for extra in EXTRAS.split(","):
        assert f"Provides-Extra: {extra}" in meta
    assert f"Version: {_version()}" in meta and "License-Expression: MIT" in meta


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-m", "dist", "-q"]))

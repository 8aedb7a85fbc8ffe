"""docs/how-to/notebook.ipynb runs through a real Jupyter kernel (nbclient, ipykernel):
every cell without error, the results shown as HTML tables and the picture as a PNG."""

from __future__ import annotations

import base64
import importlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "how-to" / "notebook.ipynb"


def test_the_notebook_runs_and_shows_tables_and_a_picture(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Each code cell runs; the evaluate, critical, descend, flow and propagate cells show
    a text/html <table>; the plot cell an image/png; the saved file is that PNG."""
    nbformat = importlib.import_module("nbformat")
    nbclient = importlib.import_module("nbclient")
    importlib.import_module("ipykernel")
    # the kernel imports this checkout's gradcli, as the tests do
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell's traceback, on a failure
    results = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", out
            if out.output_type == "execute_result":
                results.append((cell.source, out["data"]))

    def shown(marker: str) -> dict:
        """What the first cell whose source has ``marker`` showed as its value."""
        return next(data for source, data in results if marker in source)

    for call in ('gradcli.evaluate("sin(x)*cos(y)"', "gradcli.critical", "gradcli.descend",
                 "gradcli.flow", "gradcli.propagate", '"taylor"'):
        assert "<table>" in shown(call)["text/html"], call
    assert "saddle" in shown("gradcli.critical")["text/html"]
    assert shown("gradcli.evaluate")["text/plain"].startswith(
        "<grad of sin(x)*cos(y): a grid of 50 × 25")
    png = base64.b64decode(shown("gradcli.plot")["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert (tmp_path / "field.png").read_bytes() == png

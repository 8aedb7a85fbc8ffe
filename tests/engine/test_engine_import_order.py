"""The engine's modules import each other one way: ``rules`` (the rule table) imports
``core`` (Tensor), and ``core`` reads the table only when an operator runs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gradcli.engine.core as core


def _module_level_imports(path: Path) -> set[str]:
    """The modules a file imports at its top level (not inside functions), relative ones
    as ``.name``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names |= {base} if node.module else {base + a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_core_does_not_import_the_rule_table_at_load_time():
    imported = _module_level_imports(Path(core.__file__))
    assert not {".rules", ".ops", "gradcli.engine.rules"} & imported, imported


def test_the_rule_table_is_found_on_first_use_in_a_fresh_process():
    # core alone first (as a module importing only it would), then an operator: the
    # table is imported on that first use and the operator gives the right number
    code = ("import importlib, sys; core = importlib.import_module('gradcli.engine.core');"
            "t = core.Tensor([1.0, 2.0]); print((t * t + t).tolist(), "
            "type(core._R).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["[2.0,", "6.0]", "module"]

"""Every function of the language has an independent reference case: an expression that
calls it in a reference file of tests/reference/ made by torch, JAX or mpmath (the file
says which: a top-level key naming the library in a JSON file or in an .npz's ``meta``,
or arrays named ``*_torch`` / ``*_jax``). The list of functions is the language's table,
so a function added to the rule table without a reference case fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from gradcli.lang.names import ALIASES, FUNCTIONS

REFERENCE = Path(__file__).parents[1] / "reference"
LIBRARIES = {"torch", "jax", "mpmath"}
CALL = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*)\s*\(")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def reference_texts(folder: Path = REFERENCE) -> dict[str, tuple[set[str], list[str]]]:
    """file name -> (the libraries that made it, every string it holds)."""
    out: dict[str, tuple[set[str], list[str]]] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            libraries = set(data) & LIBRARIES if isinstance(data, dict) else set()
            out[path.name] = (libraries, list(_strings(data)))
        elif path.suffix == ".npz":
            with np.load(path) as arrays:
                libraries = {k.rsplit("_", 1)[1] for k in arrays.files if "_" in k} & LIBRARIES
                strings: list[str] = []
                for key in arrays.files:
                    if arrays[key].dtype.kind == "U":
                        strings += [str(s) for s in np.ravel(arrays[key])]
                meta = json.loads(str(arrays["meta"])) if "meta" in arrays.files else {}
                libraries |= set(meta) & LIBRARIES
                strings += list(_strings(meta))
            out[path.name] = (libraries, strings)
    return out


def called(texts: Iterable[str]) -> set[str]:
    """The language's canonical names of the functions the texts call."""
    return {ALIASES.get(m, m) for t in texts for m in CALL.findall(t)}


def missing(functions: Iterable[str], references: dict) -> list[str]:
    """The functions that no reference file made by torch, JAX or mpmath calls."""
    covered: set[str] = set()
    for libraries, strings in references.values():
        if libraries:
            covered |= called(strings)
    return sorted(set(functions) - covered)


def test_every_function_of_the_language_has_an_independent_reference_case() -> None:
    assert missing(FUNCTIONS, reference_texts()) == []


def test_the_coverage_check_finds_a_function_without_one(tmp_path: Path) -> None:
    """A function only a sympy file or no file mentions is reported; so the test above
    can fail."""
    (tmp_path / "made_by_mpmath.json").write_text(json.dumps(
        {"mpmath": "1.3.0", "cases": [["sin(x) + ln(y)", [0.0]]]}))
    (tmp_path / "made_by_sympy.json").write_text(json.dumps(
        {"sympy": "1.14.0", "cases": ["cos(x)"]}))
    np.savez(tmp_path / "made_by_torch.npz", unary_exprs=np.array(["tanh(x)"]),
             unary_torch=np.zeros(1))
    references = reference_texts(tmp_path)
    assert missing(["sin", "log", "tanh", "cos", "erf"], references) == ["cos", "erf"]

"""Every command body receives exactly what its declaration gives it: the command's
name, the expression (when it takes one) and one keyword per declared option. A body
that needs a keyword no option gives, or an option no body parameter takes, would be a
TypeError at run time (an option added to the field commands once crashed ``critical``),
so it is caught here, for every command, before anyone runs it."""

from __future__ import annotations

import importlib
import inspect

import pytest

from gradcli.cli.definition import all_commands

#: ``--no-files`` is taken by ``calling.call`` itself, before the body runs
_TAKEN_BEFORE = {"no_files"}


def _body(command):
    module, _, name = command.run.partition(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("command", all_commands(), ids=lambda c: c.name)
def test_each_body_takes_exactly_its_declared_options(command) -> None:
    body = _body(command)
    given = {o.name: o.default_value for o in command.options if o.name not in _TAKEN_BEFORE}
    if command.takes_expression:
        given["expression"] = "x"
    signature = inspect.signature(body)
    signature.bind(command.name, **given)  # a TypeError names what does not fit
    params = list(signature.parameters.values())[1:]
    needed = {p.name for p in params if p.default is p.empty
              and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    assert needed <= set(given), f"{command.name}: no option gives {needed - set(given)}"
    if not any(p.kind is p.VAR_KEYWORD for p in params):  # nothing declared goes unused
        assert set(given) <= {p.name for p in params}, command.name

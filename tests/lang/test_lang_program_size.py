"""Programs compile in time linear in their number of steps."""

from __future__ import annotations

import numpy as np

from gradcli.lang import program as P
from gradcli.lang.tokens import tokenize


class _CountingSteps(dict):
    """The builder's table of steps, counting how many entries are read by iteration."""

    iterated = 0

    def __iter__(self):  # type: ignore[override]
        type(self).iterated += len(self)
        return super().__iter__()

    def keys(self):  # type: ignore[override]
        type(self).iterated += len(self)
        return super().keys()


def _chain(n: int) -> str:
    return "a0 = x\n" + "".join(f"a{k} = sin(a{k - 1})\n" for k in range(1, n + 1))


def test_resolving_names_does_not_scan_every_earlier_step() -> None:
    """Resolving a statement's names looks each one up: the steps defined before are never
    walked per statement, which made N steps cost N²/2 (95,000 aliases: over 100 s)."""
    text = P.ProgramText(_chain(2000), "chain.gc")
    builder = P._Builder(text)
    _CountingSteps.iterated = 0
    builder.steps = _CountingSteps()
    builder.build(P._statements(tokenize(text)))
    assert _CountingSteps.iterated <= 10 * 2000


def test_a_long_chain_of_steps_still_resolves_each_name_to_its_step() -> None:
    """Each aK = sin(aK-1) refers to the step before it: the value is sin applied N times."""
    import gradcli

    n = 300
    got = gradcli.evaluate(P.ProgramText(_chain(n), "chain.gc"), "grad", at={"x": 1.0})
    value, slope = 1.0, 1.0
    for _ in range(n):
        value, slope = np.sin(value), slope * np.cos(value)
    assert np.isclose(got["f"], value, rtol=1e-14, atol=0)
    assert np.isclose(got["df/dx"], slope, rtol=1e-12, atol=0)

"""The README's examples of critical, descend and flow print what the commands print."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gradcli.cli.main import main

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Where the field leads"):README.index(
    "## The expression language")]
# an indented "$ gradcli critical|descend|flow ..." line, its output up to a blank line
EXAMPLES = re.findall(r"^    \$ (gradcli (?:critical|descend|flow) [^\n]*)\n((?:    [^\n]+\n)+)",
                      SECTION, flags=re.MULTILINE)


def test_the_section_has_its_three_examples():
    assert [shlex.split(cmd)[1] for cmd, _ in EXAMPLES] == ["critical", "descend", "flow"]


@pytest.mark.parametrize("command, shown", EXAMPLES, ids=lambda v: str(v)[:40])
def test_readme_example_output(capsys, command, shown):
    assert main(shlex.split(command)[1:]) == 0
    out, err = capsys.readouterr()
    lines = [ln[4:] for ln in shown.splitlines()]
    printed = out.splitlines() + err.splitlines()
    assert printed == lines

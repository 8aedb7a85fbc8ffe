"""Free text options (--title): control characters refused, other text safe in SVG, and
no matplotlib warning on stderr."""

from __future__ import annotations

import importlib
import xml.dom.minidom

import pytest

importlib.import_module("matplotlib")


@pytest.mark.parametrize("title, code", [
    ("X\x1b]0;PWNED\x07", "U+001B"), ("a\x07b", "U+0007"), ("line\nbreak", "U+000A"),
    ("nul\x00", "U+0000"), ("c1\x9b", "U+009B"), ("del\x7f", "U+007F")])
def test_control_characters_in_a_title_are_refused(cli, tmp_path, title, code):
    """Exit 2, one line naming the option and the code point, no raw control character on
    stderr, no file."""
    target = tmp_path / "t.svg"
    status, out, err = cli("plot", "x^2", "--grid", "x=0:1:5", "--title", title,
                           "-o", str(target))
    assert status == 2 and out == ""
    assert "--title" in err and code in err and err.count("\n") == 1
    assert not any(ord(c) < 32 and c != "\n" for c in err)
    assert not target.exists()


@pytest.mark.parametrize("argv", [
    ["x^2", "--grid", "x=0:1:5"],
    ["sin(x)*cos(y)", "--grid", "x=0:1:9", "--grid", "y=0:1:9"],
])
@pytest.mark.parametrize("title", ['a <b> & "c" \'d\' ]]>', "日本語 ☃ 𝔣(x)", "<!-- x -->"])
def test_every_svg_parses_as_xml_and_stderr_stays_clean(cli, tmp_path, argv, title):
    """Markup characters and glyphs missing from the font: the SVG is well-formed XML and
    matplotlib's 'Glyph missing' warnings do not reach stderr."""
    target = tmp_path / "t.svg"
    status, out, err = cli("plot", *argv, "--title", title, "-o", str(target))
    assert (status, out, err) == (0, "", "")
    xml.dom.minidom.parse(str(target))  # raises if not well-formed

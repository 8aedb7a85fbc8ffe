"""mkdocs hooks: the site's home page is README.md (docs/index.md is its placeholder), whose
links point into docs/ from the repository root; on the site they point from docs/ itself."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"

_ROOT_FILES = {"SECURITY.md": "security.md", "CHANGELOG.md": "changelog.md"}


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 - mkdocs API
    """The home page: README.md, its repository-relative links rewritten."""
    if page.file.src_uri != "index.md":
        return markdown
    markdown = README.read_text(encoding="utf-8")

    def link(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if target.startswith("docs/"):
            target = target[len("docs/"):] or "index.md"
        elif target in _ROOT_FILES:
            target = _ROOT_FILES[target]
        elif target == "LICENSE":
            return text
        return f"[{text}]({target})"

    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s#]+)\)", link, markdown)

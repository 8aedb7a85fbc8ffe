"""Regenerate the pictures in samples/ by running the gradcli CLI on each command listed in
samples/README.md (``make samples``). Run from anywhere: ``python samples/make_samples.py``.

The README is the single source of truth: every line of the form
``gradcli plot ... -o samples/NAME.png`` inside a ```` ```sh ```` block is run as is, so
the commands shown are exactly the commands behind the pictures.
"""

from __future__ import annotations

import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COMMAND = re.compile(r"^gradcli plot .*$", re.MULTILINE)


def commands(readme: str) -> list[list[str]]:
    """The argument lists of the ``gradcli plot`` lines in the README's sh blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.DOTALL)
    return [shlex.split(line)[1:] for block in blocks for line in COMMAND.findall(block)]


def main() -> int:
    """Run every listed command from the repository root; stop at the first failure."""
    sys.path.insert(0, ROOT)
    from gradcli.cli.main import main as gradcli

    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
        todo = commands(handle.read())
    if not todo:
        print("samples/README.md lists no gradcli plot commands", file=sys.stderr)
        return 1
    os.chdir(ROOT)
    for args in todo:
        print("gradcli " + shlex.join(args), flush=True)
        status = gradcli([*args, "--quiet"])
        if status:
            print(f"failed with exit status {status}", file=sys.stderr)
            return status
    print(f"{len(todo)} pictures in samples/")
    return 0


if __name__ == "__main__":
    sys.exit(main())

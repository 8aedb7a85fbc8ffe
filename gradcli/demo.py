"""``make demo``: gradcli's main jobs on built-in examples, run through the real CLI.

Files the demo writes go to a fresh temporary directory, whose path it prints: a run never
overwrites anything, and two runs never share a file.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile

EXAMPLES = [
    ["grad", "x^2 + 3x + 1", "--at", "x=4", "-f", "table"],
    ["grad", "x^2", "--grid", "x=-2:2:5", "-f", "table"],
    ["jacobian", "[-x^3, 5x]", "--at", "x=0", "--at", "x=1", "--at", "x=2", "-f", "table"],
    ["jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]", "-f", "csv"],
    ["vjp", "[-x^3, 5x]", "--vector", "1,0", "--at", "x=1", "-f", "table"],
    ["hessian", "sin(x)*cos(y)", "--at", "x=pi/4,y=pi/3", "-f", "table"],
    ["graph", "4*(x^2 + x)", "--at", "x=3"],
    ["grad", "sin(x)*cos(y)", "--grid", "-f", "table"],
]


def main() -> int:
    """Run each example through the real CLI entry point, echoing the command first."""
    from .cli.main import main as cli

    os.environ.setdefault("COLUMNS", "110")
    status = 0
    examples = list(EXAMPLES)
    directory = tempfile.mkdtemp(prefix="gradcli-demo-")
    picture = os.path.join(directory, "field.png")
    examples.append(["plot", "sin(x)*cos(y)", "--grid", "x=0:2pi:100", "--grid",
                     "y=0:2pi:100", "-o", picture])
    for args in examples:
        sys.stdout.write(f"\n$ gradcli {shlex.join(args)}\n")
        sys.stdout.flush()
        code = cli(args)
        sys.stdout.flush()
        if code != 0:
            status = code
    sys.stdout.write(f"\nthe demo's files are in {directory}: wrote {picture}\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

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
    ["graph", "m = x^2; y = m + x; p = 4*y", "--at", "x=3"],
    ["grad", "z = w*x + b; p = sigmoid(z); -(t*log(p) + (1-t)*log(1-p))",
     "--at", "w=0.5,x=2,b=0.1,t=1", "-f", "table"],
    ["grad", "logsumexp(z)", "--at", "z=[1000,1000]", "-f", "table"],
    ["div", "[x*y, x-y, z^2]", "--at", "x=1,y=2,z=3", "-f", "table"],
    ["laplacian", "exp(-(x^2+y^2))", "--at", "x=0.5,y=0.5", "-f", "table"],
    ["taylor", "exp(x)*sin(y)", "--at", "x=0,y=0", "--order", "3", "--polynomial"],
    ["critical", "x^3 - 3x + y^3 - 3y", "--grid", "x=-3:3:13", "--grid", "y=-3:3:13",
     "-f", "table"],
    ["grad", "sin(x)*cos(y)", "--grid", "-f", "table"],
]


def main() -> int:
    """Run each example through the real CLI entry point, echoing the command first."""
    from gradcli.cli.main import main as cli

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

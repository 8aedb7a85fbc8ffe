"""The ``gradcli`` console script: argv in, exit status out, never a traceback.

Exit status: 0 success, 2 bad usage or input, 1 runtime failure (I/O, --check, --strict),
130 interrupted. ``--debug`` anywhere on the command line shows tracebacks.
"""

from __future__ import annotations

import sys

USAGE = """\
gradcli: derivatives, gradients, Jacobians and gradient-field pictures of a formula.

Usage: gradcli COMMAND EXPRESSION [--at POINT | --grid SPEC ... | --points FILE] [OPTIONS]

Examples:
  gradcli grad "x^2 + 3x + 1" --at x=4
  gradcli grad "sin(x)*cos(y)" --grid
  gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o field.png

Commands: eval grad jacobian vjp jvp hessian graph plot   (gradcli COMMAND --help)
"""

BARE_GRID = "*"  # what a bare --grid becomes: "every other free variable, default range"


def normalize_argv(argv: list[str]) -> list[str]:
    """Let ``--grid``/``-g`` stand alone: a bare one becomes ``--grid=*``.

    A grid spec always contains '=', so a following word without one (the expression, or
    another option) is not its value.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--grid", "-g"):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is None or nxt.startswith("-") or "=" not in nxt:
                out.append(f"--grid={BARE_GRID}")
                i += 1
                continue
        out.append(arg)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return (or, as a console script, exit with) its status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stdout.write(USAGE)
        return 0
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    from .errors import guarded
    from .fast import fast_plot, fast_points, run_fast, run_fast_plot

    points, plot = fast_points(args), fast_plot(args)
    if points is not None:  # COMMAND EXPR --at POINT...: the same run, without typer
        status = guarded(lambda: run_fast(args, points), debug)
    elif plot is not None:  # plot EXPR --grid SPEC... -o FILE: likewise
        status = guarded(lambda: run_fast_plot(args, *plot), debug)
    else:
        from .app import run_app

        status = run_app(normalize_argv(args), debug=debug)
    if argv is None:
        sys.exit(status)
    return status


if __name__ == "__main__":  # pragma: no cover
    main()

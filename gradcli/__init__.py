"""gradcli: derivatives from the command line, on a PyTorch-style autograd engine over numpy.

``import gradcli as gc`` gives the engine (``gc.tensor``, ``gc.sin``, ``gc.autograd.grad``,
``gc.functional``...), ``gc.evaluate``, the expression evaluator the CLI uses,
``gc.propagate`` (measurement uncertainty through a formula: GUM, JCGM 101), ``gc.formula``
(the derivatives as expressions) and
``gc.to_xarray`` for its results; ``gc.critical``, ``gc.descend`` and ``gc.flow`` (where a
field leads), ``gc.implicit`` (implicit differentiation), ``gc.curvilinear`` (grad, div,
curl and the Laplacian in polar, cylindrical and spherical coordinates), ``gc.integrate``
(line integrals and flux) and ``gc.plot``.
Their results show themselves in Jupyter.
"""

from typing import Any

from gradcli._version import __version__
from gradcli.engine import *  # noqa: F403
from gradcli.engine import __all__ as _engine_all

__all__ = [*_engine_all, "evaluate", "formula", "propagate", "to_xarray",  # noqa: F405
           "critical", "descend", "flow", "implicit", "curvilinear", "integrate", "plot",
           "__version__"]  # the lazy ones are in __getattr__


def __getattr__(name: str) -> Any:
    # the evaluation layer is imported on first use so `import gradcli` stays lean
    if name in ("evaluate", "propagate", "critical", "descend", "flow", "implicit",
                "curvilinear", "integrate"):
        # results that show themselves (Jupyter tables): gradcli/api.py
        from gradcli import api

        return getattr(api, name)
    if name == "plot":  # the plot package, callable: gradcli.plot(expression, grid=...)
        import importlib

        return importlib.import_module(".plot", __name__)
    if name == "formula":  # derivative formulas, a request run by the executor (api.py)
        from gradcli.api import formula

        return formula
    if name == "to_xarray":  # needs the data extra (xarray): imported on first use
        from gradcli.output.dataset import to_xarray

        return to_xarray
    # the console script's entry point (``gradcli:main``), imported only when asked for:
    # ``import gradcli`` as a library loads no command-line code
    if name == "main":
        from gradcli.cli.main import main

        return main
    raise AttributeError(f"module 'gradcli' has no attribute {name!r}")

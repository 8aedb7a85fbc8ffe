"""gradcli: derivatives from the command line, on a PyTorch-style autograd engine over numpy.

``import gradcli as gc`` gives the engine (``gc.tensor``, ``gc.sin``, ``gc.autograd.grad``,
``gc.functional``...) and ``gc.evaluate``, the expression evaluator the CLI uses.
"""

from typing import Any

from .engine import *  # noqa: F403
from .engine import __all__ as _engine_all

__version__ = "0.1.0"
__all__ = [*_engine_all, "evaluate", "__version__"]  # noqa: F405 - evaluate is lazy


def __getattr__(name: str) -> Any:
    # the evaluation layer is imported on first use so `import gradcli` stays lean
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    # the console script's entry point (``gradcli:main``), imported only when asked for:
    # ``import gradcli`` as a library loads no command-line code
    if name == "main":
        from .cli.main import main

        return main
    raise AttributeError(f"module 'gradcli' has no attribute {name!r}")

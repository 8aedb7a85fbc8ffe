"""The version of gradcli, defined once: the package metadata (pyproject), `gradcli --version`
and `gradcli.__version__` read it from here."""

__version__ = "0.1.0"

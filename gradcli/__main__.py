"""``python -m gradcli`` runs the CLI."""

from .cli.main import main

main()

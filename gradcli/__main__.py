"""``python -m gradcli`` runs the CLI."""

from gradcli.cli.main import main

main()

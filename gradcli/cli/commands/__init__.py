"""The command bodies: one module per kind of command, each called by the declaration
(``cli/definition.py``) through its ``run`` path, so only the command that runs is imported."""

"""Where a field leads: critical points, descent paths and flows (``gradcli critical``,
``descend``, ``flow``), over formulas replayed with ``engine.trace``."""

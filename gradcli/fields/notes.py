"""The notes of ``critical``, ``descend`` and ``flow``: why runs stopped, what was found.

One definition for both front ends: the command line prints these lines on stderr (and
puts them in a JSON file's ``notes``), the library returns them as the result's
``notes``. Parameters are named with ``ref`` (``lang.errors``), so each front end says them
in its own words: the command line names the option it declares for ``steps``,
Python says ``steps=5`` (``render_references``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.errors import ref

__all__ = ["critical_notes", "descend_notes", "flow_notes"]


def critical_notes(found: Any, box: Any) -> list[str]:
    """``no critical points found ...`` when none were, else nothing."""
    if len(found):
        return []
    where = "inside the grid's box" if box is not None else "from these seeds"
    return [f"no critical points found {where}"]


def descend_notes(path: Any, tol: float | None, steps: int, maximize: bool = False
                  ) -> list[str]:
    """One line: why the runs stopped (where, and |grad f| there)."""
    better = "raises" if maximize else "lowers"
    stops, where, gn = path.stop, path.stop_step, path.final_gnorm
    steps_ref = ref("steps", text=str(steps), python=str(steps))
    tol_ref = ref("tol", text=f"{tol:g}", python=f"{tol:g}") if tol is not None else ""
    if len(stops) == 1:
        k, reason, g = int(where[0]), stops[0], gn[0]
        if reason == "steps":
            return [f"stopped at step {k}: {steps_ref} reached (|grad f| = {g:.3g})"]
        if reason == "tol":
            return [f"stopped at step {k}: |grad f| = {g:.3g} <= {tol_ref}"]
        if reason == "stalled":
            return [f"stopped at step {k}: no step {better} f (|grad f| = {g:.3g})"]
        return [f"diverged at step {k}: a value is no longer finite"]
    parts = []
    for reason, text in (("tol", f"reached {ref('tol')}"), ("steps", f"ran {steps_ref}"),
                         ("stalled", f"stopped where no step {better} f")):
        pick = stops == reason
        if pick.any():
            parts.append(f"{int(pick.sum())} {text} (by step {int(where[pick].max())})")
    bad = np.flatnonzero(stops == "diverged")
    if bad.size:
        first = bad[np.argmin(where[bad])]
        parts.append(f"{bad.size} diverged (first: run {first} at step {int(where[first])}, "
                     "a value no longer finite)")
    return [f"{len(stops)} runs: " + "; ".join(parts)]


def flow_notes(paths: Any, tol: float | None, many: bool, method: str, t0: float,
               t1: float) -> tuple[list[str], str | None]:
    """(the notes, the divergence line or None): dopri5's step count, the runs that ended
    before the last time (and why), and where a run left the finite numbers."""
    notes = []
    if method == "dopri5":
        notes.append(f"dopri5: {paths.accepted:,} steps taken ({paths.rejected:,} rejected)")
    line = _flow_stops(paths, tol, many)
    if line:
        notes.append(line)
    diverged = None
    if paths.diverged.any():
        runs = np.flatnonzero(paths.diverged)
        first = runs[np.argmin(paths.t_end[runs] * np.sign(t1 - t0))]
        who = f"run {first}" if many else "the trajectory"
        diverged = (f"diverged: {who} leaves the finite numbers at t = {paths.t_end[first]:g}"
                    + (f" (time step {int(paths.end[first])})" if method != "dopri5" else "")
                    + (f"; {runs.size} runs in all" if runs.size > 1 else ""))
    return notes, diverged


def _flow_stops(paths: Any, tol: float | None, many: bool) -> str:
    """One line on the runs that ended before the last time for another reason than a
    non-finite value (said on its own line), or '' when none did."""
    texts = {"fixed": f"|F| <= {ref('tol', text=f'{tol:g}', python=f'{tol:g}')}"
             if tol is not None else "",
             "left": f"left the {ref('box')}",
             "stalled": "dopri5's step became too small to advance"}
    if not many:
        why = paths.reason[0] if len(paths.reason) else "end"
        if why not in texts:
            return ""
        return f"stopped at t = {paths.t_end[0]:g}: {texts[why]}"
    parts = []
    for why, text in texts.items():
        pick = paths.reason == why
        if pick.any():
            parts.append(f"{int(pick.sum())} {text}")
    return f"{len(paths.reason)} runs: " + "; ".join(parts) if parts else ""

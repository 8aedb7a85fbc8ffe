"""Markdown tables and the goals section, computed from one run's rows."""

from __future__ import annotations

from dataclasses import dataclass

from .measure import Row


def _num(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def _secs(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.4f}" if v < 10 else f"{v:.1f}"


def _correct(row: Row) -> str:
    if row.correct is None:
        return "—"
    return "✓" if row.correct else "✗"


def table(title: str, rows: list[Row], base: str, base_label: str) -> str:
    """One markdown table; ``base`` is the row the ratio column divides by."""
    ref = next((r for r in rows if r.tool == base and r.median), None)
    head = (f"### {title}\n\n| tool | median s | min s | runs | time / {base_label} "
            "| peak RSS MiB | RSS after import MiB | max rel err | correct | note |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|:---:|---|\n")
    lines = []
    for r in rows:
        if r.status in ("not installed", "skipped") or (r.status == "error" and not r.times):
            what = r.status if r.status != "error" else "failed"
            lines.append(f"| {r.tool} | {what} | — | — | — | {_num(r.peak_mib)} | — | — | — "
                         f"| {r.note} |")
            continue
        ratio = (f"{r.median / ref.median:.2f}×" if ref and r.median else "—")
        rel = "—" if r.rel_err is None else f"{r.rel_err:.1e}"
        note = r.note if r.status == "ok" else f"{r.status}: {r.note}"
        lines.append(f"| {r.tool} | {_secs(r.median)} | {_secs(min(r.times))} | {len(r.times)} "
                     f"| {ratio} | {_num(r.peak_mib)} | {_num(r.import_mib)} | {rel} "
                     f"| {_correct(r)} | {note} |")
    return head + "\n".join(lines) + "\n"


@dataclass
class Goal:
    text: str
    table: str                  # key of the table holding both rows
    ours: str                   # gradcli's row
    theirs: tuple[str, ...]     # the peer rows (the best one counts); () = absolute limit
    limit: float
    metric: str = "time"        # time | rss


def _value(row: Row, metric: str) -> float | None:
    return row.median if metric == "time" else row.peak_mib


def evaluate_goal(goal: Goal, tables: dict[str, list[Row]]) -> tuple[str, str]:
    """(measured ratio or value as text, verdict)."""
    rows = tables.get(goal.table)
    if rows is None:
        return "—", "n/a (not run: add --scale)" if goal.table == "scale" else "n/a (not run)"
    by_tool = {r.tool: r for r in rows}
    ours = by_tool.get(goal.ours)
    if ours is None or ours.status == "skipped":
        return "—", "n/a (not run)" if ours is None else "n/a (gradcli row skipped)"
    mine = _value(ours, goal.metric) if ours.status == "ok" else None
    if mine is None:
        return "—", "missed (gradcli failed)"
    wrong = " (gradcli ✗)" if ours.correct is False else ""
    if not goal.theirs:
        shown = f"{mine:.0f} MiB" if goal.metric == "rss" else f"{mine:.2f} s"
        return shown, ("met" if mine <= goal.limit and not wrong else "missed") + wrong
    peers = [by_tool[t] for t in goal.theirs if t in by_tool]
    if not peers or all(p.status == "not installed" for p in peers):
        return "—", "n/a (peer missing)"
    usable = [p for p in peers if p.status == "ok" and _value(p, goal.metric)]
    if not usable:
        return "—", "n/a (peer failed)"
    best = min(usable, key=lambda p: _value(p, goal.metric))
    ratio = mine / _value(best, goal.metric)
    peer_wrong = " (peer ✗)" if best.correct is False else ""
    verdict = "met" if ratio <= goal.limit and not wrong else "missed"
    against = f" vs {best.tool}" if len(goal.theirs) > 1 else ""
    return f"{ratio:.2f}×{against}", verdict + wrong + peer_wrong


def goals(w1: str, w2: str, w3: str, w6: str, scale_n: int, cold_lines: list[str],
          quick: bool = False, points_mib: float = 0.0) -> list[Goal]:
    """The targets, keyed to this run's case names (quick runs use small sizes)."""
    torch3 = ("torch", "torch.func vmap(jacrev)")
    return [
        Goal(f"{w1}: gradcli time ≤ 0.33× torch", w1, "gradcli", ("torch",), 0.33),
        Goal(f"{w1}: gradcli time ≤ 1.5× separable numpy", w1, "gradcli",
             ("numpy (separable outer)",), 1.5),
        Goal(f"{w1}: gradcli peak RSS ≤ 0.5× torch's", w1, "gradcli", ("torch",), 0.5,
             "rss"),
        Goal(f"{w2}: gradcli time ≤ 1.0× JAX jit", w2, "gradcli", ("jax jit",), 1.0),
        Goal(f"{w3}: gradcli time ≤ 1.5× JAX jit", w3, "gradcli", ("jax jit",), 1.5),
        Goal(f"{w3}: gradcli time ≤ 0.6× torch (faster torch variant)", w3, "gradcli",
             torch3, 0.6),
        Goal(f"{w6}: gradcli time ≤ 1.0× torch", w6, "gradcli", ("torch",), 1.0),
        *(Goal(f"cold `{line}` ≤ 1.5× python -c \"import numpy\"", "cold", line,
               ('python -c "import numpy"',), 1.5) for line in cold_lines),
        Goal("plot ≤ 1.15× bare matplotlib", "plot", "gradcli plot",
             ("bare matplotlib (Figure API)",), 1.15),
        Goal("plot -o field.html ≤ 1.5× the PNG's time", "plot", "gradcli plot -o field.html",
             ("gradcli plot",), 1.5),
        *io_goals(quick, points_mib),
        *arrays_goals(quick),
        *fields_goals(quick),
        Goal(f"scale: {scale_n}×{scale_n} grad to .npy, peak RSS ≤ 1024 MiB", "scale", "", (),
             1024.0, "rss"),
    ]


def io_goals(quick: bool, points_mib: float) -> list[Goal]:
    """Issues 12.6, 12.8, 12.23 and 18: points files, CSV writing, .npz, wide files."""
    from .io_speed import io_names

    n = io_names(quick)
    return [
        Goal(f"read {n['rows']} points CSV: gradcli ≤ 1.0× numpy.loadtxt's time", "read",
             "gradcli read_points", ("numpy.loadtxt",), 1.0),
        Goal(f"read {n['rows']} points CSV: gradcli ≤ 1.0× polars.read_csv's time", "read",
             "gradcli read_points", ("polars.read_csv",), 1.0),
        Goal(f"read {n['rows']} points CSV: peak RSS ≤ 2× the file ({points_mib:.0f} MiB)",
             "read", "gradcli read_points", (), 2 * points_mib, "rss"),
        Goal(f"write {n['grid']} grad CSV: gradcli ≤ 1.0× polars write_csv's time (same "
             "bytes as the baseline: ✓ column)", "write", "gradcli write_csv",
             ("polars write_csv",), 1.0),
        Goal(f"12.6: one-point grad of a {n['vector']}-vector from -p to .npz ≤ 2 s", "npz",
             n["vector_row"], (), 2.0),
        Goal(f"12.23: {n['wide']} columns take ≤ 5× the time of {n['narrow']} (linear)", "wide",
             n["wide_row"], (n["narrow_row"],), 5.0),
    ]


def arrays_goals(quick: bool) -> list[Goal]:
    """Issue 14: a one-point grad of a 10⁶-vector from a file, beside torch."""
    from .arrays_speed import row_name

    npy = row_name("gradcli --at x=@vec.npy", quick)
    torch = row_name("torch (load .npy, logsumexp, backward, savez)", quick)
    return [
        Goal("14: one-point grad logsumexp(x) of a 10⁶-vector from @vec.npy to .npz ≤ 0.5 s",
             "arrays", npy, (), 0.5),
        Goal("14: the same ≤ 1.0× torch's time (fresh processes)", "arrays", npy, (torch,),
             1.0),
    ]


def fields_goals(quick: bool) -> list[Goal]:
    """Issue 16: descent paths against torch.optim, critical points from a cold start."""
    from .fields_speed import names

    n = names(quick)
    return [
        Goal(f"16: {n['adam']} on Rosenbrock from one start ≤ 0.5× torch's loop", "adam",
             "gradcli descend", ("torch (loop)",), 0.5),
        Goal(f"16: {n['grid']} (Adam) ≤ 1.0× the vectorised torch loop", "grid",
             "gradcli descend", ("torch (x, y of shape (N,))", "torch (one (N, 2) parameter)"),
             1.0),
        Goal("16: critical on Himmelblau, 50 × 50 seeds, fresh process ≤ 0.5 s", "critical",
             "gradcli critical", (), 0.5),
    ]


def goals_section(goal_list: list[Goal], tables: dict[str, list[Row]]) -> tuple[str, list]:
    out = ["### Goals (ratios from this run)\n", "| goal | measured | verdict |",
           "|---|---:|---|"]
    data = []
    for g in goal_list:
        if g.table == "scale" and "scale" in tables:
            g.ours = tables["scale"][0].tool
        measured, verdict = evaluate_goal(g, tables)
        mark = "✅ " if verdict.startswith("met") else ("❌ " if verdict.startswith("missed")
                                                        else "")
        out.append(f"| {g.text} | {measured} | {mark}{verdict} |")
        data.append({"goal": g.text, "measured": measured, "verdict": verdict})
    return "\n".join(out) + "\n", data

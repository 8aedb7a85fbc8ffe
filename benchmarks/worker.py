"""One (workload case, tool) measurement, in a fresh process: ``python -m benchmarks.worker``.

Arguments: a JSON spec ``{"case", "tool", "quick", "warmup", "repeat"}`` and the path of
the JSON report to write. The tool is set up (imports, jit definitions) untimed, run
``warmup`` times untimed (JAX compiles here), then ``repeat`` times timed; the last
result is checked against the analytic derivatives block by block. Results are dropped
between runs so the process's peak RSS is one run's worth. The launcher around this
process reports its peak too, but this report's ``peak_kib`` (VmHWM, taken before the
check) is the one used: it is this process's own and excludes the check's temporaries.
"""

from __future__ import annotations

import gc
import json
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from . import peers, workloads
from .workloads import Case

TOOLS = {
    "gradcli": workloads.gradcli_tool,
    "numpy (analytic)": workloads.numpy_tool,
    "numpy (meshgrid, naive)": workloads.numpy_meshgrid_tool,
    "numpy (separable outer)": workloads.numpy_separable_tool,
    "torch": peers.torch_tool,
    "torch.func vmap(jacrev)": peers.torch_func_tool,
    "jax jit": peers.jax_tool,
    "autograd": peers.autograd_tool,
}

# which tools each workload runs, and which library each needs
PLAN = {
    "W1": ["gradcli", "numpy (meshgrid, naive)", "numpy (separable outer)", "torch",
           "jax jit", "autograd"],
    "W2": ["gradcli", "numpy (analytic)", "torch", "jax jit", "autograd"],
    "W3": ["gradcli", "numpy (analytic)", "torch", "torch.func vmap(jacrev)", "jax jit",
           "autograd"],
    "W6": ["gradcli", "numpy (analytic)", "torch", "jax jit", "autograd"],
}
LIBRARY = {"torch": "torch", "torch.func vmap(jacrev)": "torch", "jax jit": "jax",
           "autograd": "autograd"}


def _hwm_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def measure(case: Case, tool: str, warmup: int, repeat: int) -> dict:
    return timed(lambda: TOOLS[tool](case), lambda r: workloads.check(case, r), warmup, repeat)


def timed(make: Callable[[], Callable[[], Any]], check: Callable[[Any], tuple[bool, float, str]],
          warmup: int, repeat: int) -> dict:
    """Set up (``make``), run ``warmup`` times untimed, ``repeat`` times timed, then
    ``check`` the last result: the report every worker writes."""
    try:
        fn = make()
    except ImportError as exc:
        return {"status": "not installed", "note": str(exc)}
    import_kib = _hwm_kib()
    times = []
    result = None
    for i in range(warmup + repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        if i >= warmup:
            times.append(elapsed)
        if i < warmup + repeat - 1:
            del result
    peak_kib = _hwm_kib()  # before the check, whose temporaries are not the tool's
    ok, rel, note = check(result)
    return {"status": "ok", "times": times, "correct": ok, "rel_err": rel, "note": note,
            "import_kib": import_kib, "peak_kib": peak_kib}


def main() -> None:
    spec = json.loads(sys.argv[1])
    try:
        if spec.get("suite") == "calculus":  # issue 15's workloads, in their own module
            from .calculus import measure_case as measure_suite

            report = measure_suite(spec["case"], spec["tool"], spec.get("quick", False),
                                   spec.get("warmup", 1), spec.get("repeat", 3))
        else:
            case = workloads.find_case(spec["case"], spec.get("quick", False))
            report = measure(case, spec["tool"], spec.get("warmup", 1), spec.get("repeat", 3))
    except Exception as exc:  # a tool failing is a result, not a harness crash
        tb = traceback.format_exc().strip().splitlines()
        report = {"status": "error", "note": f"{type(exc).__name__}: {exc}"[:300],
                  "traceback": tb[-12:]}
    with open(sys.argv[2], "w") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    main()

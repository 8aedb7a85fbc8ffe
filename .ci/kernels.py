"""The documentation's examples and the tests that compare printed numbers, run again where
the machine rounds differently: under an OpenBLAS kernel other than the one this run got,
and with numpy's AVX-512 code switched off. A page or a test that shows one machine's
rounding as a result fails here, not on a user's machine (`make test-kernels`, after
`make test` in .ci/run).

* The kernel pass: OpenBLAS (numpy's own copy) picks its kernel by CPU; OPENBLAS_CORETYPE
  overrides it. Tried in turn: SkylakeX (only where the CPU has AVX-512), Haswell, and the
  variable unset (where the environment sets it, as some machines set Haswell); the first
  whose kernel differs from this run's, read back from OpenBLAS itself, is used. Where
  none differs, one line says the pass is skipped.
* The SIMD pass: NPY_DISABLE_CPU_FEATURES naming every AVX-512 feature numpy reports and
  dispatches code for (numpy 2.4 groups them as X86_V4), checked to be off in the child;
  skipped, with one line, where there is none.

Run with the project's venv python; it prints what it runs and exits non-zero when a pass
fails.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The pages' examples (every ```console block compares what it prints), and the test files
# that compare printed digits or values near rounding: the evaluation's numbers against
# references, the fields (critical points, flows, descents as torch.optim's iterates), the
# output writers' text and the CLI's tables. About a minute a pass on an idle machine.
# (All of tests/cli, tests/evaluation and tests/output passed under both passes when this
# list was made: these are the files where a difference would show first.)
TARGETS = [
    "README.md", "docs",
    "tests/evaluation/test_numerical_truth.py",
    "tests/fields/test_fields_critical.py",
    "tests/fields/test_fields_critical_types.py",
    "tests/fields/test_fields_flow.py",
    "tests/fields/test_fields_descend.py",
    "tests/fields/test_fields_descend_torch.py",
    "tests/uncertainty/test_uncertainty_propagate.py",
    "tests/evaluation/test_awkward_points.py",
    "tests/cli/test_cli_commands.py",
    "tests/cli/test_cli_propagate.py",
    "tests/output/test_output_float_tables.py",
    "tests/output/test_output_csv.py",
    "tests/output/test_output_table.py",
    "tests/output/test_output_display.py",
]

_PROBE_CORE = r"""
import ctypes, numpy as np
np.linalg.solve(np.eye(2), np.ones(2))  # OpenBLAS is loaded and has picked its kernel
names = ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
         "openblas_get_corename64_", "openblas_get_corename")
paths = {line.split()[-1] for line in open("/proc/self/maps")
         if "openblas" in line.lower() and line.split()[-1].startswith("/")}
for path in sorted(paths):
    lib = ctypes.CDLL(path)
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            print(fn().decode())
            raise SystemExit(0)
print("")
"""

# numpy's AVX-512 code paths still on: its dispatch targets that need AVX-512 (numpy keeps
# reporting the CPU's own features as present; a disabled target reads False)
_PROBE_SIMD = r"""
from numpy._core._multiarray_umath import __cpu_dispatch__ as targets, __cpu_features__ as f
print(" ".join(k for k in targets if ("AVX512" in k or k == "X86_V4") and f.get(k)))
"""


def _probe(code: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120)
    return done.stdout.strip() if done.returncode == 0 else ""


def avx512_features() -> list[str]:
    """The AVX-512 features numpy reports on this CPU among those it dispatches code for
    (AVX512_SKX, AVX512_ICL, ...; X86_V4 is numpy 2.4's group of them): the names
    NPY_DISABLE_CPU_FEATURES takes."""
    from numpy._core._multiarray_umath import __cpu_dispatch__ as targets
    from numpy._core._multiarray_umath import __cpu_features__ as features

    return [k for k in targets if ("AVX512" in k or k == "X86_V4") and features.get(k)]


def other_kernel(env: dict[str, str]) -> tuple[dict[str, str] | None, str]:
    """An environment whose OpenBLAS kernel differs from ``env``'s, and what it is; or None
    and why there is none."""
    here = _probe(_PROBE_CORE, env)
    if not here:
        return None, "OpenBLAS's kernel cannot be read on this machine"
    tries: list[tuple[str, str | None]] = []
    if platform.machine() in ("x86_64", "AMD64"):
        if avx512_features():
            tries.append(("OPENBLAS_CORETYPE=SkylakeX", "SkylakeX"))
        tries.append(("OPENBLAS_CORETYPE=Haswell", "Haswell"))
    elif platform.machine() in ("aarch64", "arm64"):
        tries.append(("OPENBLAS_CORETYPE=ARMV8", "ARMV8"))
    if "OPENBLAS_CORETYPE" in env:
        tries.append(("OPENBLAS_CORETYPE unset", None))
    for label, value in tries:
        trial = {k: v for k, v in env.items() if k != "OPENBLAS_CORETYPE"}
        if value is not None:
            trial["OPENBLAS_CORETYPE"] = value
        got = _probe(_PROBE_CORE, trial)
        if got and got != here:
            return trial, f"{label} (kernel {got}; this run's: {here})"
    return None, f"no second OpenBLAS kernel runs on this CPU (this run's: {here})"


def run_pass(title: str, env: dict[str, str]) -> bool:
    print(f"== {title}", flush=True)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *TARGETS], cwd=ROOT, env=env)
    print(f"== {title}: {'passed' if done.returncode == 0 else 'FAILED'} in "
          f"{time.monotonic() - start:.0f} s", flush=True)
    return done.returncode == 0


def main() -> int:
    env = dict(os.environ)
    ok = True
    kernel_env, what = other_kernel(env)
    if kernel_env is None:
        print(f"kernel pass skipped: {what}")
    else:
        ok &= run_pass(f"kernel pass: {what}", kernel_env)
    features = avx512_features()
    if not features or not _probe(_PROBE_SIMD, env):
        print("AVX-512 pass skipped: numpy runs no AVX-512 code on this CPU")
    else:
        simd_env = dict(env, NPY_DISABLE_CPU_FEATURES=" ".join(features))
        left = _probe(_PROBE_SIMD, simd_env)
        if left:
            print(f"AVX-512 pass: NPY_DISABLE_CPU_FEATURES left numpy's {left} code on")
            return 1
        ok &= run_pass(f"AVX-512 pass: NPY_DISABLE_CPU_FEATURES={' '.join(features)}",
                       simd_env)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

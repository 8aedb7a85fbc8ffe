"""Generate tests/reference/optim_paths.json: torch.optim's iterates, step by step.

Run with the peers' venv (torch), from the repository root:

    /work/peers-venv/bin/python tests/reference/make_optim.py

The tests never import torch: ``tests/fields/test_fields_descend_torch.py`` reads the JSON this
writes and checks that ``gradcli descend`` gives every iterate of every case to 1e-12
(relative, per iterate). Each function is written twice below, as gradcli's text and as
the same operations on torch tensors; each case runs ``torch.optim.<Optimizer>`` with
``foreach=False`` (torch's single-tensor code, its default on the CPU) on one 0-d float64
parameter per variable, calling ``zero_grad``, ``f(...).backward()`` and ``step`` per
update, exactly the loop a user writes. Iterates are written with ``repr`` (exact).

torch's CPU kernels fuse multiply-adds (``add(alpha=)``, ``addcmul``, ``lerp`` round once
where numpy rounds twice), so iterates agree to rounding, not bit for bit. Each case is
run a second time with every parameter and state value moved by one ulp after each step,
and its largest relative change is written as ``sensitivity``: every case here keeps it
below 1e-12, so a path that merely amplifies rounding cannot pass for (or hide) a
difference in the formulas at 1e-12. (Centered RMSprop divides by sqrt(E[g²] − E[g]²),
which cancels to rounding noise once the gradient settles: its cases stop before that.)
"""

from __future__ import annotations

import json
import math
import platform
import sys
from pathlib import Path

import torch

torch.set_default_dtype(torch.float64)
OUT = Path(__file__).with_name("optim_paths.json")

#: name -> (gradcli's text, the same function on torch tensors)
FUNCTIONS = {
    "rosenbrock": ("(1-x)^2 + 100(y-x^2)^2",
                   lambda x, y: (1 - x) ** 2 + 100 * (y - x ** 2) ** 2),
    "himmelblau": ("(x^2+y-11)^2 + (x+y^2-7)^2",
                   lambda x, y: (x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2),
    "bowl3": ("exp(0.3x) + sin(y)*z^2 + (x - 1)^2/4 + 0.5(z + 2)^2",
              lambda x, y, z: torch.exp(0.3 * x) + torch.sin(y) * z ** 2
              + (x - 1) ** 2 / 4 + 0.5 * (z + 2) ** 2),
    "cap": ("-(x^2 + 2y^2) + x*y", lambda x, y: -(x ** 2 + 2 * y ** 2) + x * y),
}

#: (function, start, optimizer, keyword arguments as torch takes them, steps)
CASES = [
    ("rosenbrock", (-1.2, 1.0), "Adam", {"lr": 1e-3}, 5000),
    ("rosenbrock", (-1.2, 1.0), "SGD", {"lr": 1e-3}, 400),
    ("rosenbrock", (-1.2, 1.0), "SGD", {"lr": 1e-3, "momentum": 0.9}, 400),
    ("rosenbrock", (-1.2, 1.0), "SGD", {"lr": 5e-4, "momentum": 0.9, "nesterov": True}, 400),
    ("rosenbrock", (-1.2, 1.0), "SGD", {"lr": 5e-4, "momentum": 0.8, "dampening": 0.3,
                                        "weight_decay": 0.01}, 400),
    ("rosenbrock", (-1.2, 1.0), "Adam", {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-6,
                                         "weight_decay": 0.1, "amsgrad": True}, 400),
    ("rosenbrock", (-1.2, 1.0), "AdamW", {"lr": 1e-2}, 400),
    ("rosenbrock", (-1.2, 1.0), "AdamW", {"lr": 1e-2, "weight_decay": 0.5, "amsgrad": True},
     400),
    ("rosenbrock", (-1.2, 1.0), "RMSprop", {}, 400),
    ("himmelblau", (0.5, -1.0), "RMSprop", {"lr": 1e-2, "alpha": 0.9, "eps": 1e-6,
                                            "momentum": 0.5, "centered": True,
                                            "weight_decay": 1e-3}, 120),
    ("himmelblau", (0.5, -1.0), "SGD", {"lr": 1e-3, "momentum": 0.5, "nesterov": True}, 400),
    ("himmelblau", (0.5, -1.0), "Adam", {"lr": 0.05}, 400),
    ("himmelblau", (0.5, -1.0), "RMSprop", {"lr": 1e-2, "momentum": 0.9}, 400),
    ("bowl3", (0.5, 1.0, -1.0), "Adam", {"lr": 1e-2, "amsgrad": True}, 400),
    ("bowl3", (0.5, 1.0, -1.0), "SGD", {"lr": 2e-3, "momentum": 0.5, "dampening": 0.1}, 400),
    ("bowl3", (0.5, 1.0, -1.0), "RMSprop", {"lr": 1e-2, "centered": True}, 200),
    ("cap", (1.0, -2.0), "SGD", {"lr": 1e-2, "maximize": True}, 300),
    ("cap", (1.0, -2.0), "Adam", {"lr": 1e-2, "maximize": True}, 300),
    ("cap", (1.0, -2.0), "RMSprop", {"lr": 1e-2, "maximize": True, "momentum": 0.3}, 300),
]


def run(name: str, start: tuple, optimizer: str, kwargs: dict, steps: int,
        nudge: bool = False) -> list:
    """Every iterate, step 0 (the start) to ``steps``; with ``nudge``, every parameter
    and every floating-point state tensor moved up by one ulp after each step."""
    _, fn = FUNCTIONS[name]
    params = [torch.tensor(v, requires_grad=True) for v in start]
    opt = getattr(torch.optim, optimizer)(params, foreach=False, **kwargs)
    path = [[p.item() for p in params]]
    for _ in range(steps):
        opt.zero_grad()
        fn(*params).backward()
        opt.step()
        if nudge:
            with torch.no_grad():
                for t in [*params, *(v for st in opt.state.values() for k, v in st.items()
                                     if k != "step" and torch.is_tensor(v))]:
                    t.copy_(torch.nextafter(t, torch.tensor(math.inf)))
        path.append([p.item() for p in params])
    assert all(math.isfinite(v) for row in path for v in row), (name, optimizer, kwargs)
    return path


def sensitivity(path: list, name: str, start: tuple, optimizer: str, kwargs: dict,
                steps: int) -> float:
    """The largest relative change of an iterate when every step's results move by one
    ulp: how much this path amplifies rounding."""
    other = run(name, start, optimizer, kwargs, steps, nudge=True)
    return max(math.dist(a, b) / math.hypot(*b) for a, b in zip(other, path, strict=True))


def main() -> int:
    cases = []
    for name, start, optimizer, kwargs, steps in CASES:
        path = run(name, start, optimizer, kwargs, steps)
        moved = sensitivity(path, name, start, optimizer, kwargs, steps)
        assert moved < 1e-12, (name, optimizer, kwargs, moved)
        cases.append({"function": name, "expression": FUNCTIONS[name][0],
                      "start": list(start), "optimizer": optimizer,
                      "kwargs": {k: list(v) if isinstance(v, tuple) else v
                                 for k, v in kwargs.items()},
                      "steps": steps, "sensitivity": moved, "path": path})
    doc = {"generator": "tests/reference/make_optim.py", "torch": torch.__version__,
           "python": platform.python_version(), "machine": platform.machine(),
           "dtype": "float64", "cases": cases}
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"))
        fh.write("\n")
    sys.stdout.write(f"wrote {OUT} ({len(cases)} cases, torch {torch.__version__})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generate tests/reference/arrays.json: value, gradient and Hessian of an expression around
each function of vectors and matrices (logsumexp, cross_entropy, softmax, log_softmax,
cumsum, det, inv, solve, trace, transpose, outer), by mpmath, for
tests/lang/test_lang_array_references.py.

Run from the repository root with any Python that has mpmath (a scratch venv outside the
repository: ``python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install mpmath``):

    /tmp/refvenv/bin/python tests/reference/make_arrays.py

Each case is gradcli's text in x, y, z and the same function written with mpmath below
(its own softmax, determinant by cofactors, inverse and solve by mpmath's matrices); the
derivatives are mpmath's numerical differentiation (``mpmath.diff``) at 40 digits, which
on these smooth functions is exact to far more digits than a double holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath as mp

mp.mp.dps = 40
OUT = Path(__file__).with_name("arrays.json")
F = mp.mpf
POINTS = [(0.3, -0.7, 1.1), (-1.2, 0.4, 0.25), (2.0, 1.5, -0.6)]


def logsumexp(v):
    return mp.log(mp.fsum(mp.exp(t) for t in v))


def softmax(v):
    total = mp.fsum(mp.exp(t) for t in v)
    return [mp.exp(t) / total for t in v]


def det(rows):
    return mp.det(mp.matrix(rows))


def inv(rows):
    m = mp.matrix(rows) ** -1
    return [[m[i, j] for j in range(m.cols)] for i in range(m.rows)]


def solve(rows, b):
    s = mp.lu_solve(mp.matrix(rows), mp.matrix(b))
    return [s[i] for i in range(len(b))]


def matmul(a, b):
    return [[mp.fsum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def dot(u, v):
    return mp.fsum(a * b for a, b in zip(u, v, strict=True))


def flat(rows):
    return [v for row in rows for v in row]


#: (gradcli text, mpmath function of x, y, z)
CASES = [
    ("logsumexp([x, y, z])", lambda x, y, z: logsumexp([x, y, z])),
    ("cross_entropy([x, y, z], 1)", lambda x, y, z: logsumexp([x, y, z]) - y),
    ("sum(softmax([x, y, z]) * [1, 2, 3])", lambda x, y, z: dot(softmax([x, y, z]), (1, 2, 3))),
    ("sum(log_softmax([x, y, z]) * [1, 2, 3])",
     lambda x, y, z: dot([t - logsumexp([x, y, z]) for t in (x, y, z)], (1, 2, 3))),
    ("sum(cumsum([x, y, z])^2)", lambda x, y, z: x ** 2 + (x + y) ** 2 + (x + y + z) ** 2),
    ("det([[x, y, 1], [z, x, 2], [y, 3, z]])",
     lambda x, y, z: det([[x, y, 1], [z, x, 2], [y, 3, z]])),
    ("sum(inv([[x, y], [z, 2]]) * [[1, 2], [3, 4]])",
     lambda x, y, z: dot(flat(inv([[x, y], [z, 2]])), (1, 2, 3, 4))),
    ("sum(solve([[x, y], [z, 2]], [1, 2]) * [3, 4])",
     lambda x, y, z: dot(solve([[x, y], [z, 2]], [1, 2]), (3, 4))),
    ("trace([[x, y], [z, 2]] @ [[y, 1], [x, z]])",
     lambda x, y, z: (lambda m: m[0][0] + m[1][1])(matmul([[x, y], [z, 2]], [[y, 1], [x, z]]))),
    ("sum(transpose([[x, y], [z, 2]]) @ [1, 2])*x",
     lambda x, y, z: ((x + 2 * z) + (y + 4)) * x),
    ("sum(outer([x, y], [z, 2])^2)",
     lambda x, y, z: mp.fsum((u * v) ** 2 for u in (x, y) for v in (z, 2))),
]


def main() -> None:
    cases = []
    for text, fn in CASES:
        for point in POINTS:
            p = [F(c) for c in point]
            value = fn(*p)
            gradient = [mp.diff(fn, p, tuple(int(i == k) for i in range(3))) for k in range(3)]
            hessian = [[mp.diff(fn, p, tuple(int(i == j) + int(i == k) for i in range(3)))
                        for k in range(3)] for j in range(3)]
            cases.append({"expression": text, "at": dict(zip("xyz", point, strict=True)),
                          "f": float(value), "gradient": [float(g) for g in gradient],
                          "hessian": [[float(h) for h in row] for row in hessian]})
    OUT.write_text(json.dumps({"generator": "tests/reference/make_arrays.py",
                               "mpmath": mp.__version__, "digits": mp.mp.dps,
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()

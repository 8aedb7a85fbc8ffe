"""Critical points: where ∇f = 0 (or F = 0 for a vector field), found and classified.

Every seed runs a Levenberg-Marquardt-damped Newton iteration on the residual F (∇f for a
scalar f, the field itself for a vector field) with its exact Jacobian J (f's Hessian, or
the field's Jacobian), all seeds as one vectorised computation:

    (JᵀJ + μI) d = −JᵀF,   accept x + d when it lowers |F|;   μ ÷ 4 on success,
    μ × 4 (at least 1e-4·|J|²) otherwise

μ starts at 0 (Newton's step wherever J is regular; quadratic convergence), returns to 0
once below 1e-15·|J|², and grows where a step fails, which keeps the iteration alive at
singular Jacobians (a degenerate point such as the monkey saddle's or x⁴ + y²'s, reached
linearly). A seed settles when its
step is below 1e-15 of the box's size, |F| is 0, or μ passes 1e8·|J|² (a minimum of |F|
that is not a zero); it counts as converged when |F| is then at most 1e-8 of the median
|F| over the seeds. Converged points outside the box (the
grid's bounds, widened by 1e-9 of its size) are dropped, and points within 1e-6 of the
box's diagonal of each other are one point: the one with the smallest |F|.

What is returned does not show rounding as if it were a result: the rounding of a Newton
step differs between the kernels numpy and OpenBLAS pick by CPU, and where a value is only
rounding it would print other digits on another machine (y = 1.5e-23 or 0 at the damped
pendulum's saddle). So:

* a coordinate within 1e-13 of the box's diagonal of 0 is 0: the iteration resolves a
  point to about 1e-15 of the box (a degenerate one, reached linearly, to a few of those),
  so a coordinate of 1e-23 or 2e-14 there is where the rounding left it, not a position.
  The point's f, residual, eigenvalues and vectors are those at the point printed.
* the residual (|∇f| or |F|) is 0 when it is at most 4ε·‖J‖·‖x‖ (ε = 2⁻⁵², Frobenius
  and Euclidean norms): about what moving the point by one unit in the last place of its
  coordinates changes F by, so no neighbouring double is a better root, and the value's
  digits are rounding (|sin(π)| = 1.2e-16 at x = π).
* an eigenvalue, or a real or imaginary part, that the classification counts as 0 (below)
  is 0.

Types come from the eigenvalues of J at the point (the Hessian for a scalar f, the
Jacobian for a field), by one rule for both: an eigenvalue (or a real or imaginary part)
counts as 0 when it is within 1e-10 of the scale of the eigenvalues, the larger of the
point's largest |eigenvalue| and the median |J| over the seeds (Frobenius norm). An
ill-conditioned but definite Hessian (1e4·x² + 1e-3·y²: eigenvalues 2e4 and 2e-3) is then a
minimum, while a degenerate point, which the iteration reaches to about 1e-15 of the box,
keeps eigenvalues some 1e-14 of the scale and stays degenerate. For a scalar f the types
are minimum, maximum, saddle or degenerate; for a vector field stable node, unstable node,
saddle, stable focus, unstable focus, center or degenerate.

Each eigenvalue comes with its eigenvector (``vec``), the direction a saddle's stable and
unstable curves leave along: unit length, and signed so that its component of largest
magnitude is positive (the first such component on a tie, counted within 1e-12), so the
same point always gives the same vector. A vector field's complex eigenvalue (a focus or
centre) has no real direction: its vector is nan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError
from gradcli.fields.descend import column_norms
from gradcli.fields.function import FieldFunction

__all__ = ["CriticalPoints", "find_critical", "SCALAR_TYPES", "VECTOR_TYPES"]

SCALAR_TYPES = ("minimum", "maximum", "saddle", "degenerate")
VECTOR_TYPES = ("stable node", "unstable node", "saddle", "stable focus", "unstable focus",
                "center", "degenerate")
MAX_ITERATIONS = 200
STEP_TOL, RESIDUAL_TOL, MERGE_TOL, BOX_TOL, ZERO_TOL = 1e-15, 1e-8, 1e-6, 1e-9, 1e-10
# a coordinate this close to 0 (in units of the box's diagonal) is 0; a residual below
# ROUNDING_ULPS·ε·‖J‖·‖x‖ is 0 (see the module's docstring)
POINT_ZERO_TOL, ROUNDING_ULPS = 1e-13, 4.0
# μ in units of |J|²: below which it is 0 again (Newton's step), where a failed step
# restarts, and past which a seed is stuck at a minimum of |F| that is no zero (about 20
# failures in a row). No floor under μ: one relative to |J|² swamps a direction whose
# curvature vanishes faster than another's (x⁴ + y² stalled at x = 2e-5 and gave two points)
_MU_ZERO, _MU_FAIL, _MU_GIVE_UP = 1e-15, 1e-4, 1e8


@dataclass
class CriticalPoints:
    """The points found, sorted by their coordinates (first input slowest).

    ``X`` (K, n); ``f`` (K,) for a scalar formula (None for a field); ``residual`` |∇f|
    or |F|; ``eig`` (K, n): the Hessian's eigenvalues ascending (real), or the Jacobian's
    sorted by real then imaginary part (complex); ``types`` one name per point.
    """

    columns: list[str]
    kind: str
    X: np.ndarray
    f: np.ndarray | None
    residual: np.ndarray
    eig: np.ndarray
    types: np.ndarray
    vec: np.ndarray | None = None  # (K, n, n): vec[p, i] the unit eigenvector of eig[p, i]

    def __len__(self) -> int:
        return len(self.X)


def _residual(function: FieldFunction, X: np.ndarray, jac: bool) -> tuple:
    """F and (when ``jac``) J at X (n, N); f too for a scalar formula."""
    if function.kind == "scalar":
        if jac:
            return function.hessian(X)
        f, G = function.gradient(X)
        return f, G, None
    if jac:
        F, J = function.jacobian(X)
        return None, F, J
    return None, function.value(X), None


def find_critical(function: FieldFunction, seeds: np.ndarray,
                  box: tuple[np.ndarray, np.ndarray] | None = None,
                  more_seeds: np.ndarray | None = None) -> CriticalPoints:
    """Critical points of ``function`` from ``seeds`` (S, n), inside ``box`` (low, high
    arrays of n) when given; the merge tolerance scales with the box (the seeds' bounding
    box without one). ``more_seeds`` are iterated too but take no part in the scales of
    |F| and |J| (points already near critical points, such as the ends of descents)."""
    if function.kind not in ("scalar", "vector"):
        raise EvaluationError(
            f"critical needs a scalar formula f or a vector field with one component per "
            f"variable ({function.n}), but this one has shape {function.shape}")
    lo, hi = box if box is not None else (seeds.min(axis=0), seeds.max(axis=0))
    size = float(np.hypot.reduce(hi - lo)) if len(lo) else 0.0
    size = size if size > 0 else 1.0
    X = np.array(seeds.T, dtype=np.float64, order="C")
    with quiet():
        _, F0, J0 = _residual(function, X, True)
        fnorm = column_norms(F0)
        jnorm = np.sqrt(np.einsum("ijk,ijk->k", J0, J0))
        finite = np.isfinite(fnorm) & np.isfinite(jnorm) & np.isfinite(X).all(0)
        f_scale = _median(fnorm[finite])
        j_scale = _median(jnorm[finite])
        X = X[:, finite]
        if more_seeds is not None:
            X = np.hstack([X, more_seeds.T[:, np.isfinite(more_seeds).all(axis=1)]])
        X = _iterate(function, X, size)
        X[np.abs(X) <= POINT_ZERO_TOL * size] = 0.0
        f, F, J = _residual(function, X, True)
        res = column_norms(F)
        ok = np.isfinite(res) & (res <= RESIDUAL_TOL * f_scale) & np.isfinite(J).all((0, 1))
        if box is not None:
            pad = BOX_TOL * np.maximum(hi - lo, 1.0)
            ok &= ((X >= (lo - pad)[:, None]) & (X <= (hi + pad)[:, None])).all(0)
        keep = _merge(X[:, ok], res[ok], MERGE_TOL * size)
        cols = np.flatnonzero(ok)[keep]
        X, res, J = X[:, cols], res[cols], J[..., cols]
        with np.errstate(over="ignore", invalid="ignore"):
            floor = ROUNDING_ULPS * np.finfo(float).eps * np.sqrt(
                np.einsum("ijk,ijk->k", J, J)) * column_norms(X)
        # after the merge, which ranks by the digits; shown in the first component's
        # unit when the components' units differ (the search's tolerances stay in theirs)
        shown = res if function.norm_weights is None else \
            column_norms(F[:, cols], function.norm_weights)
        res = np.where(res <= floor, 0.0, shown)
        f = f[cols] if f is not None else None
        eig, types = _classify(function.kind, J, j_scale)
        vec = eigenvectors(function.kind, J, eig)
    order = np.lexsort(X[::-1]) if X.shape[1] else np.zeros(0, dtype=int)
    return CriticalPoints(function.columns, function.kind, X.T[order],
                          None if f is None else f[order], res[order], eig[order],
                          types[order], vec[order])


def _median(a: np.ndarray) -> float:
    return float(np.median(a)) if a.size and np.median(a) > 0 else 1.0


def _iterate(function: FieldFunction, X: np.ndarray, size: float) -> np.ndarray:
    """Damped Newton from every column of X (n, S); the settled points, same order.
    Settled columns stay in the batch (frozen) until they are half of it, then the batch
    shrinks to the live ones (and the program is traced again for its size)."""
    n = X.shape[0]
    out = X.copy()
    work, idx = X.copy(), np.arange(X.shape[1])  # idx: the seed each column holds
    live = np.ones(work.shape[1], dtype=bool)
    mu = np.zeros(work.shape[1])
    eye = np.eye(n)
    for _ in range(MAX_ITERATIONS):
        if not live.any():
            break
        _, F, J = _residual(function, work, True)
        phi = np.einsum("ij,ij->j", F, F)
        Jt = np.moveaxis(J, -1, 0)  # (S, n, n)
        A = np.einsum("sji,sjk->sik", Jt, Jt)
        scale = np.einsum("sii->s", A)
        mu = np.maximum(mu, 1e-300)
        b = -np.einsum("sji,js->si", Jt, F)
        bad = ~(np.isfinite(A).all((1, 2)) & np.isfinite(b).all(1)) | ~live
        A[bad], b[bad] = eye, 0.0
        d = _solve(A + mu[:, None, None] * eye, b).T  # (n, S)
        trial = work + d
        _, Ft, _ = _residual(function, trial, False)
        phit = np.einsum("ij,ij->j", Ft, Ft)
        better = live & np.isfinite(phit) & ((phit < phi) | (phit == 0))
        work[:, better] = trial[:, better]
        step = np.sqrt(np.einsum("ij,ij->j", d, d))
        mu = np.where(better, mu / 4, np.maximum(mu * 4, _MU_FAIL * scale))
        mu = np.where(mu < _MU_ZERO * scale, 0.0, mu)
        done = live & (bad | (phi == 0) | (step <= STEP_TOL * size) |
                       (mu > _MU_GIVE_UP * (scale + 1e-300)) | ~np.isfinite(phi))
        out[:, idx[done]] = work[:, done]
        live &= ~done
        if live.sum() * 2 <= live.size and live.size >= 64:
            work, idx, mu = work[:, live], idx[live], mu[live]
            live = np.ones(work.shape[1], dtype=bool)
    out[:, idx[live]] = work[:, live]
    return out


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(A, b[..., None])[..., 0]
    except np.linalg.LinAlgError:  # an exactly singular system: least squares, one by one
        return np.einsum("sij,sj->si", np.linalg.pinv(A), b)


def _merge(X: np.ndarray, res: np.ndarray, tol: float) -> np.ndarray:
    """Indices (into the columns of X) of one point per group of points within ``tol``:
    the one with the smallest residual."""
    reps: list[int] = []
    for i in np.argsort(res, kind="stable"):
        if reps:
            dist = np.sqrt(((X[:, reps] - X[:, [i]]) ** 2).sum(0))
            if dist.min() <= tol:
                continue
        reps.append(int(i))
    return np.array(reps, dtype=int)


def _classify(kind: str, J: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The eigenvalues at each point and its type; an eigenvalue is 0 within ZERO_TOL of
    the larger of ``scale`` (the seeds' median |J|) and the point's largest |eigenvalue|."""
    mats = np.moveaxis(J, -1, 0)
    if not len(mats):
        shape = (0, J.shape[0])
        return np.zeros(shape, dtype=float if kind == "scalar" else complex), \
            np.zeros(0, dtype=object)
    if kind == "scalar":
        lam = np.linalg.eigvalsh((mats + np.swapaxes(mats, 1, 2)) / 2)
        kind_of = _scalar_type
    else:
        lam = np.sort_complex(np.linalg.eigvals(mats).astype(complex))
        kind_of = _vector_type
    zero = ZERO_TOL * np.maximum(scale, np.abs(lam).max(axis=1))
    types = np.array([kind_of(row, z) for row, z in zip(lam, zero, strict=True)],
                     dtype=object)
    # what the type counts as 0 is printed as 0 (a degenerate point's 4e-14 is rounding)
    z = zero[:, None]
    if kind == "scalar":
        lam = np.where(np.abs(lam) <= z, 0.0, lam)
    else:
        lam = (np.where(np.abs(lam.real) <= z, 0.0, lam.real)
               + 1j * np.where(np.abs(lam.imag) <= z, 0.0, lam.imag))
    return lam, types


def eigenvectors(kind: str, J: np.ndarray, eig: np.ndarray) -> np.ndarray:
    """The unit eigenvector of each eigenvalue in ``eig`` (K, n) of the matrices J
    (n, n, K), as (K, n, n) with [p, i] going with eig[p, i]: the largest component
    positive; nan for a complex eigenvalue (no real direction)."""
    mats = np.moveaxis(J, -1, 0)
    K, n = eig.shape
    out = np.full((K, n, n), np.nan)
    for p in range(K):
        if kind == "scalar":
            lam, vecs = np.linalg.eigh((mats[p] + mats[p].T) / 2)
            real = np.ones(n, dtype=bool)
        else:
            lam, vecs = np.linalg.eig(mats[p])
            # eig[p] is sorted as np.sort_complex sorts: real part, then imaginary part
            order = np.lexsort((lam.imag, lam.real))
            lam, vecs = lam[order], vecs[:, order]
            real = np.abs(lam.imag) <= 1e-12 * max(1.0, float(np.abs(lam).max()))
        for i in np.flatnonzero(real):
            out[p, i] = _signed_unit(np.real(vecs[:, i]))
    return out


def _signed_unit(v: np.ndarray) -> np.ndarray:
    """``v`` at unit length with its largest component (the first within 1e-12) > 0."""
    norm = float(np.linalg.norm(v))
    if not np.isfinite(norm) or norm == 0:
        return np.full(len(v), np.nan)
    v = v / norm
    big = np.abs(v)
    lead = int(np.flatnonzero(big >= big.max() - 1e-12)[0])
    return (-v if v[lead] < 0 else v) + 0.0


def _scalar_type(lam: np.ndarray, zero: float) -> str:
    if (np.abs(lam) <= zero).any():
        return "degenerate"
    if (lam > 0).all():
        return "minimum"
    if (lam < 0).all():
        return "maximum"
    return "saddle"


def _vector_type(lam: np.ndarray, zero: float) -> str:
    if (np.abs(lam) <= zero).any():
        return "degenerate"
    re = np.where(np.abs(lam.real) <= zero, 0.0, lam.real)
    spiral = (np.abs(lam.imag) > zero).any()
    if (re == 0).all():
        return "center" if spiral else "degenerate"
    if (re == 0).any():
        return "degenerate"
    if (re < 0).all():
        return "stable focus" if spiral else "stable node"
    if (re > 0).all():
        return "unstable focus" if spiral else "unstable node"
    return "saddle"

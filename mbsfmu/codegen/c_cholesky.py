"""Straight-line C for the Cholesky solve of a small symmetric positive definite system.

``cholesky_solve_source(n)`` writes ``static int rhs_solve(double *A, double *b)``: it overwrites
``b`` with the solution x of A x = b for the row-major n x n matrix A (only its lower triangle is
read), by A = L L^T (left-looking, row by row),

    d_j  = A_jj - sum_{k<j} L_jk^2,           r_j = 1 / sqrt(d_j),
    L_ij = (A_ij - sum_{k<j} L_ik L_jk) r_j    (i > j),

then L z = b and L^T x = z, with the reciprocals r_j in place of divisions.  It returns 0, or
j + 1 when pivot j fails, i.e. d_j is not above ``MBS_LINALG_PIVOT_RTOL`` times the largest
|A_jj| (the test of ``mbs_chol_factor`` in mbs_linalg.c, so both report the same pivot).

For n up to :data:`UNROLL_MAX` every operation is written out with constant indices and the
entries of L live in local variables: the compiler then schedules the many independent dot
products of a small factorization freely instead of running one loop-carried chain at a time
(for the 10 x 10 mass matrix of a 10-link chain this halves the time of the loop version).
Above that size ``rhs_solve`` calls the loop versions in mbs_linalg.c.
"""

from __future__ import annotations

#: largest n written out in full (the code grows like n^3 / 6)
UNROLL_MAX = 16


def _dot(pairs: list[tuple[str, str]]) -> str:
    return " - ".join(f"{a} * {b}" for a, b in pairs)


def cholesky_solve_source(n: int) -> str:
    """C source of ``static int rhs_solve(double *A, double *b)`` for order ``n``."""
    if n > UNROLL_MAX or n < 1:
        return (
            "static int rhs_solve(double *A, double *b)\n{\n"
            f"    int status = mbs_chol_factor({n}, A);\n"
            f"    if (status == 0) status = mbs_chol_solve({n}, A, b);\n"
            "    return status;\n}\n")

    def L(i, j):
        return f"l{i}_{j}"

    out = ["static int rhs_solve(double *A, double *b)", "{",
           f"    /* straight-line Cholesky solve, n = {n} (mbsfmu.codegen.c_cholesky) */",
           "    double dmax = 0.0, thr, d;"]
    for i in range(n):
        out.append(f"    if (fabs(A[{i * n + i}]) > dmax) dmax = fabs(A[{i * n + i}]);")
    out.append("    thr = MBS_LINALG_PIVOT_RTOL * dmax;")
    for j in range(n):
        terms = [(L(j, k), L(j, k)) for k in range(j)]
        rest = f" - {_dot(terms)}" if terms else ""
        out.append(f"    d = A[{j * n + j}]{rest};")
        out.append(f"    if (!(d > thr)) return {j + 1};")
        out.append(f"    const double r{j} = 1.0 / sqrt(d);")
        for i in range(j + 1, n):
            terms = [(L(i, k), L(j, k)) for k in range(j)]
            rest = f" - {_dot(terms)}" if terms else ""
            out.append(f"    const double {L(i, j)} = (A[{i * n + j}]{rest}) * r{j};")
    for i in range(n):           # L z = b
        terms = [(L(i, j), f"z{j}") for j in range(i)]
        rest = f" - {_dot(terms)}" if terms else ""
        out.append(f"    const double z{i} = (b[{i}]{rest}) * r{i};")
    for i in reversed(range(n)):  # L^T x = z
        terms = [(L(j, i), f"b[{j}]") for j in range(i + 1, n)]
        rest = f" - {_dot(terms)}" if terms else ""
        out.append(f"    b[{i}] = (z{i}{rest}) * r{i};")
    out += ["    return 0;", "}", ""]
    return "\n".join(out)

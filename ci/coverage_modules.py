"""Which modules of mbsfmu ran in a measured test run (the data of ci/coverage_check).

A module counts as run when a line inside one of its functions ran: importing it (its ``def``
and ``class`` lines, its constants) is not enough.  A module without functions counts when any
of its lines ran.  Prints every module with its share of executed statements, lowest first, and
exits 1 naming the modules that did not run.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import coverage

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mbsfmu"


def function_lines(source: str) -> set[int]:
    """The line numbers of the statements inside the functions and methods of ``source``."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def main() -> int:
    cov = coverage.Coverage(config_file=str(ROOT / "pyproject.toml"))
    cov.load()
    rows, not_run = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(ROOT))
        _, statements, _, missing, _ = cov.analysis2(str(path))
        executed = set(statements) - set(missing)
        inside = function_lines(path.read_text())
        ran = bool(executed & inside) if inside & set(statements) else bool(executed) or not statements
        share = len(executed) / len(statements) if statements else 1.0
        rows.append((share, name, len(executed), len(statements), ran))
        if not ran:
            not_run.append(name)
    for share, name, done, total, ran in sorted(rows):
        print(f"{100 * share:5.1f} %  {done:5d} / {total:<5d} {name}{'' if ran else '   NOT RUN'}")
    if not_run:
        print(f"{len(not_run)} of {len(rows)} modules of mbsfmu did not run: {', '.join(not_run)}")
        return 1
    print(f"every one of the {len(rows)} modules of mbsfmu ran (a line inside one of its functions); "
          f"{sum(r[2] for r in rows)} of {sum(r[3] for r in rows)} statements")
    return 0


if __name__ == "__main__":
    sys.exit(main())

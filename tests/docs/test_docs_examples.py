"""The documentation's code examples run (issue 24 item 6): every ```python block of
docs/**/*.md and README.md.

Each page is one test: its blocks run in order in one namespace (``__name__`` is
``"__main__"``, as in a script), in a fresh temporary working directory in which ``models``
points to the repository's models/ (so ``"models/slider_crank.py"`` works as in the
repository), with matplotlib's Agg backend.  A block preceded by the line ``<!-- no-run -->``
(an HTML comment: invisible on the page) is not run; the contributing guide says when to use it.
A failing block is reported with its page and line.
"""

from __future__ import annotations

import pathlib
import re
import traceback

import pytest
from slow_cases import cases

#: the repository: the nearest folder above this file with the pyproject.toml (wherever in
#: tests/ the file stands)
ROOT = next(p for p in pathlib.Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
NO_RUN = "<!-- no-run -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def pages() -> list[pathlib.Path]:
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def blocks(path: pathlib.Path) -> list[tuple[int, str, bool]]:
    """(line of the block's first code line, code, runs) of every ```python block of a page."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        found.append((text.count("\n", 0, m.start(1)) + 1, m.group(1), before != NO_RUN))
    return found


def test_the_extractor_finds_fences_and_the_marker(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n```python\na = 1\n```\n\n<!-- no-run -->\n```python\nb = 2\n```\n"
                    "\n```sh\nls\n```\n\n```python\nc = a\n```\n")
    assert blocks(page) == [(4, "a = 1\n", True), (9, "b = 2\n", False), (17, "c = a\n", True)]


def test_sphinx_roles_become_code_spans():
    """The API pages' Griffe extension (docs/_ext/griffe_roles.py) shows a docstring's roles as
    code: the target, its last part for '~', without the leading dot of a relative one."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("griffe_roles", ROOT / "docs" / "_ext" / "griffe_roles.py")
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    text = ("see :func:`mbsfmu.simulate`, :class:`~mbsfmu.model.System` and :mod:`.scene`; "
            ":meth:`Result.to_csv` and ``x``")
    assert roles.ROLE.sub(lambda m: f"`{roles.plain(m.group(1))}`", text) == (
        "see `mbsfmu.simulate`, `System` and `scene`; `Result.to_csv` and ``x``")


RUNNABLE = [p for p in pages() if any(runs for _, _, runs in blocks(p))]


#: the pages whose examples take seconds (parameter sweeps, FMU builds): slow
SLOW_PAGES = {"docs/guide/studies.md", "docs/guide/fmus.md", "docs/guide/runner.md",
              "docs/guide/closed-loop-crane.md"}


@pytest.mark.parametrize("page", cases(RUNNABLE, slow=SLOW_PAGES, label=lambda p: str(p.relative_to(ROOT)),
                                       values=lambda p: (p,)))
def test_examples_of_page_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    (tmp_path / "models").symlink_to(ROOT / "models", target_is_directory=True)
    namespace = {"__name__": "__main__"}
    where = page.relative_to(ROOT)
    for line, code, runs in blocks(page):
        if not runs:
            continue
        # the block's own line numbers in tracebacks: blank lines put its code where it stands
        source = "\n" * (line - 1) + code
        try:
            exec(compile(source, str(where), "exec"), namespace)
        except Exception:
            pytest.fail(f"the example at {where}:{line} failed:\n{traceback.format_exc()}", pytrace=False)


#: the pages that show no Python to run: the API reference (generated from the docstrings) and
#: pages of shell commands, tables and text
WITHOUT_EXAMPLES = {"docs/index.md", "docs/architecture.md", "docs/contributing.md",
                    "docs/verification.md", "docs/guide/command-line.md"}


def test_every_page_is_covered():
    """Pages without runnable examples are few and known: an example that quietly stopped
    running (a fence typo, a marker too many) would drop out of the test above."""
    without = {str(p.relative_to(ROOT)) for p in pages() if p not in RUNNABLE}
    assert {p for p in without if not p.startswith("docs/api/")} == WITHOUT_EXAMPLES


#: paths the docs name that do not exist yet (none since fmi3_glue.c came)
NOT_YET: set = set()
PATH = re.compile(r"`((?:mbsfmu|blocks|models|tests|bench|docs|ci)/[\w./-]*)`")
DOTTED = re.compile(r"`((?:mbsfmu|blocks)(?:\.\w+)+)`")


def named(pattern) -> set[tuple[str, str]]:
    """(page, name) of every match of ``pattern`` on the pages (the API pages left out)."""
    api = ROOT / "docs" / "api"
    return {(str(p.relative_to(ROOT)), m.group(1)) for p in pages() if api not in p.parents
            for m in pattern.finditer(p.read_text(encoding="utf-8"))}


def test_the_files_the_docs_name_exist():
    """A file or folder named in the guides, the architecture, the checklists or the README
    (as `path`) exists: a moved module shows up here, not in a reader's search."""
    missing = sorted((page, path) for page, path in named(PATH)
                     if path not in NOT_YET and not (ROOT / path.rstrip("/")).exists())
    assert not missing, missing


def test_the_objects_the_docs_name_import():
    """Every `mbsfmu.x.y` or `blocks.x` the pages name is a module or an attribute of one (the
    glossary's deprecated names too, which say so when imported)."""
    import importlib
    import warnings

    def resolves(dotted: str) -> bool:
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            try:
                for name in parts[i:]:
                    obj = getattr(obj, name)
            except AttributeError:
                return False
            return True
        return False

    missing = sorted((page, dotted) for page, dotted in named(DOTTED) if not resolves(dotted))
    assert not missing, missing

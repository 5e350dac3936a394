"""A Griffe extension for the API pages: Sphinx roles in docstrings become code spans.

The docstrings cite other objects the Sphinx way, ``:func:`mbsfmu.simulate```,
``:class:`~mbsfmu.model.System```, ``:mod:`.scene```.  Markdown has no roles, so each is
rewritten to a code span of its target (the last component for a ``~`` target, the name without
a leading dot for a relative one) before mkdocstrings renders the docstring.  Nothing else of the
text changes.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:func|mod|class|meth|data|attr|exc|obj):`([^`]+)`")


def plain(target: str) -> str:
    """The text a role's target is shown as."""
    if target.startswith("~"):
        return target.rsplit(".", 1)[-1]
    return target.lstrip(".")


class SphinxRolesToCode(griffe.Extension):
    """Rewrites ``:role:`target``` to a code span in every docstring Griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(lambda m: f"`{plain(m.group(1))}`", obj.docstring.value)

"""A griffe extension for the API reference: docstrings keep their sense, not their
pointers into the project's internal specification.

Some docstrings cite the internal contract (``SPEC §7``) or its catalogue of
TensorFlow behaviour (``TF#16``); readers of the site cannot follow either. The
citations are dropped when the reference is rendered; the source is unchanged.
"""
from __future__ import annotations

import re

import griffe

REF = r"(?:SPEC\s*§?\s*[0-9][0-9a-z]*(?:\s*(?:,|and)\s*§?\s*[0-9][0-9a-z]*)*|TF#[0-9]+(?:[-–][0-9]+)?)"
PATTERNS = [
    # "(see SPEC §2, §2a)", "(SPEC §7)", "(TF#16)", "(SPEC 5b; needs ...)" -> dropped or trimmed
    (re.compile(rf"\s*\((?:see\s+)?{REF}(?:\s*(?:,|and)\s*{REF})*\)"), ""),
    (re.compile(rf"\((?:see\s+)?{REF}(?:\s*(?:,|and)\s*{REF})*;\s*"), "("),
    (re.compile(rf"(?:[;,]\s*)?see\s+{REF}(?:\s*(?:,|and)\s*{REF})*(?:\s+and\s+README\.md)?"), ""),
    (re.compile(rf",?\s*(?:see\s+)?{REF}(?:\s*(?:,|and)\s*{REF})*(?:\s+and\s+README\.md)?"), ""),
]


def strip(text: str) -> str:
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class DropCitations(griffe.Extension):
    """Remove citations of the internal specification from every docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = strip(obj.docstring.value)

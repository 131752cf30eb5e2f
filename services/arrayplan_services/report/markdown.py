"""The one Markdown table writer: every Markdown table the CLI and the reports print goes through
``table`` (the plan's ``--format markdown``, ``report.md``, the forecast report, the cluster
commands), so every cell follows one escaping rule, ``cell``.

The rule: a cell is one line of text in which a pipe would end the cell and a newline would end
the row. Backslashes are doubled first (so a cell's own ``\\|`` stays literal), then every ``|``
becomes ``\\|``, ``&``, ``<`` and ``>`` become entities (no raw HTML from what users wrote), and every
line break (``\\r\\n``, ``\\r``, ``\\n``) becomes ``<br>`` (GitHub and GitLab render it as a line
break inside the cell). Nothing else is touched: emphasis the writer
adds (``Strong``) goes around the escaped text. Light on purpose (the CLI imports it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
ALIGNS = ("l", "r")


@dataclass(frozen=True, slots=True)
class Strong:
    """A cell drawn in bold (``**text**``), the text escaped like any other cell."""

    text: str


_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_HTML_RE = re.compile(r"[&<>]")
# Markdown that would make text into a link, an image, code or emphasis: backslash-escaped.
_MD_RE = re.compile(r"([\\`*_\[\]!#~])")


def html_text(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities: no raw HTML (``<script>``, ``<img onerror=...>``) from
    what users wrote reaches a renderer that passes HTML through (a pull-request comment)."""
    return _HTML_RE.sub(lambda m: _HTML[m.group(0)], text)


def inline(value: object) -> str:
    """Text a user wrote, fit for a Markdown paragraph: HTML as entities, Markdown's link, image,
    code and emphasis characters backslash-escaped, line breaks as spaces (``report.md`` and the
    forecast page print every value through this, ``jinja.ENV``'s finalize)."""
    return _LINE_BREAK.sub(" ", _MD_RE.sub(r"\\\1", html_text(str(value))))


def cell(value: object) -> str:
    """One table cell's text under the one escaping rule (see the module docstring)."""
    text = value.text if isinstance(value, Strong) else str(value)
    text = _LINE_BREAK.sub("<br>", html_text(text.replace("\\", "\\\\").replace("|", "\\|")))
    if isinstance(value, Strong) and text.strip():
        return f"**{text}**"
    return text


def table(header: Sequence[object], rows: Iterable[Sequence[object]], align: Sequence[str] | None = None) -> list[str]:
    """The lines of a Markdown (GFM) table: header, delimiter row (``---:`` for ``"r"`` columns,
    ``---`` for ``"l"``; all ``"l"`` when ``align`` is None), one line per row. Raises
    ``ValueError`` naming the row when a row's cell count or an alignment is not the header's."""
    n = len(header)
    if n == 0:
        raise ValueError("a Markdown table needs at least one column")
    aligns = list(align) if align is not None else ["l"] * n
    if len(aligns) != n:
        raise ValueError(f"align has {len(aligns)} entries for {n} columns")
    for i, a in enumerate(aligns):
        if a not in ALIGNS:
            raise ValueError(f"align[{i}] is {a!r}; allowed: {', '.join(ALIGNS)}")
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "".join("---:|" if a == "r" else "---|" for a in aligns)]
    for i, r in enumerate(rows):
        if len(r) != n:
            raise ValueError(f"row {i} has {len(r)} cells for {n} columns")
        out.append("| " + " | ".join(cell(v) for v in r) + " |")
    return out


__all__ = ["ALIGNS", "Strong", "cell", "html_text", "inline", "table"]

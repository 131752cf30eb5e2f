"""The docs say what the code does: every ``docs/`` file the project cites exists, and the
architecture's range-check decision names every engine module that writes a bound's reason by
hand (a ``Range`` writes its own). Plain text and the engine's syntax trees: nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine" / "arrayplan_engine"
CITED = re.compile(r"\bdocs/[A-Za-z0-9_.-]+\.(?:md|json)\b")
# The texts that cite docs: the top level's files, the docs themselves, sources, scripts, charts.
CITING = ("requirements.txt", "Makefile", "README.md", "docs/*.md", "deploy/*", "scripts/*", "helm/**/*.md", "helm/**/*.yaml",
          "engine/**/*.py", "services/arrayplan_services/**/*.py", "tests/**/*.py")
# A reason that states a bound ("must be >= 1", "must be in (0, 1)", "must hold at least one group",
# "a >= 512, b > 0"), as a hand-written check spells it; errors.Range composes its own.
BOUND = re.compile(r"must be[^,;]*?(?:[<>]=?|\bin\s*[\[(]|at least|at most)|must hold at least|\w+ [<>]=? ?\d")


def test_every_cited_doc_exists() -> None:
    missing = []
    for pattern in CITING:
        for path in sorted(ROOT.glob(pattern)):
            if not path.is_file() or path.suffix in (".png", ".svg"):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for n, line in enumerate(text.splitlines(), 1):
                missing += [f"{path.relative_to(ROOT)}:{n}: {ref}" for ref in CITED.findall(line) if not (ROOT / ref).is_file()]
    assert not missing, "cited docs that do not exist:\n" + "\n".join(sorted(set(missing)))


def _hand_written_bounds(path: Path) -> list[str]:
    """The bound reasons ``path`` writes itself: string literals stating a bound inside a
    ``Violation(...)``, ``InvalidInputError(...)``, ``InvalidInputError.one(...)`` or
    ``ValueError(...)`` call."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("Violation", "InvalidInputError", "one", "ValueError"):
            continue
        text = "".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str))
        if BOUND.search(text):
            found.append(f"{path.name}:{node.lineno}: {text[:80]}")
    return found


def test_architecture_names_the_modules_that_check_bounds_by_hand() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = doc.index("* **One range check")
    decision = doc[start: doc.index("\n* **", start + 1)]
    assert "Every bound on a number is an `errors.Range`" not in decision
    by_hand = {p.name: found for p in sorted(ENGINE.glob("*.py")) if (found := _hand_written_bounds(p))}
    assert {"reliability.py", "ssd.py", "simulation.py", "cost.py"} <= set(by_hand), by_hand  # the scan sees them
    unnamed = {name: found for name, found in by_hand.items() if f"`{name}`" not in decision and f"`{name[:-3]}." not in decision}
    assert not unnamed, ("docs/architecture.md's range-check decision does not name these modules, which write bound "
                         f"reasons by hand (make them Ranges, or say so there): {unnamed}")


# A reference names its sections after what the code does. "issue 10", "session 3", "round 2",
# "(#12)" and dates say when something was written, which the git history already holds.
HISTORY = re.compile(r"\b(?:issues?|sessions?|rounds?|parts?|PR)\s*#?\d+|\(#\d+\)|#\d+\b|\b\d{4}-\d{2}-\d{2}\b", re.IGNORECASE)
# Prose naming the work that produced a figure: "issue 10", "session 3" (not "a Ray session").
HISTORY_PROSE = re.compile(r"\b(?:issue|session)s?\s*#?\d+", re.IGNORECASE)
ATX_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
# A bold label that opens a paragraph or a bullet serves as a heading too ("**With cleaning on.**").
BOLD_LABEL = re.compile(r"^(?:[*-]\s+)?\*\*(.+?)\*\*")
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of ``text`` outside fenced code blocks, where '#' starts a comment."""
    out, fence = [], ""
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = "" if fence == marker else (fence or marker)
            continue
        if not fence:
            out.append((n, line))
    return out


def _headings(text: str) -> list[tuple[int, str]]:
    """The headings of a markdown text: ATX headings and bold labels opening a line."""
    found = []
    for n, line in _prose_lines(text):
        m = ATX_HEADING.match(line) or BOLD_LABEL.match(line)
        if m:
            found.append((n, m.group(1)))
    return found


def _history_in_headings(text: str) -> list[str]:
    return [f"{n}: {h}" for n, h in _headings(text) if HISTORY.search(h)]


def test_the_heading_check_sees_issue_and_session_headings() -> None:
    """The check below can fail: it finds each kind of history heading and passes behaviour names."""
    text = ("# Model\n## Posted writes (write buffer, issue 10)\n### Session 6 (still below the aim)\n"
            "**Issue 10, cleaning on, session 3.** Text.\n* **Rows 1-5 (issue 10).** Text.\n## Fix (#12)\n"
            "## Measured 2026-11-26\n## Round 2\n```sh\n# 1. a shell comment, issue 4\n```\n"
            "## Degraded mode and rebuild\n**Measuring speed.** Side by side.\n")
    assert [h.split(": ", 1)[0] for h in _history_in_headings(text)] == ["2", "3", "4", "5", "6", "7", "8"]


def test_no_doc_heading_names_an_issue_or_a_session() -> None:
    bad = {p.name: found for p in DOCS if (found := _history_in_headings(p.read_text(encoding="utf-8")))}
    assert not bad, ("docs/ headings name an issue, session, round or date; name the section after what the "
                     f"code does (the history is in git log): {bad}")


def test_no_doc_says_which_issue_or_session_did_something() -> None:
    bad = [f"{p.name}:{n}: {line.strip()[:100]}" for p in DOCS
           for n, line in _prose_lines(p.read_text(encoding="utf-8")) if HISTORY_PROSE.search(line)]
    assert not bad, "docs/ say 'issue N' / 'session N'; say what the code does and why instead:\n" + "\n".join(bad)


def test_array_model_has_one_speed_section_and_no_diary() -> None:
    doc = (ROOT / "docs" / "array-model.md").read_text(encoding="utf-8")
    speed = [h for _, h in _headings(doc) if re.search(r"speed|measur", h, re.IGNORECASE)]
    assert speed == ["The kernel: how it is built and how its speed is measured", "Measuring speed."], speed
    diary = [p for p in ("tried and not kept", "not kept", "made the kernel", "m host ios per cpu second") if p in doc.lower()]
    assert not diary, f"docs/array-model.md keeps a speed diary ({diary}); the figures belong in commit messages"

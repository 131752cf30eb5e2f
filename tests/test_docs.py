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
    assert {"reliability.py", "ssd.py", "evaluate.py", "cost.py"} <= set(by_hand), by_hand  # the scan sees them
    unnamed = {name: found for name, found in by_hand.items() if f"`{name}`" not in decision and f"`{name[:-3]}." not in decision}
    assert not unnamed, ("docs/architecture.md's range-check decision does not name these modules, which write bound "
                         f"reasons by hand (make them Ranges, or say so there): {unnamed}")

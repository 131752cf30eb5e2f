"""Code, tests and benchmarks are named after behaviour, not after the tracker: no .py file says
"issue 10", "issue #3", "#12 issue" or "session 4" (in a name, a comment, a docstring or a
message). Why a figure is what it is belongs beside it in words; when it changed is in git log.

tests/test_docs.py and this file are left out: their examples are what the checks must catch."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"\b(?:issue|session)s?[ \t]*#?\d+|#\d+[ \t]+issues?\b", re.IGNORECASE)
# a function or test named after one: test_issue_12_limits, bench_session3
NAMED = re.compile(r"\bdef \w*?(?:issue|session)s?_?\d+\w*", re.IGNORECASE)
TREES = ("engine", "services", "tests", "scripts", "deploy", "clients")
EXEMPT = {Path("tests/test_docs.py"), Path("tests/test_history_refs.py")}  # their examples are what the checks catch


def history_refs(text: str) -> list[tuple[int, str]]:
    """(line number, match) of every tracker reference in ``text``."""
    return [(n, m.group(0)) for n, line in enumerate(text.splitlines(), 1)
            for pattern in (HISTORY, NAMED) for m in pattern.finditer(line)]


def test_the_patterns_see_each_form_and_pass_behaviour_names() -> None:
    text = ("# Issue 10: cleaning\nx = 1  # (issue #3)\n\'\'\'the #12 issue\'\'\'\ndef test_issue_10_cleaning(): ...\n"
            "def bench_sessions4(): ...\n# a Ray session, an issuer, reissue 2x, issues of tokens, test_issue_gate\n")
    assert [n for n, _ in history_refs(text)] == [1, 2, 3, 4, 5]


def test_no_python_file_names_an_issue_or_a_session() -> None:
    found = []
    files = 0
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel in EXEMPT or ".venv" in rel.parts or "node_modules" in rel.parts:
                continue
            files += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{rel}:{n}: {hit}" for n, hit in history_refs(text)]
    assert files > 200, files  # the scan reads the trees
    assert not found, ("name tests, functions and comments after the behaviour they check, not the issue or session "
                       f"that asked for it (git log keeps that): {found}")

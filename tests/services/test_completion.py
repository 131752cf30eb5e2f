"""``arrayplan completion bash|zsh``: shtab's scripts, run in real shells."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _script(shell: str) -> str:
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "completion", shell], capture_output=True,
                         text=True, cwd=ROOT, timeout=120, check=True)
    return out.stdout


@pytest.fixture(scope="module")
def bash_script() -> str:
    return _script("bash")


def _complete(script: str, words: list[str], cwd: Path = ROOT) -> list[str]:
    """COMPREPLY of the bash function for a command line whose last word is being completed."""
    line = " ".join(words)
    bash = f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _shtab_arrayplan; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    out = subprocess.run(["bash", "-c", bash], capture_output=True, text=True, timeout=30, check=True, cwd=cwd)
    return out.stdout.split()


def test_bash_completes_subcommands_flags_and_choices(bash_script: str) -> None:
    assert _complete(bash_script, ["arrayplan", "rel"]) == ["reliability"]
    assert sorted(_complete(bash_script, ["arrayplan", "reliability", "--method", "''"])) == \
        ["binomial", "closed-form", "markov", "monte-carlo"]
    assert _complete(bash_script, ["arrayplan", "completion", "z"]) == ["zsh"]
    assert _complete(bash_script, ["arrayplan", "store", "b"]) == ["backup"]  # nested subcommands
    assert "--replan" in _complete(bash_script, ["arrayplan", "forecast", "x.yaml", "--re"])


def test_bash_completes_file_names_where_an_argument_takes_a_path(bash_script: str, tmp_path: Path) -> None:
    (tmp_path / "plan-a.yaml").write_text("")
    (tmp_path / "plans").mkdir()
    assert sorted(_complete(bash_script, ["arrayplan", "plan", "pl"], cwd=tmp_path)) == ["plan-a.yaml", "plans"]
    assert _complete(bash_script, ["arrayplan", "serve", "--data-dir", "pl"], cwd=tmp_path) == ["plans"]  # directories only
    assert _complete(bash_script, ["arrayplan", "reliability", "--layout", "pl"], cwd=tmp_path) == []  # not a path


def test_the_former_bash_entry_point_still_completes(bash_script: str) -> None:
    bash = f"{bash_script}\nCOMP_WORDS=(arrayplan pl); COMP_CWORD=1; _arrayplan; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    out = subprocess.run(["bash", "-c", bash], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.split() == ["plan"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_loads_the_script_with_eval_and_registers_it() -> None:
    script = _script("zsh")
    assert script.startswith("#compdef arrayplan")
    check = subprocess.run(["zsh", "-n"], input=script, capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    # As a user's .zshrc does: compinit, then eval the script; compdef must bind the function.
    zsh = 'autoload -U compinit && compinit -u -D; eval "$(cat)"; print -r -- ${_comps[arrayplan]}'
    out = subprocess.run(["zsh", "-f", "-c", zsh], input=script, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "_shtab_arrayplan"

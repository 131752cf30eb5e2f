"""The shape of the ``arrayplan`` command line (services/arrayplan_services/cli/main.py): every
registered command and verb parses and prints its help, the command lines that README and docs/
quote keep parsing to the same command after verbs became nested subparsers (``drives NAME`` is
``drives list NAME``, ``servers --servers ...`` is ``servers pool ...``, ``servers-search`` is
``servers search``), and the command modules share one error path. No server, no simulation:
argparse alone."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from arrayplan_services.cli import common, drives_commands, fit_command, main, servers_command, store_commands
from conftest import ROOT

CLI = ROOT / "services" / "arrayplan_services" / "cli"


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` with its command words, depth first."""
    out = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _parsers(sub, (*path, name))
    return out


def test_every_command_and_verb_has_help_and_a_function_to_run() -> None:
    parsers = _parsers(main.build_parser())
    words = {p for p, _ in parsers}
    assert {("plan",), ("drives", "list"), ("drives", "export"), ("drives", "fit"), ("servers", "pool"),
            ("servers", "search"), ("servers-search",), ("store", "check"), ("store", "backup"), ("store", "restore"),
            ("completion",), ("serve",), ("runs",), ("trace",), ("simulate",), ("reliability",), ("ftl",),
            ("consistency",), ("controller",), ("submit",), ("telemetry",), ("forecast",)} <= words
    for path, parser in parsers:
        text = parser.format_help()
        shown = ("servers", "search") if path == ("servers-search",) else path  # the former name shows the new one
        assert text.startswith(f"usage: {' '.join(('arrayplan', *shown))}"), (path, text[:80])
        has_verbs = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if path and not has_verbs:
            assert callable(parser.get_default("func")), path


@pytest.mark.parametrize(("argv", "func", "expected"), [
    (["drives"], drives_commands.cmd_drives, {"name": None, "kind": "all", "format": "table"}),
    (["drives", "intel-dc-s3500-480gb", "--format", "json"], drives_commands.cmd_drives,
     {"name": "intel-dc-s3500-480gb", "format": "json"}),
    (["drives", "--kind", "hdd"], drives_commands.cmd_drives, {"kind": "hdd", "name": None}),
    (["drives", "list", "x", "--server", "127.0.0.1:1"], drives_commands.cmd_drives, {"name": "x", "server": "127.0.0.1:1"}),
    (["drives", "export", "x", "--catalog", "site"], drives_commands.cmd_drives_export, {"name": "x", "catalog": Path("site")}),
    (["drives", "fit", "--base", "b.toml", "--fio-log", "r.log"], fit_command.cmd_drives_fit, {"base": "b.toml"}),
    (["servers", "--servers", "16", "--drives-per-server", "12", "--drive-bytes", "20TB", "--drive-mbps", "250",
      "--afr", "0.015"], servers_command._handler, {"servers": 16, "drive_bytes": 20e12}),
    (["servers", "search", "--usable", "100TB"], servers_command._search_handler, {"usable": 100e12, "top": 10}),
    (["servers-search", "--usable", "100TB"], servers_command._search_handler, {"usable": 100e12, "top": 10}),
    (["store", "check", "--full"], store_commands.cmd_store_check, {"full": True}),
])
def test_command_lines_the_docs_quote_parse_to_their_command(argv: list[str], func: object, expected: dict[str, object]) -> None:
    args = main.build_parser().parse_args(argv)
    assert args.func is func
    assert {k: getattr(args, k) for k in expected} == expected


def test_a_bad_verb_or_flag_is_argparses_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["store", "mend"], ["drives", "export"], ["servers", "search"], ["drives", "--kind", "tape"]):
        with pytest.raises(SystemExit) as e:
            main.build_parser().parse_args(argv)
        assert e.value.code == common.EXIT_BAD_INPUT, argv
    assert "invalid choice: 'mend'" in capsys.readouterr().err


def test_errors_go_through_the_one_redacting_path(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARRAYPLAN_STORE_URL", "postgresql://u:hunter2-secret@db/x")
    common.err("cannot reach postgresql://u:hunter2-secret@db/x", "drives fit")
    err = capsys.readouterr().err
    assert err.startswith("arrayplan drives fit: cannot reach postgresql://u") and "hunter2-secret" not in err


def test_no_command_module_defines_its_own_error_printer_or_imports_main() -> None:
    """One ``err`` (common.py) for every command module, and none imports main back."""
    own: dict[str, list[str]] = {}
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in ("_err", "err") and path.name != "common.py":
                own.setdefault(path.name, []).append(node.name)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "main":
                own.setdefault(path.name, []).append("imports main")
    assert not own, own

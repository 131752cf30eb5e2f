"""Secrets never printed, tokens never confused, input files confined: the one redaction path
(``arrayplan_services.redaction``) on URLs urllib cannot parse, token files refused for a token
under two names, an open mode, a device or a FIFO, and plan files that are links out of their
folder or whose keys are lines of another file (none of it echoed, errors capped at 20 lines)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arrayplan_services.redaction import MAX_ERROR_LINES, redact_text, redact_url, url_password, url_secrets
from arrayplan_services.server.auth import TokenFileError, parse_token_file
from conftest import ALICE, BOB, ROOT

PW = "s3cr3t-PW-x9"
# URLs urllib.parse.urlsplit refuses or misreads, and libpq's own forms; each holds PW.
HOSTILE_URLS = [
    f"postgresql://arrayplan:{PW}@[::1",
    f"postgresql://arrayplan:{PW}@[::1]:notaport/db",
    f"postgresql://arrayplan:{PW}@host:5432/db?sslmode=require",
    f"postgres://arrayplan:{PW}/with/slash@db/plans",
    f"postgresql://arrayplan@db/plans?password={PW}&sslmode=disable",
    f"postgresql:///plans?host=/tmp&password={PW}",
    f"postgresql://:{PW}@db",
    f"postgresql://a%40b:{PW}@db/x",
    f"postgresql://arrayplan:{PW} with space@db/x",
    f"postgresql://arrayplan:{PW}@with@at@db/x",
]


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_redaction_masks_passwords_urllib_cannot_parse(url: str) -> None:
    assert url_password(url).startswith(PW[:6]), url
    assert PW not in redact_url(url)
    # in running text too (a driver's message quoting the URL), with the URL's secrets as the code
    # passes them, and with nothing told to it when the URL has no white space
    message = f'invalid connection option: "{url}" (missing "]")'
    assert PW not in redact_text(message, url_secrets(url))
    if " " not in url:
        assert PW not in redact_text(message)
    assert "postgres" in redact_url(url)


def test_store_url_password_never_printed_by_serve(tmp_path: Path) -> None:
    """serve --store-url and $ARRAYPLAN_STORE_URL with unparsable URLs: exit 2, one line, no password."""
    for url, via_env in ((HOSTILE_URLS[0], False), (HOSTILE_URLS[0], True), (HOSTILE_URLS[-2], False)):
        args = ["serve", "--data-dir", str(tmp_path / "d"), "--port", "0", "--executor", "local"]
        out = _cli(*args, *([] if via_env else ["--store-url", url]), env={"ARRAYPLAN_STORE_URL": url} if via_env else None)
        text = out.stdout + out.stderr
        assert out.returncode == 2, text
        assert PW not in text, text
        assert "Traceback" not in text and len(out.stderr.strip().splitlines()) == 1, text


def test_token_under_two_names_refused_naming_both_lines(tmp_path: Path) -> None:
    f = tmp_path / "tokens"
    f.write_text(f"# callers\nalice {ALICE}\n\nroot {ALICE} admin\nbob {BOB}\n")
    f.chmod(0o600)
    with pytest.raises(TokenFileError, match=r"token of root is also the token of alice \(lines 2 and 4\)") as info:
        parse_token_file(f)
    assert ALICE not in str(info.value)
    f.write_text(f"alice {ALICE}\nbob {BOB}\n")
    assert [e[0] for e in parse_token_file(f)] == ["alice", "bob"]


@pytest.mark.parametrize("mode", [0o604, 0o606, 0o620, 0o666, 0o644])
def test_token_file_open_to_others_refused_unless_allowed(tmp_path: Path, mode: int) -> None:
    f = tmp_path / "tokens"
    f.write_text(f"alice {ALICE}\n")
    f.chmod(mode)
    with pytest.raises(TokenFileError, match=f"mode {mode:04o}"):
        parse_token_file(f)
    assert parse_token_file(f, allow_open_mode=True)[0][0] == "alice"
    f.chmod(0o640)  # group read: how Kubernetes hands a Secret to a non-root pod (fsGroup)
    assert parse_token_file(f)[0][0] == "alice"


def test_token_file_device_and_fifo_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    for path in (Path("/dev/zero"), fifo):
        started = time.monotonic()
        with pytest.raises(TokenFileError, match="is not a regular file"):
            parse_token_file(path)
        assert time.monotonic() - started < 5  # refused, not read (a FIFO without a writer would block for ever)
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(2 << 20)
    big.chmod(0o600)
    with pytest.raises(TokenFileError, match="over 1048576 bytes"):
        parse_token_file(big)


def test_serve_refuses_bad_token_files_with_one_line(tmp_path: Path) -> None:
    dup = tmp_path / "dup"
    dup.write_text(f"alice {ALICE}\nroot {ALICE} admin\n")
    dup.chmod(0o600)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    opened = tmp_path / "open"
    opened.write_text(f"alice {ALICE}\n")
    opened.chmod(0o666)
    for path, words in ((dup, "lines 1 and 2"), (fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"),
                        (opened, "mode 0666")):
        out = _cli("serve", "--data-dir", str(tmp_path / "d"), "--port", "0", "--executor", "local", "--auth-token-file", str(path))
        assert out.returncode == 2 and words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert ALICE not in out.stderr


# -- plan files ----------------------------------------------------------------------------------

def _shadow_like(tmp_path: Path) -> Path:
    """A file outside the plan's folder whose lines parse as YAML keys (as /etc/shadow's can)."""
    secret_dir = tmp_path / "etc"
    secret_dir.mkdir()
    shadow = secret_dir / "shadow"
    shadow.write_text("".join(f"user{i}: $6$SALT{i}$HASHHASHHASH{i}\n" for i in range(40)))
    return shadow


def test_plan_file_link_out_of_its_folder_refused(tmp_path: Path) -> None:
    shadow = _shadow_like(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "plan.yaml").symlink_to(shadow)
    out = _cli("plan", str(repo / "plan.yaml"), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2, out.stderr
    assert "outside its folder" in out.stderr and "HASH" not in out.stderr + out.stdout
    # with --allow-outside-paths the file is read, and still none of its lines is echoed
    out = _cli("plan", str(repo / "plan.yaml"), "--allow-outside-paths", "--local", "--executor", "local",
               "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2 and "HASH" not in out.stderr + out.stdout and "SALT" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) <= MAX_ERROR_LINES + 2, out.stderr


def test_plan_file_under_a_directory_link_out_of_the_checkout_refused(tmp_path: Path) -> None:
    shadow = _shadow_like(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "cfg").symlink_to(shadow.parent)  # a committed link to a directory elsewhere
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "plan", "cfg/shadow", "--local", "--executor", "local",
                          "--data-dir", str(tmp_path / "d")], capture_output=True, text=True, timeout=120, cwd=repo)
    assert out.returncode == 2 and "outside its folder" in out.stderr and "HASH" not in out.stderr, out.stderr


def test_plan_file_errors_capped_and_long_keys_not_echoed(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    long_key = "k" * 500_000
    body = "".join(f"unknown_{i}: 1\n" for i in range(20_000))
    plan.write_text(f"? {long_key}\n: 1\n{body}workload: {{preset: oltp-8k-70-30}}\n")  # '?': a key over 1,024 characters
    out = _cli("plan", str(plan), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == MAX_ERROR_LINES + 1, lines[-3:]  # 20,001 problems or more: 20 shown, then how many more
    assert re.fullmatch(r"\.\.\. and 19,?9\d\d more", lines[-1]), lines[-1]
    assert len(out.stderr) < 20_000 and "kkkkkkkkkkkkkkkkkkkkkkkk" not in out.stderr
    assert f"{plan}:1: <key>: unknown field" in out.stderr


def test_plan_file_fifo_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo, 0o600)
    done = threading.Event()
    out = _cli("plan", str(fifo), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"), timeout=60)
    done.set()
    assert out.returncode == 2 and "not a regular file" in out.stderr, out.stderr


def test_catalog_files_fifo_device_and_huge_refused_at_once(tmp_path: Path) -> None:
    from arrayplan_engine.catalog import CatalogFileError
    from arrayplan_services.drive_catalog import MAX_CATALOG_FILE_BYTES, load_catalog_dir

    os.mkfifo(tmp_path / "a.toml", 0o600)
    started = time.monotonic()
    with pytest.raises(CatalogFileError, match="not a regular file"):
        load_catalog_dir(tmp_path)
    (tmp_path / "a.toml").unlink()
    (tmp_path / "b.toml").symlink_to("/dev/zero")
    with pytest.raises(CatalogFileError, match="not a regular file"):
        load_catalog_dir(tmp_path)
    (tmp_path / "b.toml").unlink()
    with open(tmp_path / "c.toml", "wb") as fh:
        fh.truncate(MAX_CATALOG_FILE_BYTES + 10)
    with pytest.raises(CatalogFileError, match="over 1,048,576 bytes"):
        load_catalog_dir(tmp_path)
    assert time.monotonic() - started < 10

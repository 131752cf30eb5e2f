"""Bearer tokens: a file of named tokens, checked in constant time, reloaded on SIGHUP; and who
may read and cancel a stored plan.

The token file has one token per line: ``NAME TOKEN`` or ``NAME TOKEN admin``; blank lines and
lines starting with ``#`` are ignored. A request carries ``authorization: Bearer TOKEN``. The
name is what a plan records as its creator. A plan, its trace and its spec are read (GetPlan,
GetPlanTrace, ListPlans, WatchPlan) and cancelled by its creator and admin tokens only; with
``serve --shared-reads`` every token may read every plan (cancelling stays restricted). Without a
token file every caller is an anonymous admin, so everything is readable. The health service
stays open (load balancers and kubelet probes carry no token).

Another caller's plan answers PERMISSION_DENIED, not NOT_FOUND: in this API a plan's existence is
not secret (plan ids share one namespace, so CreatePlan with a taken ``plan_id`` says it exists,
and CancelPlan has always answered PERMISSION_DENIED), its content is; and "created by another
caller" tells someone using the wrong token what is wrong where NOT_FOUND would mislead.
"""

from __future__ import annotations

import hmac
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..api.errors import PermissionDeniedError

log = logging.getLogger(__name__)
OPEN_SERVICES = ("/grpc.health.v1.Health/",)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}", re.ASCII)
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True, slots=True)
class Caller:
    name: str
    admin: bool


class TokenFileError(ValueError):
    """The token file cannot be used (the message names the line, never a token)."""


MAX_TOKEN_FILE_BYTES = 1 << 20  # 1 MiB: thousands of lines; a device or a huge file is refused, not read
#: Mode bits a token file may not have: writable by its group, or any access by others (as ssh
#: refuses a private key others can read). Group read stays allowed: it is how Kubernetes hands a
#: Secret to a non-root pod (``fsGroup``, mode 0440).
OPEN_MODE_BITS = 0o027


def read_token_text(path: Path, *, allow_open_mode: bool = False) -> str:
    """The text of a token file: a regular file (a FIFO, a device such as /dev/zero is refused at
    once, without blocking), at most MAX_TOKEN_FILE_BYTES, read with that limit, not readable by
    others (``OPEN_MODE_BITS``) unless ``allow_open_mode``."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise TokenFileError(f"cannot read the token file {path}: {exc.strerror or type(exc).__name__}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TokenFileError(f"the token file {path} is not a regular file")
        if st.st_mode & OPEN_MODE_BITS and not allow_open_mode:
            raise TokenFileError(f"the token file {path} has mode {stat.S_IMODE(st.st_mode):04o}: others may read or change "
                                 f"it (chmod 600 or 640; or --allow-open-token-file)")
        raw = f.read(MAX_TOKEN_FILE_BYTES + 1)
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise TokenFileError(f"the token file {path} is over {MAX_TOKEN_FILE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenFileError(f"the token file {path} is not UTF-8 text") from None


def parse_token_file(path: Path, *, allow_open_mode: bool = False) -> tuple[tuple[str, bytes, bool], ...]:
    """The entries of a token file. A name appears once and a token belongs to one name: a token
    under two names would make a caller whichever name came last, so the file is refused, naming
    both lines (never the token)."""
    text = read_token_text(path, allow_open_mode=allow_open_mode)
    entries: list[tuple[str, bytes, bool]] = []
    names: dict[str, int] = {}
    tokens: dict[bytes, tuple[int, str]] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "admin"):
            raise TokenFileError(f"{path}:{lineno}: expected 'NAME TOKEN' or 'NAME TOKEN admin'")
        name, token = parts[0], parts[1]
        if not _NAME_RE.fullmatch(name):
            raise TokenFileError(f"{path}:{lineno}: a name is 1-64 letters, digits, '.', '_', '@' or '-'")
        if len(token) < MIN_TOKEN_CHARS:
            raise TokenFileError(f"{path}:{lineno}: the token of {name} is shorter than {MIN_TOKEN_CHARS} characters")
        if name in names:
            raise TokenFileError(f"{path}:{lineno}: the name {name} appears twice (lines {names[name]} and {lineno})")
        key = token.encode()
        if key in tokens:
            first_line, first_name = tokens[key]
            raise TokenFileError(f"{path}:{lineno}: the token of {name} is also the token of {first_name} (lines {first_line} "
                                 f"and {lineno}); a token names one caller")
        names[name] = lineno
        tokens[key] = (lineno, name)
        entries.append((name, key, len(parts) == 3))
    if not entries:
        raise TokenFileError(f"{path}: no tokens (lines 'NAME TOKEN [admin]')")
    return tuple(entries)


class Authenticator:
    """Resolves the ``authorization`` metadata of a call to a Caller."""

    def __init__(self, path: Path | None, *, allow_open_mode: bool = False) -> None:
        self.path = Path(path) if path else None
        self.allow_open_mode = allow_open_mode
        self._lock = threading.Lock()
        self._entries: tuple[tuple[str, bytes, bool], ...] = ()
        if self.path is not None:
            self._entries = parse_token_file(self.path, allow_open_mode=allow_open_mode)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def reload(self) -> bool:
        """Re-read the token file (SIGHUP); on a bad file keep the tokens in use and log why."""
        if self.path is None:
            return False
        try:
            entries = parse_token_file(self.path, allow_open_mode=self.allow_open_mode)
        except TokenFileError as exc:  # one line; it names the file and line, never a token
            log.error("token file not reloaded, the previous tokens stay in use: %s", exc)
            return False
        with self._lock:
            self._entries = entries
        log.warning("token file reloaded: %d token(s)", len(entries))
        return True

    def caller(self, metadata: object) -> Caller | None:
        """The caller of a request with this metadata; None for no or an unknown token. With no
        token file every caller is an anonymous admin."""
        if self.path is None:
            return Caller(name="", admin=True)
        presented = b""
        for key, value in metadata or ():  # type: ignore[attr-defined]
            if key == "authorization":
                text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                if text[:7].lower() == "bearer ":
                    presented = text[7:].strip().encode("latin-1", "replace")
                break
        if not presented:
            return None
        with self._lock:
            entries = self._entries
        found: Caller | None = None
        for name, token, admin in entries:  # every entry is compared: the time does not say which matched
            if hmac.compare_digest(presented, token):
                found = Caller(name=name, admin=admin)
        return found


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadPolicy:
    """Who may read a stored plan (its spec, progress, result and trace)."""

    #: ``serve --shared-reads``: every known token reads every plan.
    shared_reads: bool = False

    def reads_all(self, caller: Caller) -> bool:
        """Whether ``caller`` reads every plan (admins, shared reads, a server without tokens)."""
        return self.shared_reads or caller.admin

    def may_read(self, caller: Caller, creator: str) -> bool:
        return self.reads_all(caller) or caller.name == creator

    def check(self, caller: Caller, name: str, creator: str) -> None:
        """Raise PermissionDeniedError unless ``caller`` may read the plan ``name``."""
        if not self.may_read(caller, creator):
            raise self.denied(name)

    @staticmethod
    def denied(name: str) -> PermissionDeniedError:
        """The refusal of a read of another caller's plan (it never names the creator)."""
        return PermissionDeniedError(f"{name[:200]} was created by another caller; only its creator or an admin token may read it "
                                     "(unless the server runs with --shared-reads)")

    def list_creator(self, caller: Caller) -> str | None:
        """The creator ListPlans is limited to for ``caller``; None lists every plan."""
        return None if self.reads_all(caller) else caller.name


def may_cancel(caller: Caller, creator: str) -> bool:
    """Only a plan's creator or an admin token cancels it (shared reads do not change that)."""
    return caller.admin or caller.name == creator

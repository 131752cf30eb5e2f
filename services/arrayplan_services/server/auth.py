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


def parse_token_file(path: Path) -> tuple[tuple[str, bytes, bool], ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"cannot read the token file {path}: {type(exc).__name__}") from None
    entries: list[tuple[str, bytes, bool]] = []
    names: set[str] = set()
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
            raise TokenFileError(f"{path}:{lineno}: the name {name} appears twice")
        names.add(name)
        entries.append((name, token.encode(), len(parts) == 3))
    if not entries:
        raise TokenFileError(f"{path}: no tokens (lines 'NAME TOKEN [admin]')")
    return tuple(entries)


class Authenticator:
    """Resolves the ``authorization`` metadata of a call to a Caller."""

    def __init__(self, path: Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._entries: tuple[tuple[str, bytes, bool], ...] = ()
        if self.path is not None:
            self._entries = parse_token_file(self.path)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def reload(self) -> bool:
        """Re-read the token file (SIGHUP); on a bad file keep the tokens in use and log why."""
        if self.path is None:
            return False
        try:
            entries = parse_token_file(self.path)
        except TokenFileError as exc:
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

"""The one redaction path for messages that can hold a secret or a file's content.

Every message the CLI prints to stderr (``cli.common.err``), every line the server logs (a filter
on its log handler, ``install_log_filter``) and every store error (``store.postgres``) goes
through ``redact_text``:

* a URL's userinfo password (``scheme://USER:PASSWORD@host``) is dropped (``scheme://USER@host``). The URL is found
  and masked by a pattern, not parsed: ``urllib.parse`` gives up on exactly the URLs a typo
  makes (``postgresql://u:PW@[::1``), and a redaction that fails open prints the password;
* ``password=...`` (URL query or libpq conninfo, also ``sslpassword``, ``passwd``, ``pwd``),
  ``authorization: Bearer ...`` and ``token=...`` values become ``***``;
* any ``secrets`` the caller names (the password it extracted, a token) are replaced wherever they
  appear, even split from their URL by a driver's quoting.

``cap_lines`` bounds a multi-line error (``MAX_ERROR_LINES`` lines, then "... and N more") and
``shown_key`` a key echoed from an input file (at most ``MAX_SHOWN_KEY_CHARS`` characters, and
only a key that looks like a field name: anything else is shown by position only, so a line of
``/etc/shadow`` read as a YAML key is never printed).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

MAX_ERROR_LINES = 20
MAX_SHOWN_KEY_CHARS = 64
MASK = "***"

# scheme://USERINFO@ : USERINFO is everything up to the last '@' before whitespace or a quote, so a
# password holding '/', '?', '#', '[' or ':' is masked too (masking too much is fine, too little is not).
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s'\"<>]*)@")
_KEY_VALUE = re.compile(r"(?i)\b(?P<key>(?:ssl)?password|passwd|pwd|token|secret|api[_-]?key)(?P<sep>\s*=\s*)"
                        r"(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&;,'\"]+)")
_BEARER = re.compile(r"(?i)\b(?P<key>bearer)\s+(?P<value>[^\s'\"]+)")
_MORE = re.compile(r"\.\.\. and \d+ more")
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _mask_userinfo(m: re.Match[str]) -> str:
    userinfo = m.group("userinfo")
    # the user name stays (it says which account); everything after its first ':' is the password
    user, sep, _ = userinfo.partition(":")
    if "@" in user or "/" in user:  # not a plain user name: show none of it
        return f"{m.group('scheme')}{MASK}@"
    del sep  # the password goes with its ':' (postgresql://arrayplan@db/plans, as libpq prints a URL without one)
    return f"{m.group('scheme')}{user}@"


def url_password(url: str) -> str:
    """The password a URL carries (userinfo or ``password=`` parameter), found without parsing
    the URL, so also in one ``urllib`` refuses; "" if none."""
    found = ""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        # everything between the user's ':' and the last '@' (a password may hold '@', '/', spaces:
        # taking too much only masks more)
        found = rest.rsplit("@", 1)[0].partition(":")[2]
    for kv in _KEY_VALUE.finditer(url):
        if kv.group("key").lower() in ("password", "sslpassword", "passwd", "pwd"):
            found = kv.group("value").strip("'\"")
    return found


def url_secrets(url: str) -> tuple[str, ...]:
    """The password of ``url`` as written and percent-decoded (a driver may print either)."""
    import urllib.parse

    pw = url_password(url)
    return (pw, urllib.parse.unquote(pw)) if pw else ()


_REGISTERED: set[str] = set()


def register_secrets(secrets: Iterable[str]) -> None:
    """Secrets this process knows (the store URL's password, the CLI's token): every later
    ``redact_text`` masks them too, whoever calls it. Strings under 6 characters are not
    registered (masking every "ab" would garble messages; such a password is masked by pattern)."""
    _REGISTERED.update(s for s in secrets if s and len(s) >= 6)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL password, ``password=``/``token=`` value, bearer token, each of
    ``secrets`` and each registered secret replaced by ``***``."""
    out = str(text)
    for secret in sorted({s for s in secrets if s} | _REGISTERED, key=len, reverse=True):
        out = out.replace(secret, MASK)
    out = _URL_USERINFO.sub(_mask_userinfo, out)
    out = _KEY_VALUE.sub(lambda m: f"{m.group('key')}{m.group('sep')}{MASK}", out)
    out = _BEARER.sub(lambda m: f"{m.group('key')} {MASK}", out)
    return out


def redact_url(url: str) -> str:
    """A URL for messages: its password dropped (``postgresql://arrayplan@db/plans``)."""
    return redact_text(url, url_secrets(url))


def cap_lines(lines: list[str], limit: int = MAX_ERROR_LINES) -> list[str]:
    """At most ``limit`` lines, then one "... and N more" line."""
    if len(lines) <= limit or (len(lines) == limit + 1 and _MORE.fullmatch(lines[-1])):  # capped already
        return lines
    return lines[:limit] + [f"... and {len(lines) - limit} more"]


def cap_text(text: str, limit: int = MAX_ERROR_LINES) -> str:
    return "\n".join(cap_lines(text.splitlines(), limit))


def shown_key(key: object) -> str | None:
    """A key read from an input file, fit to echo: a field-like name of at most
    MAX_SHOWN_KEY_CHARS characters; None for anything else (shown by its position only)."""
    text = str(key)
    if len(text) <= MAX_SHOWN_KEY_CHARS and _FIELD_NAME.fullmatch(text):
        return text
    return None


class RedactingFilter(logging.Filter):
    """A log filter that passes every record's message through ``redact_text`` (the server's
    logs go to files and collectors that are read by more people than its token file is)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logged as it is
            return True
        redacted = redact_text(message, self.secrets)
        if record.exc_info and record.exc_info[1] is not None:
            redacted_exc = redact_text(str(record.exc_info[1]), self.secrets)
            if redacted_exc != str(record.exc_info[1]):
                record.exc_info = None  # the traceback would print the secret: one line instead
                record.exc_text = None
                redacted += f" ({redacted_exc.splitlines()[0] if redacted_exc else ''})"
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class OneLineGrpcErrors(logging.Filter):
    """gRPC logs each request it cannot decode ("Exception deserializing request!") with a 7-line
    traceback: 3.2 MB of log for 6,000 malformed requests. Its records with a traceback become one
    line naming the exception (the traceback is gRPC's own code, never ours)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("grpc") and record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            first = (str(exc).splitlines() or [""])[0][:200]
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001
                message = str(record.msg)
            record.msg, record.args = f"{message} ({type(exc).__name__}: {first})", None
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def install_log_filter(secrets: Iterable[str] = ()) -> None:
    """Redact every record of every handler on the root logger, and make gRPC's per-request
    tracebacks one line (call after ``basicConfig``)."""
    one_line = OneLineGrpcErrors()
    redacting = RedactingFilter(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(one_line)
        handler.addFilter(redacting)

"""Run store (SQLite by default)."""

from .sqlite import TERMINAL_STATES, RunRow, RunStore

__all__ = ["TERMINAL_STATES", "RunRow", "RunStore"]

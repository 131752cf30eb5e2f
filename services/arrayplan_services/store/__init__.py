"""Run store (SQLite by default)."""

from .sqlite import TERMINAL_STATES, RunRow, RunStore, StoreUnavailableError, check_data_dir, unavailable_condition

__all__ = ["TERMINAL_STATES", "RunRow", "RunStore", "StoreUnavailableError", "check_data_dir", "unavailable_condition"]

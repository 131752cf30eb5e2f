"""Run store (SQLite by default)."""

from .sqlite import (
    STORE_FILE,
    TERMINAL_STATES,
    RunRow,
    RunStore,
    StoreDamagedError,
    StoreUnavailableError,
    backup_store,
    check_data_dir,
    check_store,
    count_plans,
    restore_store,
    unavailable_condition,
)

__all__ = ["STORE_FILE", "TERMINAL_STATES", "RunRow", "RunStore", "StoreDamagedError", "StoreUnavailableError", "backup_store",
           "check_data_dir", "check_store", "count_plans", "restore_store", "unavailable_condition"]

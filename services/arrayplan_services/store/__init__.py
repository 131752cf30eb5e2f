"""Run store: SQLite by default (sqlite.py), PostgreSQL for several replicas (postgres.py); the
interface both implement is base.PlanStore, and base.open_store picks one. The queries both run
are written once, in sql.py."""

from .base import PlanStore, is_postgres_url, open_store
from .sql import TERMINAL_STATES, RunRow, StoreConnectError, StoreUnavailableError, StoreUrlError
from .sqlite import (
    STORE_FILE,
    RunStore,
    StoreDamagedError,
    StoreLiveError,
    backup_store,
    check_data_dir,
    check_store,
    count_plans,
    restore_store,
    unavailable_condition,
)

__all__ = ["STORE_FILE", "TERMINAL_STATES", "PlanStore", "RunRow", "RunStore", "StoreConnectError", "StoreDamagedError", "StoreLiveError",
           "StoreUnavailableError", "StoreUrlError", "backup_store", "check_data_dir", "check_store", "count_plans",
           "is_postgres_url", "open_store", "restore_store", "unavailable_condition"]

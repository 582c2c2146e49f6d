"""Session stores: the append-only ``Store`` protocol and its SQLite implementation."""

from __future__ import annotations

from ctxengine.stores.base import ImportedLog, ImportRecord, ImportResult, SessionInfo, Store
from ctxengine.stores.sqlite import DB_ENV_VAR, SQLiteStore, default_db_path

__all__ = [
    "DB_ENV_VAR",
    "ImportRecord",
    "ImportResult",
    "ImportedLog",
    "SQLiteStore",
    "SessionInfo",
    "Store",
    "default_db_path",
]

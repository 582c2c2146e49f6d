"""Session stores: the append-only ``Store`` protocol and its SQLite implementation.

The names below are loaded from their modules on first use (PEP 562): a module that needs
only the protocol (:mod:`ctxengine.stores.base`) does not import :mod:`sqlite3`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxengine._runtime import load_name

if TYPE_CHECKING:
    from ctxengine.stores.base import (
        ImportedLog,
        ImportRecord,
        ImportResult,
        SessionInfo,
        SessionLink,
        Store,
    )
    from ctxengine.stores.sqlite import DB_ENV_VAR, SQLiteStore, default_db_path

__all__ = [
    "DB_ENV_VAR",
    "ImportRecord",
    "ImportResult",
    "ImportedLog",
    "SQLiteStore",
    "SessionInfo",
    "SessionLink",
    "Store",
    "default_db_path",
]

#: The module each public name is loaded from on first use.
_HOMES: dict[str, str] = {
    **dict.fromkeys(
        ("ImportRecord", "ImportResult", "ImportedLog", "SessionInfo", "SessionLink", "Store"),
        "base",
    ),
    **dict.fromkeys(("DB_ENV_VAR", "SQLiteStore", "default_db_path"), "sqlite"),
}


#: :data:`_HOMES` as dotted module paths.
_HOMES_FULL = {name: f"{__name__}.{home}" for name, home in _HOMES.items()}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (PEP 562).

    Raises:
        AttributeError: ``name`` is not a public name (nor a submodule already imported).
    """
    return load_name(__name__, _HOMES_FULL, globals(), name)

"""Where a store lives: a SQLite file path or URL, or a PostgreSQL URL, opened as a store.

Every front that chooses a store (``--db``, ``$CTXENGINE_DB``, ``Session(store=...)``) passes
what the user gave to :func:`open_store`:

* ``postgresql://user:password@host:port/database`` (also ``postgres://`` and
  ``postgresql+psycopg://``): a :class:`~ctxengine.stores.postgres.PostgresStore`, which
  needs the ``postgres`` extra (SQLAlchemy 2 and psycopg 3, imported only then);
* ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, ``sqlite:///:memory:``:
  a :class:`~ctxengine.stores.sqlite.SQLiteStore` at that path (SQLAlchemy's form);
* anything else: a SQLite database file path (``":memory:"`` too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from ctxengine.errors import ConfigError

if TYPE_CHECKING:
    from ctxengine.stores.postgres import PostgresStore
    from ctxengine.stores.sqlite import SQLiteStore

#: A store :func:`open_store` returns (both have ``path``: the file, or the URL shown).
OpenedStore: TypeAlias = "SQLiteStore | PostgresStore"
#: URL schemes read as PostgreSQL.
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
#: The scheme prefix of a SQLite URL (SQLAlchemy's form: three slashes, then the path).
SQLITE_URL_PREFIX = "sqlite:///"


def is_postgres_url(location: str) -> bool:
    """True when ``location`` is a PostgreSQL URL (one of :data:`POSTGRES_SCHEMES`)."""
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in POSTGRES_SCHEMES


def sqlite_path(location: str) -> str:
    """The SQLite file path ``location`` names: the path of a ``sqlite:///…`` URL (a fourth
    slash makes it absolute), else ``location`` itself.

    Raises:
        ConfigError: ``location`` is a URL of another scheme than sqlite or postgresql, or a
            sqlite URL without a path.
    """
    if location.startswith(SQLITE_URL_PREFIX):
        path = location[len(SQLITE_URL_PREFIX) :]
        if not path:
            raise ConfigError(f"{location!r}: a sqlite URL needs a path (sqlite:///ctx.db)")
        return path
    scheme, sep, _ = location.partition("://")
    if sep and scheme.isascii() and scheme.replace("+", "").isalnum():
        raise ConfigError(
            f"{redact(location)!r}: unknown store URL scheme {scheme!r} (expected a file path, "
            "sqlite:///path or postgresql://user@host/database)"
        )
    return location


def redact(location: str) -> str:
    """``location`` with the password of a URL replaced by ``***`` (paths unchanged), for
    messages and listings."""
    if "://" not in location:
        return location
    parts = urlsplit(location)
    if parts.password is None:
        return location
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def open_store(
    location: str | None,
    *,
    busy_timeout_s: float | None = None,
    read_only: bool = False,
) -> OpenedStore:
    """The store at ``location`` (see the module docstring); ``None`` or ``""``: the default
    SQLite file (``$CTXENGINE_DB`` when set, else the user data directory; a PostgreSQL URL in
    ``$CTXENGINE_DB`` opens that).

    Args:
        location: a file path, a ``sqlite:///`` URL or a PostgreSQL URL, or ``None``.
        busy_timeout_s: seconds a write waits for another writer before
            :class:`~ctxengine.errors.StoreBusy` (default ``$CTXENGINE_BUSY_TIMEOUT``, else 5).
        read_only: open an existing store without writing anything.

    Raises:
        ConfigError: an unknown URL scheme; a PostgreSQL URL without the ``postgres`` extra
            installed; a bad busy timeout.
        StoreMissing: ``read_only`` and no store exists there.
        StoreError: the store cannot be opened (see each store class).
    """
    import os

    from ctxengine.stores.sqlite import DB_ENV_VAR

    if not location:
        location = os.environ.get(DB_ENV_VAR) or None
    if location is not None and is_postgres_url(location):
        try:
            from ctxengine.stores.postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                "a postgresql:// store needs the postgres extra "
                f"(pip install 'ctxengine[postgres]'): {exc}"
            ) from exc
        return PostgresStore(location, busy_timeout_s=busy_timeout_s, read_only=read_only)
    from ctxengine.stores.sqlite import SQLiteStore

    path = None if location is None else sqlite_path(location)
    return SQLiteStore(path, busy_timeout_s=busy_timeout_s, read_only=read_only)


def store_label(location: str | None) -> str:
    """How messages name the store ``open_store(location)`` would open, nothing created: a
    PostgreSQL URL with its password hidden, else the SQLite file path."""
    import os

    from ctxengine.stores.sqlite import DB_ENV_VAR, default_db_path

    if not location:
        location = os.environ.get(DB_ENV_VAR) or None
    if location is not None and is_postgres_url(location):
        return redact(location)
    if location is None:
        return str(default_db_path(create_dir=False))
    return sqlite_path(location)

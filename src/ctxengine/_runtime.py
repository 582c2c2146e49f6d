"""Process-level helpers every layer may use: names a package loads on first use (PEP 562),
and pausing the cyclic garbage collector around allocation-heavy work."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from importlib import import_module
from typing import Any


def load_name(
    package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any], name: str
) -> Any:
    """The body of a package's module-level ``__getattr__`` (PEP 562): public ``name``
    imported from the module ``homes`` names for it (a dotted module path), and kept in the
    package's ``namespace`` (its ``globals()``) so that the next access is a plain lookup.

    Raises:
        AttributeError: ``name`` is not in ``homes`` (nor a submodule already imported).
    """
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    namespace[name] = value
    return value


def names(namespace: Mapping[str, Any], public: Iterable[str]) -> list[str]:
    """The body of a lazy package's ``__dir__``: what it holds now and every public name,
    sorted."""
    return sorted({*namespace, *public})


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block. Work that allocates many small
    objects that stay alive (a transcript's entries, a compaction's ledgers) holds no cycles
    worth collecting, and each automatic collection would walk all of them again (up to half
    the parse time on formats with short records: Cursor 10 → 20 MB/s). Reference counting
    still frees the rest at once. The collector is enabled again on exit only when it was
    enabled on entry (a caller that disabled it keeps it disabled)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["collector_paused", "load_name", "names"]

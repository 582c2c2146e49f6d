"""Shared helper: the indices of ``0..n`` that no forbidden open interval covers."""

from __future__ import annotations

from collections.abc import Iterable


def uncovered(
    n: int, spans: Iterable[tuple[int, int]], also_unsafe: Iterable[int] = ()
) -> frozenset[int]:
    """Indices ``i`` in ``0..n`` with no span ``(lo, hi)`` such that ``lo < i <= hi``, minus
    ``also_unsafe``. Linear in ``n`` plus the number of spans."""
    delta = [0] * (n + 2)
    for lo, hi in spans:
        if hi > lo:
            delta[lo + 1] += 1
            delta[min(hi, n) + 1] -= 1
    out: set[int] = set()
    depth = 0
    for i in range(n + 1):
        depth += delta[i]
        if depth == 0:
            out.add(i)
    return frozenset(out.difference(also_unsafe))

"""Choosing the window so that exactly k compactions happen.

The number of compactions a replay records falls as the window grows (not strictly: the
ladder's cut points can make it jump). :class:`WindowSearch` searches (interpolation steps,
taking the count as linear in 1/window, alternating with bisection steps) for the *largest* window
with at least k compactions, so that the k-th compaction happens as late as possible: at the
end of the session, the continuation state then stands for as much of it as the window
allows. When the count jumps over k at that boundary, the bracket is narrowed to one token
(a narrow band may still give exactly k), then smaller windows are tried in small steps.
Every count is memoised, so the searches for several k over one session share their replays.
Deterministic: the same counts give the same windows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: Smallest window the benchmark replays at, in tokens. Below it the continuation state's
#: budget (15 % of the window) is under 600 tokens, less than the goal and the rules of a
#: planted session need: the benchmark would measure that budget rather than the state. A k
#: that needs a smaller window is reported as unreachable for that session.
MIN_BENCH_WINDOW = 4_000
#: The bisection stops when the bracket is narrower than this share of the window.
BRACKET_RATIO = 0.02
#: After the bisection, smaller windows tried (each :data:`SCAN_RATIO` smaller) when the
#: count at the boundary is not exactly k.
SCAN_STEPS = 40
SCAN_RATIO = 0.01

#: Compactions a replay at a window records (``None``: the window is too small).
Counter = Callable[[int], "int | None"]


@dataclass(slots=True)
class WindowSearch:
    """Window search over one session and policy.

    Args:
        count: compactions at a window (tokens).
        floor: smallest window tried (tokens).
        upper: a window at which no compaction happens (e.g. twice the session's size).

    Attributes:
        memo: every count made, by window.
    """

    count: Counter
    upper: int
    floor: int = MIN_BENCH_WINDOW
    memo: dict[int, int | None] = field(default_factory=dict)

    def at(self, window: int) -> int | None:
        """The memoised count at ``window``."""
        if window not in self.memo:
            self.memo[window] = self.count(window)
        return self.memo[window]

    def _at_least(self, window: int, k: int) -> bool:
        c = self.at(window)
        return c is None or c >= k

    def _bisect(self, k: int, lo: int, hi: int, width: int) -> tuple[int, int]:
        """Narrow ``[lo, hi]`` (at least k compactions at ``lo``, fewer at ``hi``) to
        ``width`` tokens."""
        step = 0
        while hi - lo > width:
            mid = self._guess(k, lo, hi) if step % 3 != 2 else (lo + hi) // 2
            step += 1
            if self._at_least(mid, k):
                lo = mid
            else:
                hi = mid
        return lo, hi

    def _guess(self, k: int, lo: int, hi: int) -> int:
        """Where the count crosses ``k - ½`` between ``lo`` and ``hi``, taking it as linear
        in 1/window (a compaction every so many tokens of growth); kept at least an eighth
        of the bracket from either end, so that every step still narrows it."""
        c_lo, c_hi = self.memo.get(lo), self.memo.get(hi)
        margin = max(1, (hi - lo) // 8)
        if c_lo is None or c_hi is None or c_lo == c_hi:
            return (lo + hi) // 2
        x = 1 / hi + (k - 0.5 - c_hi) * (1 / lo - 1 / hi) / (c_lo - c_hi)
        guess = int(1 / x) if x > 0 else (lo + hi) // 2
        return min(max(guess, lo + margin), hi - margin)

    def find(self, k: int) -> int | None:
        """The largest window (within :data:`BRACKET_RATIO`) with exactly ``k`` compactions,
        or ``None`` when none was found.

        Raises:
            ValueError: ``k < 1``.
        """
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        upper = self.upper
        while self._at_least(upper, k):
            upper *= 2
        lo = max(
            (w for w in self.memo if self.floor <= w < upper and self._at_least(w, k)),
            default=self.floor,
        )
        hi = min(w for w in self.memo if w > lo and not self._at_least(w, k))
        if not self._at_least(lo, k):
            return None  # even the smallest window compacts fewer than k times
        lo, hi = self._bisect(k, lo, hi, max(1, int(lo * BRACKET_RATIO)))
        if self.at(lo) != k:
            # the count jumps over k near the boundary: a narrow band may still give k
            lo, hi = self._bisect(k, lo, hi, 1)
        if self.at(lo) == k:
            return lo
        step = max(1, int(lo * SCAN_RATIO))
        for i in range(1, SCAN_STEPS + 1):
            w = lo - i * step
            if w < self.floor:
                break
            if self.at(w) == k:
                return w
        return None

"""A provider prompt cache, simulated over the requests of one session. Pure.

A request is a sequence of :class:`Block` values (the rendered request cut into blocks —
system prompt, tool list, one block per message — each with a digest of its content and its
size in estimated tokens), the number of leading blocks that form its head, and the time it
was sent (seconds; ``None`` when the transcript has no times). The cache stores prefixes by
the chained digest of their blocks, so a prefix matches exactly when every block before it is
equal.

Rules (:class:`~ctxengine.cost.prices.CacheRules`):

- ``automatic`` (OpenAI): every prefix of every request is written; a request reads the
  longest stored prefix it starts with, rounded down to ``granularity_tokens``, and nothing
  below ``min_prefix_tokens``. Writes cost nothing extra (they are priced as input).
- ``breakpoints`` (Anthropic ``cache_control``): a request writes the prefixes ending at its
  breakpoints (the end of its head and its end, at most ``max_breakpoints``), when at least
  ``min_prefix_tokens`` long; it reads the longest stored prefix ending at a block boundary
  no more than ``lookback_blocks`` blocks before one of its breakpoints. The tokens from the
  read point to its last breakpoint are the cache write.
- Lifetime: a stored prefix expires ``ttl_s`` seconds after its last write or read (the long
  lifetime when asked for); without times nothing expires.

A cache break is a request that reads less than the previous request left cached
(:attr:`CacheOutcome.expected`). :func:`break_cause` names why: the first block that changed
lies in the head (``head change``) or after it (``edit``; a caller that knows better names
it ``compaction`` or ``prune``); nothing changed but the prefix expired (``expired``); or it
grew by more blocks than a breakpoint looks back (``lookback``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxengine.cost.prices import CacheRules

#: Seed of the chained digest (the empty prefix).
_ROOT = 0x5EED


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a rendered request.

    Attributes:
        key: digest of its rendered content (equal content, equal key).
        tokens: its size in estimated tokens.
    """

    key: int
    tokens: int


@dataclass(frozen=True, slots=True)
class CacheRequest:
    """One request as the cache sees it.

    Attributes:
        blocks: the request's blocks, head first.
        head_blocks: how many leading blocks form the head (system prompt, tools).
        at: when it was sent, in seconds (any epoch), or ``None``.
    """

    blocks: Sequence[Block]
    head_blocks: int = 0
    at: float | None = None


@dataclass(frozen=True, slots=True)
class CacheOutcome:
    """What the cache did with one request. All sizes in tokens.

    Attributes:
        prompt: the request's size.
        read: served from the cache.
        write: written to the cache (``automatic``: the part not read, at no surcharge).
        expected: what the previous request left cached (the longest prefix it wrote or
            read): all of it is read when this request starts with the previous one, within
            its lifetime.
        common: size of the longest prefix shared with the previous request.
        changed_block: index of the first block that differs from the previous request
            (``None`` when this request starts with the whole previous one).
        head_changed: the first change lies in the head.
        expired: a longer stored prefix matched but had expired.
    """

    prompt: int
    read: int
    write: int
    expected: int
    common: int
    changed_block: int | None
    head_changed: bool
    expired: bool

    @property
    def uncached(self) -> int:
        """Input neither read nor written (tokens)."""
        return self.prompt - self.read - self.write

    @property
    def lost(self) -> int:
        """Tokens the previous request left cached that this one did not read (a
        compaction lowers the prompt below them: those tokens are not sent again)."""
        return max(0, self.expected - self.read)

    @property
    def is_break(self) -> bool:
        """This request read less than the previous one left cached for it."""
        return self.read < self.expected


@dataclass(slots=True)
class _Entry:
    tokens: int
    used_at: float | None


@dataclass(slots=True)
class PrefixCache:
    """The cache of one session under ``rules`` (``long_ttl``: written with the long
    lifetime). Feed it the session's requests in order with :meth:`send`."""

    rules: CacheRules
    long_ttl: bool = False
    _store: dict[int, _Entry] = field(default_factory=dict)
    _previous: list[int] = field(default_factory=list)
    _previous_written: int = 0

    @property
    def ttl_s(self) -> float:
        """Lifetime of a stored prefix after its last use, in seconds."""
        return self.rules.long_ttl_s if self.long_ttl else self.rules.ttl_s

    def send(self, request: CacheRequest) -> CacheOutcome:
        """Simulate ``request``: what it reads and writes, and what it shares with the
        previous request. Updates the stored prefixes."""
        blocks = request.blocks
        n = len(blocks)
        chain = [_ROOT]
        sizes = [0]
        h = _ROOT
        total = 0
        for block in blocks:
            h = hash((h, block.key))
            total += block.tokens
            chain.append(h)
            sizes.append(total)
        same = _shared(self._previous, chain)
        changed = None if same >= len(self._previous) - 1 else same
        expected = self._previous_written
        if self.rules.mode == "automatic":
            read, expired = self._read(chain, sizes, range(n, 0, -1), request.at)
            read = self._floor(read)
            write = total - read if total >= self.rules.min_prefix_tokens else 0
            for i in range(1, n + 1):
                self._store[chain[i]] = _Entry(sizes[i], request.at)
            written = self._floor(total)
        else:
            marks = _breakpoints(n, request.head_blocks, self.rules.max_breakpoints)
            look = self.rules.lookback_blocks
            candidates = sorted(
                {j for b in marks for j in range(max(1, b - look), b + 1)}, reverse=True
            )
            read, expired = self._read(chain, sizes, candidates, request.at)
            last = 0
            for b in marks:
                if sizes[b] >= self.rules.min_prefix_tokens:
                    self._store[chain[b]] = _Entry(sizes[b], request.at)
                    last = max(last, sizes[b])
            write = max(0, last - read)
            written = last
        self._previous = chain
        self._previous_written = written
        return CacheOutcome(
            prompt=total,
            read=read,
            write=write,
            expected=expected,
            common=sizes[same],
            changed_block=changed,
            head_changed=changed is not None and changed < request.head_blocks,
            expired=expired,
        )

    def _read(
        self, chain: list[int], sizes: list[int], candidates: Sequence[int], at: float | None
    ) -> tuple[int, bool]:
        """The longest live stored prefix among ``candidates`` (block counts, longest
        first): its size, and whether a longer one had expired. Refreshes the one read."""
        expired = False
        for i in candidates:
            entry = self._store.get(chain[i])
            if entry is None:
                continue
            if at is not None and entry.used_at is not None and at - entry.used_at > self.ttl_s:
                expired = True
                continue
            entry.used_at = at if at is not None else entry.used_at
            return sizes[i], expired
        return 0, expired

    def _floor(self, tokens: int) -> int:
        """``tokens`` rounded down to the granularity, 0 below the minimum prefix."""
        if tokens < self.rules.min_prefix_tokens:
            return 0
        g = self.rules.granularity_tokens
        return tokens // g * g


def break_cause(outcome: CacheOutcome) -> str | None:
    """Why ``outcome`` is a cache break (see the module doc), or ``None`` when it is not
    one: ``"head change"``, ``"edit"``, ``"expired"`` or ``"lookback"``."""
    if not outcome.is_break:
        return None
    if outcome.head_changed:
        return "head change"
    if outcome.changed_block is not None:
        return "edit"
    return "expired" if outcome.expired else "lookback"


def _shared(previous: list[int], chain: list[int]) -> int:
    """Number of leading blocks two chained digests share (their chains agree up to it)."""
    n = min(len(previous), len(chain)) - 1
    if n < 0:
        return 0
    if previous[n] == chain[n]:
        return n
    lo, hi = 0, n  # chain[lo] agrees, chain[hi] differs: prefixes agree up to a point
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if previous[mid] == chain[mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _breakpoints(n: int, head: int, limit: int) -> list[int]:
    """Block counts a request marks: the end of its head and its end (at most ``limit``)."""
    marks = sorted({b for b in (head, n) if b > 0}, reverse=True)
    return marks[: max(0, limit)]

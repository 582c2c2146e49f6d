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

from collections.abc import Iterable, Sequence
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
        reuse: how many leading blocks the caller knows equal the previous request's (their
            chained digests are not computed again: a request that only grows at its tail
            costs the cache O(new blocks)).
    """

    blocks: Sequence[Block]
    head_blocks: int = 0
    at: float | None = None
    reuse: int = 0


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
class PrefixCache:
    """The cache of one session under ``rules`` (``long_ttl``: written with the long
    lifetime). Feed it the session's requests in order with :meth:`send`.

    Stored prefixes are grouped in runs: an ``automatic`` cache writes every prefix of every
    request, and the prefixes of requests that each start with the previous one are all
    used again by the newest, so they share one last-use time (one update per request, not
    one per prefix). A ``breakpoints`` cache gives every written prefix a run of its own.
    """

    rules: CacheRules
    long_ttl: bool = False
    _store: dict[int, tuple[int, int]] = field(default_factory=dict)
    _runs: list[float | None] = field(default_factory=list)
    _run: int = -1
    _chain: list[int] = field(default_factory=lambda: [_ROOT])
    _sizes: list[int] = field(default_factory=lambda: [0])
    _written: int = 0

    @property
    def ttl_s(self) -> float:
        """Lifetime of a stored prefix after its last use, in seconds."""
        return self.rules.long_ttl_s if self.long_ttl else self.rules.ttl_s

    def send(self, request: CacheRequest) -> CacheOutcome:
        """Simulate ``request``: what it reads and writes, and what it shares with the
        previous request. Updates the stored prefixes."""
        blocks = request.blocks
        n = len(blocks)
        previous = self._chain
        reuse = max(0, min(request.reuse, len(previous) - 1, n))
        chain = previous[: reuse + 1]
        sizes = self._sizes[: reuse + 1]
        h, total = chain[-1], sizes[-1]
        for block in blocks[reuse:]:
            h = hash((h, block.key))
            total += block.tokens
            chain.append(h)
            sizes.append(total)
        same = reuse
        limit = min(len(previous), len(chain)) - 1
        while same < limit and previous[same + 1] == chain[same + 1]:
            same += 1
        extends = same >= len(previous) - 1
        at = request.at
        if self.rules.mode == "automatic":
            if not extends or self._run < 0:
                self._run = len(self._runs)
                self._runs.append(at)
            found, expired = self._find(chain, range(n, 0, -1), at)
            read = self._floor(sizes[found])
            write = total - read if total >= self.rules.min_prefix_tokens else 0
            run = self._run
            store = self._store
            for i in range(found, 0, -1):  # the prefixes read join this run
                if store[chain[i]][1] == run:
                    break
                store[chain[i]] = (sizes[i], run)
            for i in range(found + 1, n + 1):
                store[chain[i]] = (sizes[i], run)
            self._runs[run] = at
            written = self._floor(total)
        else:
            marks = _breakpoints(n, request.head_blocks, self.rules.max_breakpoints)
            look = self.rules.lookback_blocks
            candidates = sorted(
                {j for b in marks for j in range(max(1, b - look), b + 1)}, reverse=True
            )
            found, expired = self._find(chain, candidates, at)
            read = sizes[found]
            if found:
                self._runs[self._store[chain[found]][1]] = at
            written = 0
            for b in marks:
                if sizes[b] >= self.rules.min_prefix_tokens:
                    self._store[chain[b]] = (sizes[b], len(self._runs))
                    self._runs.append(at)
                    written = max(written, sizes[b])
            write = max(0, written - read)
        outcome = CacheOutcome(
            prompt=total,
            read=read,
            write=write,
            expected=self._written,
            common=sizes[same],
            changed_block=None if extends else same,
            head_changed=not extends and same < request.head_blocks,
            expired=expired,
        )
        self._chain, self._sizes, self._written = chain, sizes, written
        return outcome

    def _find(
        self, chain: list[int], candidates: Iterable[int], at: float | None
    ) -> tuple[int, bool]:
        """The longest live stored prefix among ``candidates`` (block counts, longest
        first; 0 when none), and whether a longer one had expired."""
        expired = False
        for i in candidates:
            entry = self._store.get(chain[i])
            if entry is None:
                continue
            used = self._runs[entry[1]]
            if at is not None and used is not None and at - used > self.ttl_s:
                expired = True
                continue
            return i, expired
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


def _breakpoints(n: int, head: int, limit: int) -> list[int]:
    """Block counts a request marks: the end of its head and its end (at most ``limit``)."""
    marks = sorted({b for b in (head, n) if b > 0}, reverse=True)
    return marks[: max(0, limit)]

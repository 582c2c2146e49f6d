"""What an importer skipped, repaired or ignored while reading one transcript file.

Every importer fills one :class:`ImportReport` (the framework is described in
:mod:`ctxengine.importers.base`). The report keeps, per kind of issue, how often it occurred
and where first (a 1-based line for line formats, a JSON path for document formats), so that
a user sees in one line what did not come through unchanged, and a stored session keeps the
record of it. In strict mode the first skipped or repaired item raises the
:class:`~ctxengine.errors.TranscriptError` that names the file and line instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ctxengine.errors import TranscriptError

Action: TypeAlias = Literal["skipped", "repaired", "ignored"]
#: The actions, in the order a summary lists them.
ACTIONS: tuple[Action, ...] = ("skipped", "repaired", "ignored")


@dataclass(frozen=True, slots=True)
class Issue:
    """One kind of issue met while reading a file.

    Attributes:
        action: ``"skipped"`` (not understood, left out), ``"repaired"`` (malformed, made
            usable) or ``"ignored"`` (understood and deliberately not imported: records that
            never reach the model, such as UI events).
        kind: a short, stable name (``"record:foo"``, ``"tool_use without id"`` …).
        count: how many times it occurred.
        first_line: 1-based line of the first occurrence, when the format has lines.
        first_json_path: JSON path of the first occurrence, for document formats.
        expected: what a strict import says about the first occurrence (the
            ``TranscriptError`` text after ``file:line:``); ``None`` for ignored records.
    """

    action: Action
    kind: str
    count: int
    first_line: int | None = None
    first_json_path: str | None = None
    expected: str | None = None

    def where(self) -> str:
        """``"line N"``, the JSON path, or ``""`` when neither is known."""
        if self.first_line is not None:
            return f"line {self.first_line}"
        return self.first_json_path or ""

    def to_dict(self) -> dict[str, Any]:
        """The issue as JSON-compatible data (``None`` fields left out)."""
        data: dict[str, Any] = {"action": self.action, "kind": self.kind, "count": self.count}
        for key in ("first_line", "first_json_path", "expected"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


class ImportReport:
    """The issues of one import, collected while an importer reads the file.

    Args:
        path: the file being read (named by strict errors).
        strict: raise on the first skipped or repaired item instead of counting it.

    Importers call :meth:`skip`, :meth:`repair` and :meth:`ignore`; everyone else reads
    :attr:`issues`, :meth:`summary` and :meth:`to_dict`.
    """

    __slots__ = ("_counts", "_issues", "path", "strict")

    def __init__(self, path: str | Path, *, strict: bool = False) -> None:
        self.path = str(path)
        self.strict = strict
        #: the first occurrence of each kind, and how often it occurred (kept apart so that
        #: counting one more is a dict update: importers report thousands of ignored records).
        self._issues: dict[tuple[Action, str], Issue] = {}
        self._counts: dict[tuple[Action, str], int] = {}

    def skip(
        self, kind: str, expected: str, *, line: int | None = None, json_path: str | None = None
    ) -> None:
        """Count an item left out because it was not understood (an unknown record kind, a
        line that is not JSON, a block without its required fields).

        Raises:
            TranscriptError: in strict mode, ``path:line: expected`` (or ``at json_path``).
        """
        self._add("skipped", kind, expected, line, json_path)

    def repair(
        self, kind: str, expected: str, *, line: int | None = None, json_path: str | None = None
    ) -> None:
        """Count an item made usable (a generated call id, ``null`` arguments read as ``{}``,
        a lone surrogate replaced by U+FFFD).

        Raises:
            TranscriptError: in strict mode, ``path:line: expected`` (or ``at json_path``).
        """
        self._add("repaired", kind, expected, line, json_path)

    def ignore(
        self,
        kind: str,
        *,
        line: int | None = None,
        json_path: str | None = None,
        count: int = 1,
    ) -> None:
        """Count ``count`` (at least 1) records understood and deliberately not imported, the
        first of them at ``line`` / ``json_path`` (never raises). An importer that meets
        thousands of them may report the first when it meets it and the others in one call
        at the end: the report is the same."""
        # :meth:`_add` inlined (never strict): importers call this once per ignored record
        key: tuple[Action, str] = ("ignored", kind)
        counts = self._counts
        seen = counts.get(key)
        if seen is None:
            self._issues[key] = Issue("ignored", kind, 1, line, json_path, None)
            counts[key] = count
        else:
            counts[key] = seen + count

    def _add(
        self,
        action: Action,
        kind: str,
        expected: str | None,
        line: int | None,
        json_path: str | None,
        count: int = 1,
    ) -> None:
        if self.strict and action != "ignored":
            raise TranscriptError(self.path, expected or kind, line=line, json_path=json_path)
        key = (action, kind)
        seen = self._counts.get(key)
        if seen is None:
            self._issues[key] = Issue(action, kind, 1, line, json_path, expected)
            self._counts[key] = count
        else:
            self._counts[key] = seen + count

    def _all(self) -> list[Issue]:
        """Every issue with its count, in first-seen order."""
        return [
            i if i.count == self._counts[k] else replace(i, count=self._counts[k])
            for k, i in self._issues.items()
        ]

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Every issue, skipped first, then repaired, then ignored; in first-seen order
        within each."""
        found = self._all()
        return tuple(i for a in ACTIONS for i in found if i.action == a)

    def of(self, action: Action) -> tuple[Issue, ...]:
        """The issues with ``action``, in first-seen order."""
        return tuple(i for i in self._all() if i.action == action)

    def counts(self, *actions: Action) -> dict[str, int]:
        """``{kind: count}`` of the issues with one of ``actions`` (all when none given),
        sorted by kind."""
        chosen = actions or ACTIONS
        return dict(sorted((k, n) for (a, k), n in self._counts.items() if a in chosen))

    @property
    def clean(self) -> bool:
        """True when nothing was skipped or repaired (ignored records do not count)."""
        return not any(a != "ignored" for a, _ in self._counts)

    def summary(self) -> str:
        """One line naming what was skipped and repaired, with counts and where each kind
        first occurred, e.g. ``skipped 2: record:foo ×2 (line 8); repaired 1: tool_use
        without id ×1 (line 2)``; ``""`` when :attr:`clean`."""
        groups: list[str] = []
        for action in ("skipped", "repaired"):
            found = self.of(action)
            if not found:
                continue
            total = sum(i.count for i in found)
            items = ", ".join(
                f"{i.kind} ×{i.count}" + (f" ({i.where()})" if i.where() else "") for i in found
            )
            groups.append(f"{action} {total}: {items}")
        return "; ".join(groups)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data: ``{"path", "strict", "issues": [...]}``."""
        return {
            "path": self.path,
            "strict": self.strict,
            "issues": [i.to_dict() for i in self.issues],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ImportReport:
        """Inverse of :meth:`to_dict`.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not what :meth:`to_dict` writes.
        """
        report = cls(str(data["path"]), strict=bool(data.get("strict", False)))
        for raw in data["issues"]:
            action = raw["action"]
            if action not in ACTIONS:
                raise ValueError(f"unknown issue action {action!r}")
            issue = Issue(
                action,
                str(raw["kind"]),
                int(raw["count"]),
                raw.get("first_line"),
                raw.get("first_json_path"),
                raw.get("expected"),
            )
            report._issues[(issue.action, issue.kind)] = issue
            report._counts[(issue.action, issue.kind)] = issue.count
        return report

    def __repr__(self) -> str:
        return f"ImportReport({self.path!r}, {self.summary() or 'clean'!r})"


__all__ = ["ACTIONS", "Action", "ImportReport", "Issue"]

"""Progress on stderr for work that may take long (``import``, ``compact``, ``replay``,
``export``): a rich spinner or bar with what is being done and the time elapsed.

It is drawn only when stderr is a terminal, ``--quiet`` was not given, and the work has run
longer than :data:`~ctxengine.policy.defaults.PROGRESS_AFTER_S` (``$CTXENGINE_PROGRESS_AFTER``
seconds when set): short commands and scripts see nothing. It is erased when the work ends,
and never touches stdout (results piped elsewhere stay clean).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ctxengine.cli.output import err, is_terminal
from ctxengine.errors import seconds_from_env
from ctxengine.policy.defaults import PROGRESS_AFTER_S

#: Environment variable: seconds of work before the progress display appears.
PROGRESS_AFTER_ENV_VAR = "CTXENGINE_PROGRESS_AFTER"


def progress_after_s() -> float:
    """``$CTXENGINE_PROGRESS_AFTER`` in seconds, else :data:`PROGRESS_AFTER_S`.

    Raises:
        ConfigError: the variable is set but not a finite number of seconds >= 0.
    """
    return seconds_from_env(PROGRESS_AFTER_ENV_VAR, PROGRESS_AFTER_S)


def progress_wanted(quiet: bool) -> bool:
    """True when a progress display may be drawn: not ``quiet``, stderr a terminal, and the
    terminal not ``TERM=dumb``."""
    return not quiet and is_terminal(sys.stderr) and os.environ.get("TERM") != "dumb"


class _Count(ProgressColumn):
    """``done/total`` when the task has a total, else nothing."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        return Text(f"{int(task.completed):,}/{int(task.total):,}")


class Tracker:
    """One piece of work's progress. Safe to call from any thread; does nothing when the
    display is off.

    Args:
        description: what is being done (shown literally, never as markup).
        total: units of work (files, calls), or ``None`` for a spinner.
        enabled: draw at all (see :func:`progress_wanted`).
        after_s: seconds before the display appears.
    """

    def __init__(
        self, description: str, *, total: int | None, enabled: bool, after_s: float
    ) -> None:
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._timer: threading.Timer | None = None
        if not enabled:
            return
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            _Count(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task = self._progress.add_task(description, total=total)
        self._timer = threading.Timer(after_s, self._start)
        self._timer.daemon = True
        self._timer.start()

    @property
    def shown(self) -> bool:
        """True once the display has been drawn."""
        return self._started

    def _start(self) -> None:
        with self._lock:
            if self._closed or self._progress is None:
                return
            self._progress.start()
            self._started = True

    def step(self, description: str, *, total: int | None = None, done: int = 0) -> None:
        """Move on to the next phase: a new description, total and count."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=description, total=total, completed=done)

    def describe(self, description: str) -> None:
        """Say what is being done now (total and count unchanged)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=description)

    def advance(self, units: int = 1) -> None:
        """Count ``units`` more of the total done."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, units)

    def close(self) -> None:
        """Erase the display (if drawn) and stop its timer. Idempotent."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._started and self._progress is not None:
                self._progress.stop()
                self._started = False

    def __enter__(self) -> Tracker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@contextmanager
def progress(
    description: str, *, total: int | None = None, quiet: bool = False
) -> Iterator[Tracker]:
    """A :class:`Tracker` for the block, drawn on stderr when :func:`progress_wanted` and the
    block runs past :func:`progress_after_s`; erased when the block ends."""
    tracker = Tracker(
        description,
        total=total,
        enabled=progress_wanted(quiet),
        after_s=progress_after_s(),
    )
    try:
        yield tracker
    finally:
        tracker.close()

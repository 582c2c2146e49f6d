"""Headless Chromium: a screenshot of a local HTML page (``report --png``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ctxengine.errors import ConfigError

#: Environment variable naming the Chromium binary to use.
CHROMIUM_ENV = "CTXENGINE_CHROMIUM"
#: Names tried on ``PATH`` when the variable is not set (Debian's package is ``chromium``).
CHROMIUM_NAMES: tuple[str, ...] = ("chromium", "chromium-browser", "google-chrome")
#: Seconds a screenshot may take.
SCREENSHOT_TIMEOUT_S = 120.0


def find_chromium() -> str | None:
    """The Chromium binary: ``$CTXENGINE_CHROMIUM``, else the first of
    :data:`CHROMIUM_NAMES` on ``PATH``, else ``None``."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return named
    return next((found for n in CHROMIUM_NAMES if (found := shutil.which(n))), None)


def require_chromium() -> str:
    """:func:`find_chromium`'s binary.

    Raises:
        ConfigError: Chromium is not installed (the message says how to get it).
    """
    binary = find_chromium()
    if binary is None:
        raise ConfigError(
            "--png needs Chromium: install it (Debian: apt-get install chromium) or name the "
            f"binary in {CHROMIUM_ENV}"
        )
    return binary


def screenshot(page: Path, png: Path, *, width: int, height: int) -> None:
    """Render the local file ``page`` in headless Chromium at ``width`` × ``height`` CSS
    pixels and write the screenshot to ``png``.

    Raises:
        ConfigError: Chromium is not installed (the message says how to get it), or it
            failed or wrote nothing (its last error line).
    """
    binary = require_chromium()
    png.unlink(missing_ok=True)
    argv = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
        f"--screenshot={png}",
        page.resolve().as_uri(),
    ]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=SCREENSHOT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"Chromium ({binary}) could not take the screenshot: {exc}") from exc
    if proc.returncode != 0 or not png.is_file():
        lines = [line for line in (proc.stderr or "").splitlines() if line.strip()]
        why = lines[-1] if lines else f"exit status {proc.returncode}"
        raise ConfigError(f"Chromium ({binary}) wrote no screenshot: {why}")

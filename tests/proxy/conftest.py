"""The proxy tests import the scripted servers of ``tests/providers``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

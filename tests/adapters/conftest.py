"""The adapter tests share the conversation of the proxy tests (``tests/proxy/harness.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

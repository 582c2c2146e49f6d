"""The real-agent tests use the proxy harness and the scripted servers."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

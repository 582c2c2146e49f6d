"""Test configuration: this directory is on ``sys.path`` so tests can ``import corpus``."""

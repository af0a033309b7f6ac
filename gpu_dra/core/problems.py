"""Moved to gpu_dra.core.findings; kept until __main__.py imports from there."""

from gpu_dra.core.findings import ConfigError

__all__ = ["ConfigError"]

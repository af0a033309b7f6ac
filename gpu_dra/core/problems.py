"""Problems are values until the edge: the core returns them, the shells decide how to show them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One mistake in one place: the file, the key path inside it, what is wrong and what to do."""

    file: str
    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        """`file:line: key: message`, the form editors and CI logs turn into a link to the line."""
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ConfigError(Exception):
    """Raised when stack or team configuration is invalid; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.path, p.message))
        super().__init__("\n".join(str(p) for p in self.problems))

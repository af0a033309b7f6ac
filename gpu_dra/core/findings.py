"""One finding type for everything the core reports: config mistakes, lint and schema findings, policy violations.

Findings are values until the edge: the core returns them, and the shells render them (text here, JSON and SARIF
in the CLI, CrossGuard violations in the policy pack). Tests read their fields, never their messages, to learn
which rule fired and where.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

ERROR, WARNING = "error", "warning"
# A check a rule could not make: a value it needs is unknown in this preview (an id or ARN not created yet, the
# Kubernetes objects of a cluster that does not exist yet). Not a violation; the shells list it apart.
NOT_JUDGED = "not-judged"
CONFIG = "config"  # the rule of every stack or team file mistake


@dataclass(frozen=True)
class Finding:
    """What is wrong (or worth a look), where, and what to do.

    `rule` says what found it (a lint or policy rule id, `config`, `schema`, `cel-compile`, ...); `object` names the
    object it concerns (`ResourceClaimTemplate ml/pair`, a Pulumi URN); `path` is the key path inside the file or
    object; `file` and `line` point at the text a user edits; `check` is the inner check's id where `rule` wraps
    another checker (the lint rule under the policy dra-cel-lint), "" elsewhere.
    """

    rule: str
    severity: str
    message: str
    fix: str | None = None
    file: str = ""
    line: int | None = None
    object: str = ""
    path: str = ""
    check: str = ""

    def at(self, **where: Any) -> Finding:
        """The same finding, placed: `file`, `line`, `object`, `path`."""
        return dataclasses.replace(self, **where)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        """`file:line: key: message`, the form editors and CI logs turn into a link to the line."""
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file or self.object
        message = f"[{self.check}] {self.message}" if self.check else self.message
        return ": ".join(part for part in (where, self.path, message) if part)


def config_finding(file: str, path: str, message: str, line: int | None = None) -> Finding:
    """A mistake in a stack or team file."""
    return Finding(CONFIG, ERROR, message, file=file, line=line, path=path)


class ConfigError(Exception):
    """Invalid input (stack or team configuration, a file that is not YAML); carries every finding, not the first."""

    def __init__(self, findings: list[Finding]):
        self.findings = sorted(set(findings), key=lambda f: (f.file, f.line or 0, f.path, f.message))
        super().__init__("\n".join(str(f) for f in self.findings))


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """"did you mean 'x'? " for the choice closest to a mistyped value, "" when none is close (a similarity of 0.8: a
    letter or two off, not a name that merely shares a suffix), or else for the one choice of which the value is a
    whole word (`l40s` for `gpu-l40s`): what a message puts before the list of what there is."""
    listed = list(choices)
    guess = difflib.get_close_matches(value, listed, n=1, cutoff=0.8)
    if not guess:
        guess = [c for c in listed if value.lower() in re.split(r"[-._/]", c.lower())]
    return f"did you mean {guess[0]!r}? " if len(guess) == 1 else ""

"""Input files (and stdin) read and parsed for the verbs that judge YAML or JSON: unreadable or malformed input is
a usage error naming the file, and what the files take once parsed is bounded."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_dra.cli.process import UsageError
from gpu_dra.cli.text import cut, shown
from gpu_dra.core.yamlsource import PARSED_MEMORY, Located, ParseBudget, parse_documents, read_text

if TYPE_CHECKING:  # the models (pydantic) only for their type: the light verbs read files through here
    from gpu_dra.core.config.models import Team

SUFFIXES = (".yaml", ".yml", ".json")  # what a folder given as input is read for


def read_inputs(paths: list[str], lines: bool = True,
                args: argparse.Namespace | None = None) -> list[tuple[str, list[Located]]]:
    """(display name, parsed documents) per path; `-` is stdin. Unreadable or malformed input: exit 2.
    `lines=False` for dumps no finding points into (fleet-sized ResourceSlice lists parse 8 times faster).
    The files together may take `--read-memory` once parsed, where the verb has it (`args`), else PARSED_MEMORY."""
    raisable = hasattr(args, "read_memory")  # the verbs with --cluster's options
    budget = ParseBudget(getattr(args, "read_memory", None) or PARSED_MEMORY,
                         " or raise --read-memory" if raisable else "")
    inputs = []
    for path in paths:
        name = "<stdin>" if path == "-" else path
        try:
            if path != "-":
                with open(path, encoding="utf-8") as stream:
                    text = read_text(stream, name)
            elif sys.stdin is None:  # `<&-`: Python starts without it
                raise UsageError("<stdin>: standard input is closed; pipe the input in, or name a file")
            else:
                if sys.stdin.isatty():  # `gpu-dra lint -` typed as is: say why nothing happens
                    print("gpu-dra: reading YAML from the terminal; end with Ctrl-D (or pipe it in: ... - < "
                          "claims.yaml)", file=sys.stderr)
                text = read_text(sys.stdin, name)
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{cut(name)}: cannot read: {getattr(error, 'strerror', None) or error}") from None
        inputs.append((name, parse_documents(text, name, lines=lines, budget=budget, keep=True)))
    return inputs


def input_files(paths: list[str]) -> list[str]:
    """The files named, folders expanded recursively (sorted, so the input order is the same on every run)."""
    files: list[str] = []
    for path in paths:
        folder = Path(path)
        if path != "-" and folder.is_dir():
            found = sorted(str(p) for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())
            if not found:
                raise UsageError(f"{cut(path)}: no {', '.join('*' + s for s in SUFFIXES)} files in this folder")
            files += found
        else:
            files.append(path)
    return files


def team_workload_paths(root: Path, teams: Iterable[Team]) -> list[str]:
    """The manifests the teams' files name (`workloads:`), as the user sees them from here: what migrate and upgrade
    read when given no FILE."""
    return [shown(root / path, Path.cwd()) for team in teams for path in team.workloads]

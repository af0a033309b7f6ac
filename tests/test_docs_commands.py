"""Every `gpu-dra` command README and docs show runs as written, offline, in a copy of the project (issue 32): exit
0 or 1 (findings), never 2 (an example that does not run) or a traceback, and where a document shows a transcript
(`$ gpu-dra ...` and what follows it in the block) it prints what the transcript shows. Left out: what needs a live
cluster (--cluster), files the reader brings (slices.yaml, claims.yaml: not in the repository) or placeholders (<ns>),
and stacks the docs have the reader create first (qa). Pipes and redirections are dropped: the gpu-dra part is run.
A transcript of a changed copy of the repository, or of another day, is compared by the test that makes the change
(SHOWN_ELSEWHERE)."""

from __future__ import annotations

import difflib
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_cli import gpu_dra

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COPIED = ("stacks", "workloads", "examples", "tests/data", "policies", ".github", "Pulumi.yaml", "__main__.py")
# Options whose value is a path the command writes, not one it reads.
WRITES = ("--out", "--write")
# (document, command) -> the test comparing its transcript, made on a copy changed as the document says or on a day.
SHOWN_ELSEWHERE = {
    ("README.md", "gpu-dra preview --stack prod"): "tests/test_cli.py (the stack file with the mistakes it names)",
    ("migration.md", "gpu-dra check --stack prod"): "tests/test_legacy_workloads.py (legacy-a10g removed)",
    ("upgrading.md", "gpu-dra upgrade --stack dev --to 1.36 examples/migrate/"): "tests/test_upgrade.py (its day)",
}


def _commands() -> list[tuple[str, str, str | None]]:
    """(where, command, shown) of each `gpu-dra ...` line in a code block, without its comment, pipe or redirection;
    `shown` is the output a transcript (`$ gpu-dra ...` and the lines after it, to the next `$` or the block's end)
    shows, None for a command alone."""
    found: list[tuple[str, str, list[str] | None]] = []
    for document in DOCUMENTS:
        in_block, output = False, None  # output: the transcript's lines, while in one
        for number, line in enumerate(document.read_text().splitlines(), 1):
            if line.startswith("```"):
                in_block = not in_block
                output = None
                continue
            if not in_block:
                continue
            if output is not None and not line.startswith("$ "):
                output.append(line)
                continue
            output = None
            text = line.strip().removeprefix("$ ")
            if text.startswith("gpu-dra "):
                command = re.split(r"\s+#|\s\||\s>|\s<|\s&&", text)[0].strip()
                output = [] if line.startswith("$ ") and command == text else None
                found.append((f"{document.name}:{number}", command, output))
    return [(where, command, None if shown is None else "\n".join(shown)) for where, command, shown in found]


def _runnable(args: list[str], root: Path) -> str:
    """Why the command cannot run here ("" if it can)."""
    if "--cluster" in args:
        return "needs a live cluster"
    if any("<" in a for a in args):
        return "a placeholder"
    if "-" in args:
        return "reads the reader's input on stdin"
    if "--stack" in args and not (root / "stacks" / f"Pulumi.{args[args.index('--stack') + 1]}.yaml").exists():
        return "a stack the reader creates first"
    for index, arg in enumerate(args[1:], 1):
        if arg.startswith("-") or args[index - 1] in WRITES:
            continue
        # a file of the reader's (slices.yaml); one under the repository's folders must exist: the command runs
        readers = arg.endswith((".yaml", ".json", ".log", "/")) and arg.split("/")[0] not in COPIED
        if readers and not arg.startswith("@") and not (root / arg).exists():
            return f"{arg}: the reader's file"
    return ""


def _project(root: Path) -> Path:
    for name in COPIED:
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    return root


COMMANDS = _commands()


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda document: document.name)
def test_every_documented_command_runs_as_written(document: Path, tmp_path: Path) -> None:
    """A document's commands in its order, in one copy (README's `team show vision` follows its `team new vision`)."""
    project = _project(tmp_path)
    failed = []
    for where, command, shown in COMMANDS:
        args = shlex.split(command)
        if not where.startswith(f"{document.name}:") or _runnable(args, project):
            continue
        args = [str(project / Path(arg).name) if index and args[index - 1] in WRITES and Path(arg).is_absolute()
                else arg for index, arg in enumerate(args)]  # `--out /tmp/m` written inside the copy
        result = gpu_dra(*args[1:], cwd=project, input="")
        if result.returncode not in (0, 1) or "Traceback" in result.stderr or "internal error" in result.stderr:
            failed.append(f"{where}: {command}: exit {result.returncode}: {result.stderr.strip()[:300]}")
        elif shown and (document.name, command) not in SHOWN_ELSEWHERE and not _shows(shown, result):
            diff = difflib.unified_diff(_lines(shown), _lines(result.stdout), "shown", "printed", lineterm="")
            failed.append(f"{where}: {command}: prints what the document does not show:\n" + "\n".join(diff))
    assert not failed, "\n\n".join(failed)


def test_the_documents_show_commands_and_transcripts_that_run() -> None:
    """The collection itself: enough commands and transcripts found, and every SHOWN_ELSEWHERE entry still shown."""
    runnable = [c for c in COMMANDS if not _runnable(shlex.split(c[1]), ROOT)]
    transcripts = {(where.split(":")[0], command) for where, command, shown in runnable if shown}
    assert len(runnable) > 40 and len(transcripts) > 12
    assert set(SHOWN_ELSEWHERE) <= transcripts


def _shows(shown: str, result: subprocess.CompletedProcess[str]) -> bool:
    """The transcript is what the command printed: its stdout (warnings on stderr are left out of transcripts) or
    stdout and stderr; a last line `...` stands for the rest."""
    expected = _lines(shown)
    for printed in (_lines(result.stdout), _lines(result.stdout + result.stderr)):
        if expected == printed or (expected[-1:] == ["..."] and printed[:len(expected) - 1] == expected[:-1]):
            return True
    return False


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]

"""Write the worked example of docs/upgrading.md from the command's own output: `gpu-dra upgrade --stack dev --to
1.36 examples/migrate/`, judged as of the day the page states (tests/test_upgrade.py compares the two). Run by
`make docs` after a change to what `upgrade` prints."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from gpu_dra.cli import main

PAGE = Path("docs/upgrading.md")
COMMAND = ["upgrade", "--stack", "dev", "--to", "1.36", "examples/migrate/"]
DAY = "2026-12-02"  # the day the page says its output is of


def output() -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main.run([*COMMAND, "--today", DAY])
    if code not in (0, 1):
        sys.exit(f"gpu-dra {' '.join(COMMAND)} exited {code}")
    return printed.getvalue()


def write() -> None:
    text = PAGE.read_text()
    shown = f"$ gpu-dra {' '.join(COMMAND)}\n"
    start = text.index(shown) + len(shown)
    end = text.index("```\n", start)
    PAGE.write_text(text[:start] + output() + text[end:])


if __name__ == "__main__":
    write()

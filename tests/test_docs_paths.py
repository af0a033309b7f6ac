"""The code paths README and docs name exist (issue 32: docs named modules that had moved). Paths of upstream
repositories (docs/sources.md's citations) and of files a reader creates are not the repository's and are left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

# A repository path: a top folder of the project's code, then a path ending in a name (not a placeholder or glob).
PATH = re.compile(r"(?<![\w/.-])((?:gpu_dra|components|tools|tests|bench)/[\w./-]*\w)")
DOCUMENTS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "sources.md"),
             ROOT / "policies" / "__main__.py", ROOT / "__main__.py"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_the_code_paths_a_document_names_exist(document: Path) -> None:
    missing = sorted({m.group(1) for m in PATH.finditer(document.read_text())
                      if "<" not in m.group(1) and not (ROOT / m.group(1)).exists()})
    assert missing == []

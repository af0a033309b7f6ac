"""The core imports no Pulumi: config, manifests and knowledge stay usable by the CLI, policies and tests alone."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import gpu_dra.core

from .conftest import ROOT


def test_core_modules_import_without_pulumi() -> None:
    modules = [f"gpu_dra.core.{m.name}" for m in pkgutil.iter_modules(gpu_dra.core.__path__)]
    assert len(modules) >= 8
    script = ("import sys; " + "; ".join(f"import {m}" for m in modules) +
              "; bad = sorted(m for m in sys.modules if m.split('.')[0].startswith('pulumi')); print(bad)")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"

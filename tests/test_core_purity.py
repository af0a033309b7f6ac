"""The core imports no Pulumi, and its layers import one way (docs/architecture.md): each layer uses only the
layers below it, so the knowledge stays usable by the CLI, the policy pack and tests alone."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys

import gpu_dra.core

from .conftest import ROOT

# Lowest first; a module may import from its own layer and the layers before it.
LAYERS = (("findings", "yamlsource", "data", "workers"), ("facts",), ("dra",), ("config",), ("render",), ("analysis",),
          ("checks",), ("policy",))
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
CORE = ROOT / "gpu_dra" / "core"


def test_core_modules_import_without_pulumi() -> None:
    modules = [m.name for m in pkgutil.walk_packages(gpu_dra.core.__path__, "gpu_dra.core.")]
    assert len(modules) >= 30
    script = ("import sys; " + "; ".join(f"import {m}" for m in modules) +
              "; bad = sorted(m for m in sys.modules if m.split('.')[0].startswith('pulumi')); print(bad)")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _imported_layers(path: object) -> set[str]:
    tree = ast.parse(path.read_text())  # type: ignore[attr-defined]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpu_dra.core"):
            parts = node.module.split(".")
            found |= {parts[2]} if len(parts) > 2 else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[2] for alias in node.names
                      if alias.name.startswith("gpu_dra.core.") and len(alias.name.split(".")) > 2}
    return found


def test_every_core_module_belongs_to_a_layer_and_imports_downwards() -> None:
    upward = []
    for path in sorted(CORE.rglob("*.py")):
        top = path.relative_to(CORE).parts[0].removesuffix(".py")
        if top == "__init__":
            continue
        assert top in RANK, f"{path.relative_to(ROOT)} is in no layer; add it to LAYERS and docs/architecture.md"
        upward += [f"{path.relative_to(ROOT)} imports {layer}" for layer in _imported_layers(path)
                   if RANK[layer] > RANK[top]]
    assert upward == []

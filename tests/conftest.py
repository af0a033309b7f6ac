"""Shared fixtures and helpers: a scratch copy of the project's stacks to break on purpose, and list entries found
by name (tests change entries by name, never by position)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
STACKS = ("dev", "staging", "prod")  # the environments, each on node groups and the driver chart
ALL_STACKS = (*STACKS, "automode")  # and the EKS Auto Mode example (tests/test_auto_mode.py)


def named(items: Iterable[Any], name: str) -> Any:
    """The one mapping in `items` whose `name` (or, for taints and tolerations, `key`) is `name`."""
    found = [item for item in items if isinstance(item, dict) and name in (item.get("name"), item.get("key"))]
    if len(found) != 1:
        raise KeyError(f"{len(found)} entries named {name!r}")
    return found[0]


class Project:
    """A copy of the project's Pulumi.yaml, __main__.py, stacks/ and workloads/ in a temporary directory."""

    def __init__(self, root: Path):
        self.root = root

    def edit(self, relative: str, change: Callable[[Any], Any]) -> None:
        """Change a YAML file in place; `change` mutates the parsed data (its return value is ignored)."""
        path = self.root / relative
        data = yaml.safe_load(path.read_text())
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False))

    def edit_stack(self, stack: str, change: Callable[[dict[str, Any]], Any]) -> None:
        self.edit(f"stacks/Pulumi.{stack}.yaml", lambda data: change(data["config"]))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copytree(ROOT / "workloads", tmp_path / "workloads")  # the team files name these
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    return Project(tmp_path)


def load_tool(name: str) -> ModuleType:
    """tools/<name>.py, a development tool that is no package, as a module (registered, since dataclasses look their
    module up)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module

"""The gpu-dra project a verb works on (found from --project-dir or the current directory) and its stacks. The stack
models (pydantic, 0.3 s) are loaded when a stack is listed or read, not to find the project (policy-pack)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_dra.cli.process import UsageError
from gpu_dra.cli.text import cut
from gpu_dra.core.yamlsource import read_yaml

if TYPE_CHECKING:
    from gpu_dra.core.config.models import Stack


def find_project_root(start: Path) -> Path:
    other: tuple[Path, object] | None = None  # the nearest Pulumi.yaml naming another project
    try:
        for directory in (start, *start.parents):
            project = directory / "Pulumi.yaml"
            if project.exists():
                data = read_yaml(project, str(project)).data
                if isinstance(data, dict) and data.get("name") == "gpu-dra":
                    return directory
                other = other or (project, data.get("name") if isinstance(data, dict) else None)
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise UsageError(f"{cut(str(start))}: cannot look for the gpu-dra project there: "
                         f"{error.strerror or error}") from None
    if other is not None:  # a renamed project: "pass --project-dir" would not help
        raise UsageError(f"{cut(str(other[0]))} names the project {cut(str(other[1]), 60)!r}, and gpu-dra reads the "
                         "project named gpu-dra: its stack files' config is gpu-dra:..., and every resource's URN "
                         "carries the project's name, so a renamed project is a new Pulumi project with new state. "
                         "Set `name: gpu-dra` there, or pass --project-dir to the gpu-dra project")
    raise UsageError(f"no gpu-dra project (Pulumi.yaml with name: gpu-dra) at or above {cut(str(start))}; "
                     "run inside the project or pass --project-dir")


def project_root(args: argparse.Namespace) -> Path:
    return find_project_root(Path(args.project_dir).resolve() if args.project_dir else Path.cwd())


def selected_stacks(args: argparse.Namespace, root: Path) -> list[str]:
    from gpu_dra.core.config.loader import available_stacks

    return available_stacks(root) if args.all_stacks else [args.stack or "dev"]


def chosen_stack(args: argparse.Namespace) -> Stack:
    """The stack `--stack` names, validated with its team files."""
    from gpu_dra.core.config.loader import load_stack

    return load_stack(project_root(args), args.stack)

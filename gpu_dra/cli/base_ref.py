"""What a stack hosted at the base of a change (`--base REF`, a git revision): each hosted team's namespace, claim
templates and quota, read from the stack and team files as committed there, for the rule team-namespace-kept. Read as
plain YAML, not through the loader: the base is an older version of the files, which today's rules may refuse."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gpu_dra.cli.process import UsageError

GIT_TIMEOUT = 30.0  # seconds for one `git show`


def _show(root: Path, ref: str, path: str) -> str | None:
    """The file at `ref`, or None where it did not exist there; a ref git does not know is the user's mistake."""
    try:
        done = subprocess.run(["git", "-C", str(root), "show", f"{ref}:{path}"], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise UsageError("--base needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"--base {ref}: git took more than {GIT_TIMEOUT:g} s to show {path}") from None
    if done.returncode == 0:
        return done.stdout
    message = done.stderr.strip()
    if "does not exist in" in message or "exists on disk, but not in" in message:
        return None
    raise UsageError(f"--base {ref}: git cannot read {path} there ({message.splitlines()[0] if message else 'exit '}"
                     f"{'' if message else done.returncode}); give a revision of this repository, such as "
                     "origin/main")


def _mapping(text: str | None) -> Mapping[str, Any]:
    try:
        loaded = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, Mapping) else {}


def namespaces_at(root: Path, ref: str, stack: str) -> list[dict[str, Any]]:
    """Per team the stack hosted at `ref`: {team, namespace, templates, quota}; [] for a stack new since `ref`. A
    file unreadable there counts as its team's defaults (namespace named after the team, nothing in it)."""
    config = _mapping(_show(root, ref, f"stacks/Pulumi.{stack}.yaml")).get("config")
    hosted = config.get("gpu-dra:teams") if isinstance(config, Mapping) else None
    if not isinstance(hosted, Mapping):
        return []
    out = []
    for team, hosting in hosted.items():
        own = _mapping(_show(root, ref, f"stacks/teams/{team}.yaml"))
        namespace = own.get("namespace")
        name = namespace.get("name") if isinstance(namespace, Mapping) else None
        templates = [t.get("name") for t in own.get("claimTemplates") or [] if isinstance(t, Mapping)]
        quota = own.get("quota") or (hosting.get("quota") if isinstance(hosting, Mapping) else None)
        out.append({"team": str(team), "namespace": str(name or team),
                    "templates": [str(t) for t in templates if t], "quota": bool(quota)})
    return out

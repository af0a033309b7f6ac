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
from gpu_dra.core.analysis.upgrade.stacks import KEYS
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.karpenter import DEFAULT_KARPENTER_VERSION
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION
from gpu_dra.core.facts.nvidia_driver import ChartName

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


def versions_at(root: Path, ref: str, stack: str) -> dict[str, str]:
    """What the stack file at `ref` names of each version an upgrade moves (gpu_dra.core.analysis.upgrade.KEYS):
    kubernetes, driver (CHART@RELEASE where it names a chart), karpenter. A version it leaves to the default is
    today's default (a default that moved since `ref` is not seen); a stack new since `ref`, or one without Karpenter
    there, names none of it: installing is no upgrade."""
    config = _mapping(_show(root, ref, f"stacks/Pulumi.{stack}.yaml")).get("config")
    if not isinstance(config, Mapping):
        return {}
    defaults = {"kubernetes": DEFAULT_KUBERNETES_VERSION, "driver": DEFAULT_CHART_VERSION,
                "karpenter": DEFAULT_KARPENTER_VERSION}
    found = {}
    for what, (section, key) in KEYS.items():
        values = config.get(f"gpu-dra:{section}")
        if isinstance(values, Mapping) and values.get(key) is not None:
            found[what] = str(values[key])
        elif what != "karpenter" or isinstance(values, Mapping):
            found[what] = defaults[what]
    driver = config.get("gpu-dra:draDriver")
    chart = driver.get("chart") if isinstance(driver, Mapping) else None
    found["driver"] = f"{chart or ChartName.dra_driver_nvidia_gpu.value}@{found['driver']}"  # the default line's
    return found


def templates_at(root: Path, ref: str, stack: str) -> dict[tuple[str, str], Any]:
    """(team, template) -> the template as its team file wrote it at `ref`, for the teams the stack hosted there."""
    config = _mapping(_show(root, ref, f"stacks/Pulumi.{stack}.yaml")).get("config")
    hosted = config.get("gpu-dra:teams") if isinstance(config, Mapping) else None
    found: dict[tuple[str, str], Any] = {}
    for team in hosted if isinstance(hosted, Mapping) else {}:
        for template in _mapping(_show(root, ref, f"stacks/teams/{team}.yaml")).get("claimTemplates") or []:
            if isinstance(template, Mapping) and template.get("name"):
                found[(str(team), str(template["name"]))] = template
    return found


def mapped_classes_at(root: Path, ref: str, stack: str) -> list[str] | None:
    """The DeviceClasses the stack's Kueue configuration mapped at `ref` (every class a hosted team's queue had quota
    of, the stack's own queue for a team first), or None where the stack ran no Kueue there."""
    config = _mapping(_show(root, ref, f"stacks/Pulumi.{stack}.yaml")).get("config")
    if not isinstance(config, Mapping) or not isinstance(config.get("gpu-dra:kueue"), Mapping):
        return None
    hosted = config.get("gpu-dra:teams")
    classes: set[str] = set()
    for team, hosting in hosted.items() if isinstance(hosted, Mapping) else ():
        queue = hosting.get("queue") if isinstance(hosting, Mapping) else None
        if not isinstance(queue, Mapping):
            queue = _mapping(_show(root, ref, f"stacks/teams/{team}.yaml")).get("queue")
        nominal = queue.get("nominalQuota") if isinstance(queue, Mapping) else None
        classes |= {str(name) for name in nominal} if isinstance(nominal, Mapping) else set()
    return sorted(classes)

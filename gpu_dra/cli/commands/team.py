"""`gpu-dra team new|show`: a new team's file, its stack entry and CODEOWNERS line, checked as the stack loads them
before anything is written; and one team's view of a stack: its templates, its quota per class, and which node
groups or NodePools can serve each template."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.project import project_root
from gpu_dra.core.config.loader import load_stack, stack_file, team_file
from gpu_dra.core.config.models import Stack
from gpu_dra.core.config.models.fields import dns_label
from gpu_dra.core.facts.nvidia import CHART_DEVICE_CLASSES
from gpu_dra.core.findings import did_you_mean

EXAMPLES = """examples:
  gpu-dra team new vision --stack dev                          # stacks/teams/vision.yaml and dev's gpu-dra:teams entry
  gpu-dra team new vision --stack prod --class gpu-l40s --owner @example-org/vision
  gpu-dra team show training --stack prod                      # its templates, quota, and what serves each

exit codes: 0 done (show: every template can be served), 1 show: a template nothing on the stack serves, 2 bad input
(a team that exists, no such stack or class, a stack file gpu-dra cannot add the team to); nothing is written then
"""

CODEOWNERS = Path(".github") / "CODEOWNERS"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["new", "show"])
    parser.add_argument("name", metavar="TEAM", help="the team's name (a DNS label): its file is "
                                                     "stacks/teams/<TEAM>.yaml")
    parser.add_argument("--stack", required=True, help="the stack that hosts it (new: the one it is added to)")
    parser.add_argument("--class", dest="device_class", metavar="CLASS",
                        help="new: the DeviceClass of its first template and quota (default: the stack's first)")
    parser.add_argument("--namespace", help="new: its namespace (default: the team's name)")
    parser.add_argument("--owner", metavar="@ORG/TEAM",
                        help="new: its CODEOWNERS owner; a line for its file is added to .github/CODEOWNERS")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="show: text or JSON")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    try:
        dns_label(args.name)
    except ValueError as error:
        raise UsageError(f"team name {args.name!r}: {error}") from None
    return _new(root, args) if args.action == "new" else _show(root, args)


# ------------------------------------------------------------------------------------------------------------- new
def _new(root: Path, args: argparse.Namespace) -> int:
    team, stack_path = team_file(root, args.name), stack_file(root, args.stack)
    stack = load_stack(root, args.stack)  # a stack that does not load says why first
    if any(t.name == args.name for t in stack.teams):
        raise UsageError(f"stack {args.stack} hosts a team {args.name} already")
    if team.exists():
        raise UsageError(f"{team.relative_to(root)} exists: gpu-dra writes no team file over yours; to host the team "
                         f"on stack {args.stack}, add `{args.name}: {{}}` under gpu-dra:teams in "
                         f"{stack_path.relative_to(root)}")
    device_class = args.device_class or _first_class(stack)
    known = [c.name for c in stack.config.device_classes] + (
        list(CHART_DEVICE_CLASSES) if stack.config.installs_driver_chart else [])
    if device_class not in known:
        raise UsageError(f"--class {device_class}: no such DeviceClass on stack {args.stack}; "
                         f"{did_you_mean(device_class, known)}known: {', '.join(known)}")
    team_text = _team_text(args.name, args.namespace, device_class)
    stack_text = _with_team(stack_path.read_text(), args.name, stack_path.relative_to(root))
    owners = root / CODEOWNERS
    if args.owner and not owners.exists():
        raise UsageError(f"--owner: no {CODEOWNERS} in the project to add the line to")
    owner_line = _owner_line(args.name, args.owner, owners.read_text()) if args.owner else None
    _check_loads(root, args.stack, args.name, team_text, stack_text)
    with open(team, "x", encoding="utf-8") as out:  # never over a file that appeared meanwhile
        out.write(team_text)
    try:
        _replace(stack_path, stack_text)
    except OSError:
        team.unlink()  # nothing half applied
        raise
    print(f"wrote {team.relative_to(root)} (a {device_class} template and quota: edit it freely)")
    print(f"added {args.name}: {{}} to gpu-dra:teams in {stack_path.relative_to(root)}")
    if owner_line:
        with open(owners, "a", encoding="utf-8") as out:
            out.write(owner_line)
        print(f"added to {CODEOWNERS}: {owner_line.strip()}")
    else:
        print(f"for {CODEOWNERS}: /stacks/teams/{args.name}.yaml @<org>/<team> (or --owner)")
    print(f"next: gpu-dra check --stack {args.stack}; gpu-dra team show {args.name} --stack {args.stack}")
    return EXIT_OK


def _owner_line(name: str, owner: str, codeowners: str) -> str:
    """The team file's CODEOWNERS line: its owner, and the owners of the `*` line, since the last pattern matching
    a file is the only one GitHub reads (the platform team would lose review of the file otherwise)."""
    default = next((line.split()[1:] for line in codeowners.splitlines() if line.split()[:1] == ["*"]), [])
    owners = [owner, *(o for o in default if o != owner)]
    return f"/stacks/teams/{name}.yaml".ljust(32) + " ".join(owners) + "\n"


def _first_class(stack: Stack) -> str:
    if stack.config.device_classes:
        return stack.config.device_classes[0].name
    if stack.config.installs_driver_chart:
        return "gpu.nvidia.com"
    raise UsageError(f"stack {stack.name} declares no DeviceClass: name one with --class")


def _team_text(name: str, namespace: str | None, device_class: str) -> str:
    """The team file, in the shape the repository's team files have, commented for its new owners."""
    namespace_lines = f"  name: {namespace}\n" if namespace and namespace != name else ""
    return f"""# yaml-language-server: $schema=../../schemas/team.schema.json
# Owned by the {name} team (see CODEOWNERS). Written by `gpu-dra team new`: edit it freely, then
# `gpu-dra check --stack <stack>` says what the stack makes of it (docs/configuration.md lists every key).
name: {name}
description: The {name} team's GPU workloads
namespace:
{namespace_lines}  labels:
    team: {name}
# What the team's namespace may hold at once: claims, and devices per DeviceClass.
quota:
  claims: 8
  devices:
    {device_class}: 2
claimTemplates:
  - name: {_template_name(device_class)}
    description: One {device_class} device
    requests:
      - name: gpu
        deviceClass: {device_class}
"""


def _template_name(device_class: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", device_class.removeprefix("gpu-").split(".")[0]).strip("-") + "-x1"


def _with_team(text: str, name: str, shown: Path) -> str:
    """The stack file with `<name>: {}` added to gpu-dra:teams, everything else as it is (its comments too)."""
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if re.match(r"^(\s*)gpu-dra:teams:\s*(#.*)?$", line)), None)
    if at is None:
        if any(re.match(r"^\s*gpu-dra:teams:", line) for line in lines):
            raise UsageError(f"{shown}: gpu-dra:teams is written in flow style; add `{name}: {{}}` to it yourself")
        config = next((i for i, line in enumerate(lines) if re.match(r"^config:\s*(#.*)?$", line)), None)
        if config is None:
            raise UsageError(f"{shown}: no config: map to add gpu-dra:teams to")
        ending = "" if text.endswith("\n") or not text else "\n"
        return text + ending + f"  gpu-dra:teams:\n    {name}: {{}}\n"
    indent = len(lines[at]) - len(lines[at].lstrip())
    end, child = at + 1, None
    for i in range(at + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(lines[i]) - len(lines[i].lstrip())
        if depth <= indent:
            break
        child = depth if child is None else child
        end = i + 1
    pad = " " * (child if child is not None else indent + 2)
    return "".join(lines[:end]) + f"{pad}{name}: {{}}\n" + "".join(lines[end:])


def _check_loads(root: Path, stack: str, name: str, team_text: str, stack_text: str) -> None:
    """The stack as it will be, loaded from a copy of stacks/ first: a mistake is a config error here, with nothing
    written in the project."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch)
        shutil.copytree(root / "stacks", copy / "stacks")
        for named in (copy / "stacks" / "teams").glob("*.yaml"):  # workloads: paths are checked in the project
            named.write_text(re.sub(r"(?m)^workloads:.*(\n[ -].*)*", "", named.read_text()))
        (copy / "stacks" / "teams" / f"{name}.yaml").write_text(team_text)
        stack_file(copy, stack).write_text(stack_text)
        load_stack(copy, stack)


def _replace(path: Path, text: str) -> None:
    """`path` replaced whole by `text` at once (a reader sees the old file or the new), its mode kept."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------------------------------------ show
def _show(root: Path, args: argparse.Namespace) -> int:
    from gpu_dra.core.analysis.upgrade.judging import verdicts  # the explain --stack verdicts, one per template

    stack = load_stack(root, args.stack)
    team = next((t for t in stack.teams if t.name == args.name), None)
    if team is None:
        hosted = [t.name for t in stack.teams]
        raise UsageError(f"stack {args.stack} hosts no team {args.name}; {did_you_mean(args.name, hosted)}"
                         f"it hosts: {', '.join(hosted) or 'none'}")
    judged = verdicts(stack)
    templates = []
    for template in team.claim_templates:
        _, verdict = judged[f"{team.namespace_name}/{template.name}"]
        served = sorted({node.rsplit("-", 1)[0] for node in verdict.nodes})
        templates.append({"template": template.name, "classes": sorted({c for r in template.requests for c in
                                                                         _classes(r)}),
                          "servedBy": served, "allocatable": verdict.usable,
                          "reason": "" if verdict.allocatable else verdict.reason,
                          "provisioning": verdict.provisioning})
    view: dict[str, Any] = {"team": team.name, "stack": stack.name, "namespace": team.namespace_name,
                            "quota": {"claims": team.quota.claims, "devices": dict(team.quota.devices)},
                            "queue": None if team.queue is None or stack.config.kueue is None else
                            {"nominalQuota": dict(team.queue.nominal_quota)},
                            "templates": templates}
    if args.format == "json":
        print(json.dumps(view, indent=2))
    else:
        _print_view(view)
    return EXIT_OK if all(t["allocatable"] for t in templates) else EXIT_FINDINGS


def _classes(request: Any) -> list[str]:
    if request.device_class:
        return [request.device_class]
    return [alternative.device_class for alternative in request.first_available or []]


def _print_view(view: dict[str, Any]) -> None:
    quota = view["quota"]
    devices = ", ".join(f"{name}: {count}" for name, count in quota["devices"].items()) or "none"
    print(f"team {view['team']} on stack {view['stack']}: namespace {view['namespace']}")
    print(f"  quota: {quota['claims'] if quota['claims'] is not None else 'no'} claims; devices {devices}")
    if view["queue"]:
        print(f"  Kueue queue: nominal {', '.join(f'{k}: {v}' for k, v in view['queue']['nominalQuota'].items())}")
    for entry in view["templates"]:
        where = ", ".join(entry["servedBy"]) or "nothing on this stack"
        print(f"  template {entry['template']} ({', '.join(entry['classes'])}): served by {where}")
        if entry["provisioning"]:
            print(f"    {entry['provisioning']}")
        if not entry["allocatable"]:
            print(f"    NOT allocatable: {entry['reason'] or 'no NodePool would launch a node for it'}")


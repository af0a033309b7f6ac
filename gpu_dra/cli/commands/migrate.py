"""`gpu-dra migrate`: which migration phase each GPU workload is in on a stack, the claim template it needs and the
workload rewritten to claims (gpu_dra.core.analysis.migrate holds the knowledge; docs/migration.md the phases)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gpu_dra.cli.inputs import input_files, read_inputs, team_workload_paths
from gpu_dra.cli.manifest_files import OUT_HELP, FolderError, write_manifests
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import shown
from gpu_dra.core.analysis import migrate
from gpu_dra.core.analysis.migrate import Breakage, Plan, WorkloadVerdict
from gpu_dra.core.config.loader import load_stack

EXAMPLES = """examples:
  gpu-dra migrate --stack prod examples/migrate/            # every workload of a folder (recursively)
  gpu-dra migrate --stack prod                              # the workloads the stack's team files name
  gpu-dra migrate --stack staging deploy.yaml sts.yaml
  helm template vllm ./charts/vllm | gpu-dra migrate --stack prod -
  kubectl get deploy,sts,ds,job,cronjob -A -o yaml | gpu-dra migrate --stack prod -
  gpu-dra migrate --stack prod --without legacy-a10g examples/migrate/   # what removing the group strands
  gpu-dra migrate --stack dev --write migrated examples/migrate/          # the rewrites, one file per workload
  gpu-dra migrate --stack prod --format json examples/migrate/ | jq '.workloads[] | {workload, phase}'

exit codes: 0 every GPU workload has a place (after --without, if given), 1 some have none, 2 bad input
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE|DIR",
                        help="Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs (YAML or "
                             "JSON, multi-document, kind: List, helm template output; other kinds are ignored); a "
                             "folder is read recursively (*.yaml, *.yml, *.json); - is stdin (default: the "
                             "workloads the stack's team files name)")
    parser.add_argument("--stack", required=True, help="the stack judged (stacks/Pulumi.<stack>.yaml)")
    parser.add_argument("--without", action="append", default=[], metavar="GROUP",
                        help="also judge the stack without this device-plugin node group: the workloads left with "
                             "nowhere to run and the GPUs short per phase (repeatable)")
    parser.add_argument("--write", metavar="DIR",
                        help=f"write each workload rewritten to claims to DIR/<namespace>/<kind>-<name>.yaml; "
                             f"{OUT_HELP}")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    stack = load_stack(root, args.stack)
    without = list(dict.fromkeys(args.without))
    paths = args.paths or team_workload_paths(root, stack.teams)
    if not paths:
        raise UsageError(f"no FILE given and no team of stack {args.stack} names workloads (`workloads:` in "
                         "stacks/teams/<team>.yaml)")
    try:
        migrate.without_groups(stack, without)  # an unknown group before any file is read
        workloads, claims = migrate.read_workloads(read_inputs(input_files(paths)),
                                                   stack.config.cluster.kubernetes_version)
    except migrate.MigrateError as error:
        raise UsageError(str(error)) from None
    if not workloads:
        raise UsageError("no GPU workload in the inputs: no Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job "
                         "or CronJob requests nvidia.com/* resources or names resource claims")
    cache: dict[str, Any] = {}
    today = migrate.plan(stack, workloads, claims, cache=cache)
    breakage = (migrate.Breakage(today, migrate.plan(stack, workloads, claims, without, cache, rewrites=False))
                if without else None)
    written = _write(today, Path(args.write)) if args.write else []
    if args.format == "json":
        document = today.as_dict()
        document["without"] = breakage.as_dict() if breakage else None
        document["written"] = [shown(p, Path.cwd()) for p in written]
        print(json.dumps(document, indent=2))
    else:
        _print(today, breakage, written)
    final = breakage.after if breakage else today
    return EXIT_FINDINGS if final.stranded else EXIT_OK


def _write(plan: Plan, out: Path) -> list[Path]:
    """The rewrites into `out`, as `gpu-dra render --out` writes manifests: only files gpu-dra wrote there before are
    replaced or pruned; a file of the user's in the way stops the run before anything is written."""
    try:
        return write_manifests([v.rewrite.manifest for v in plan.verdicts if v.rewrite is not None], out.resolve(),
                               "--write")
    except FolderError as error:
        raise UsageError(str(error)) from None


def _print(plan: Plan, breakage: Breakage | None, written: list[Path]) -> None:
    print(f"Stack {plan.stack}: {plan.target.label}, {len(plan.verdicts)} GPU workload(s)")
    for mapping in plan.mappings.values():
        state = "effective" if plan.effective else "NOT effective (DRAExtendedResource is off: the API server drops it)"
        print(f"  mapping {mapping.resource} -> DeviceClass {mapping.device_class} ({mapping.origin}): {state}")
    if not plan.groups:
        print("  no device-plugin node group")
    for group in plan.groups:
        print(f"  device-plugin group {group.name}: {group.view.summary}: {group.total} GPUs, {group.used} "
              "taken by these workloads")
    print()
    shown_templates: set[tuple[str | None, str, str]] = set()
    for verdict in plan.verdicts:
        _print_verdict(verdict, shown_templates)
    phases = plan.phases()
    short = sum(v.gpus_short for v in plan.verdicts)
    print(f"Workloads per phase: {', '.join(f'phase {p}: {n}' for p, n in phases.items())}. Nowhere to run: "
          f"{len(plan.stranded)} workload(s), {short} GPU(s) short.")
    if breakage is not None:
        groups = ", ".join(breakage.after.without)
        broken = breakage.broken
        print()
        print(f"Without {groups}: {len(broken)} more workload(s) left with nowhere to run"
              + (":" if broken else "."))
        for before, after in broken:
            print(f"  {before.workload.label} (phase {before.phase} today): {after.gpus_short} GPU(s) short: "
                  f"{after.placement.reason}")
        print(f"  GPUs short per phase (of today): "
              f"{', '.join(f'phase {p}: {n}' for p, n in breakage.shortfall().items())}")
    if written:
        print()
        print(f"{len(written)} rewrite(s) written:")
        for path in written:
            print(f"  {shown(path, Path.cwd())}")


def _print_verdict(verdict: WorkloadVerdict, shown_templates: set[tuple[str | None, str, str]]) -> None:
    workload, placement = verdict.workload, verdict.placement
    asks = ", ".join(f"{r}: {n}" for r, n in workload.per_pod().items()) or "resource claims"
    pods = f"{placement.pods} pod(s)" if workload.replicas is not None else f"{placement.pods} node(s)"
    print(f"{workload.label} ({workload.where}): {pods} x {asks}")
    ways = []
    for group, count in placement.device_plugin.items():
        ways.append(f"device plugin on {group} ({count} pod(s), {placement.gpus[group]} GPU(s))")
    if placement.mapped and placement.mapping is not None:
        ways.append(f"mapping {placement.mapping.resource} -> {placement.mapping.device_class} ({placement.mapped} "
                    "pod(s))")
    if placement.claims:
        ways.append(f"its claims ({placement.claims} pod(s))")
    if placement.pending or not ways:
        ways.append(f"nowhere for {placement.pending} pod(s): {placement.reason}" if ways or placement.pending
                    else f"nowhere: {placement.reason}")
    print(f"  today: {'; '.join(ways)}")
    print(f"  phase {verdict.phase}: {verdict.why}")
    for choice in verdict.templates:
        owner = f"team {choice.team}'s" if choice.team else f"namespace {workload.namespace}'s (no team)"
        if choice.exists:
            print(f"  template: {owner} {choice.name} fits ({choice.count} x {choice.device_class})")
        elif (choice.team, workload.namespace, choice.name) in shown_templates:
            print(f"  template: {choice.name}, to add as shown above")
        else:
            shown_templates.add((choice.team, workload.namespace, choice.name))
            where = f"add to {choice.team_file}" if choice.team_file else "no team file to add it to"
            print(f"  template: {owner} has none that fits; {where}:")
            assert choice.team_yaml is not None  # a template new in this run, first shown here
            for line in choice.team_yaml.splitlines():
                print(f"    {line}")
        for note in choice.notes:
            print(f"    note: {note}")
    rewrite = verdict.rewrite
    if rewrite is not None:
        schema = ("valid under the strict schema of Kubernetes " + rewrite.schema if rewrite.schema_error is None
                  else f"INVALID under the strict schema of Kubernetes {rewrite.schema}: {rewrite.schema_error}")
        if rewrite.allocatable:
            where = (f"on all {len(rewrite.runs_on)} node(s) it runs on" if workload.replicas is None
                     else f"on {rewrite.node} (of {len(rewrite.nodes)} node(s))")
            fate = f"allocatable {where}"
        else:
            fate = f"NOT allocatable: {rewrite.reason}"
        optional = " (optional: the mapping serves it unchanged)" if verdict.phase == 3 else ""
        print(f"  rewrite{optional}: {schema}; {fate}")
    for note in verdict.notes:
        print(f"  note: {note}")
    print()

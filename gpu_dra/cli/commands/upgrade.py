"""`gpu-dra upgrade`: what moving a stack to another Kubernetes minor, driver chart release or Karpenter release does
to its teams, before it happens (gpu_dra.core.analysis.upgrade holds the knowledge; docs/upgrading.md the guide)."""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import Any

from gpu_dra.cli.inputs import input_files, read_inputs, team_workload_paths
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import cut, sarif_document
from gpu_dra.core.analysis import migrate, upgrade
from gpu_dra.core.analysis.inventory import objects_in_document
from gpu_dra.core.analysis.upgrade import RULES, UpgradeReport
from gpu_dra.core.config.loader import available_stacks, load_stack
from gpu_dra.core.config.models import Stack
from gpu_dra.core.config.models.cluster import SUPPORTED_KUBERNETES_VERSIONS
from gpu_dra.core.facts import gates, karpenter, nvidia
from gpu_dra.core.findings import ERROR, Finding
from gpu_dra.core.yamlsource import Located

EXAMPLES = """examples:
  gpu-dra upgrade --stack dev --to 1.36                     # the next Kubernetes minor
  gpu-dra upgrade --all-stacks --to next                    # every stack to its next minor
  gpu-dra upgrade --stack dev --to 1.36 examples/migrate/   # and what happens to these workloads
  gpu-dra upgrade --stack prod --driver-to 0.4.1            # a driver chart release
  gpu-dra upgrade --stack prod --driver-to dra-driver-nvidia-gpu@0.4.1   # another chart line
  gpu-dra upgrade --stack prod --to 1.36 --format sarif > upgrade.sarif
  gpu-dra upgrade --stack prod --to 1.36 --today 2027-03-01   # the calendar as it will be then

exit codes: 0 nothing breaks, 1 something breaks (an error finding: a template or workload loses its place, a
manifest's API is no longer served, the stack is refused at the target), 2 what cannot be judged (the stack file as it
is refused, a downgrade, the version it runs, a malformed version, a version or release gpu-dra has not read, no
Karpenter or driver chart to move); with --all-stacks, `next` or `newest`, a stack with nothing to move (or already
past the target) is named and left out
"""

FORMATS = ("text", "json", "sarif")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE|DIR",
                        help="workloads to place at both versions and manifests to check for API versions the target "
                             "no longer serves (YAML or JSON; a folder is read recursively; - is stdin; default: the "
                             "workloads the stack's team files name)")
    stacks = parser.add_mutually_exclusive_group(required=True)
    stacks.add_argument("--stack", help="the stack judged (stacks/Pulumi.<stack>.yaml)")
    stacks.add_argument("--all-stacks", action="store_true", help="every stack in stacks/")
    change = parser.add_mutually_exclusive_group(required=True)
    change.add_argument("--to", metavar="VERSION",
                        help=f"a Kubernetes minor ({', '.join(gates.VERSIONS)}), or `next`: the stack's next one")
    change.add_argument("--driver-to", metavar="RELEASE",
                        help="a DRA driver chart release, or CHART@RELEASE for the other chart line, or `newest`: "
                             "the newest release of the stack's chart that gpu-dra has read")
    change.add_argument("--karpenter-to", metavar="VERSION",
                        help=f"a Karpenter release (gpu-dra has read {', '.join(karpenter.KARPENTER_VERSIONS)})")
    parser.add_argument("--today", metavar="YYYY-MM-DD", type=_day,
                        help="judge the support calendar as of this day, to plan an upgrade ahead (default: today, "
                             "UTC)")
    parser.add_argument("--format", choices=FORMATS, default="text")


def _day(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date such as 2027-03-01") from None


def _change(args: argparse.Namespace, current: dict[str, str]) -> tuple[str, str]:
    """(what, target version) from the flags; `next` and `newest` resolved for the stack."""
    if args.to is not None:
        if args.to == "next":
            following = f"1.{int(current['kubernetes'].split('.')[1]) + 1}"
            return "kubernetes", following if following in SUPPORTED_KUBERNETES_VERSIONS else current["kubernetes"]
        return "kubernetes", args.to
    if args.driver_to is not None:
        if args.driver_to == "newest":
            return "driver", nvidia.CHART_RELEASES[current["chart"]][-1]
        return "driver", args.driver_to
    return "karpenter", args.karpenter_to


def _already(what: str, target: str, stack: Any) -> str | None:
    """Why the stack has nothing to move to `target`: it runs it already (and, for the driver, whether a newer
    release exists that gpu-dra has not read)."""
    chart = stack.config.dra_driver.chart.value
    current = upgrade.current_version(stack, what)
    if target not in (current, f"{chart}@{current}"):
        return None
    said = f"stack {stack.name} already runs {target}"
    if what == "kubernetes" and target == SUPPORTED_KUBERNETES_VERSIONS[-1]:
        said += ", the newest Kubernetes version gpu-dra stacks support"
    if what == "driver" and current == nvidia.CHART_RELEASES[chart][-1]:
        unread = ", ".join(nvidia.UNREAD_RELEASES.get(chart, {}))
        said += f", the newest {chart} release gpu-dra has read" + (f" ({unread} exists, unread)" if unread else "")
    return said


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    names = available_stacks(root) if args.all_stacks else [args.stack]
    inputs = read_inputs(input_files(args.paths)) if args.paths else None
    keyword = args.to == "next" or args.driver_to == "newest"  # each stack's own target: none may be left
    reports, skipped = [], []
    for name in names:
        stack = load_stack(root, name)
        config = stack.config
        current = {"kubernetes": config.cluster.kubernetes_version, "chart": config.dra_driver.chart.value}
        what, target = _change(args, current)
        try:
            already = _already(what, target, stack)
        except upgrade.UpgradeError as error:  # no Karpenter, no driver chart: nothing of it to move
            if not args.all_stacks:
                raise UsageError(str(error)) from None
            skipped.append(str(error).removesuffix(": nothing to upgrade"))
            continue
        try:
            if already and (args.all_stacks or keyword):
                skipped.append(already)
                continue
            pair = upgrade.load_pair(root, name, what, target)
        except upgrade.OlderTarget as error:
            if not args.all_stacks:
                raise UsageError(f"stack {name}: {error}") from None
            skipped.append(f"stack {name} runs {upgrade.current_version(stack, what)}, newer than {target}")
            continue
        except upgrade.UpgradeError as error:
            raise UsageError(f"stack {name}: {error}") from None
        sources = inputs if inputs is not None else _team_workloads(root, stack)
        try:
            workloads, claims = migrate.read_workloads(sources, config.cluster.kubernetes_version)
        except migrate.MigrateError as error:
            raise UsageError(str(error)) from None
        manifests = [(obj, name_) for name_, documents in (inputs or []) for document in documents
                     for obj in objects_in_document(document.data)]
        report = upgrade.judge(pair, workloads, claims, manifests, args.today)
        if pair.after is not None and what == "kubernetes":
            try:  # as `migrate` reads them on the stack after the change
                migrate.read_workloads(sources, pair.after.config.cluster.kubernetes_version)
            except migrate.MigrateError as error:
                report.findings.append(Finding("upgrade-workload", ERROR, f"at {pair.change.target}: {error}"))
        reports.append(report)
    if args.format == "json":
        print(json.dumps({"upgrades": [r.as_dict() for r in reports], "skipped": skipped}, indent=2, default=str))
    elif args.format == "sarif":
        print(json.dumps(as_sarif(reports), indent=2))
    else:
        for index, report in enumerate(reports):
            if index:
                print()
            _print(report)
        for said in skipped:
            print(f"{said}: nothing to judge")
    return EXIT_FINDINGS if any(r.breaks for r in reports) else EXIT_OK


def _team_workloads(root: Path, stack: Stack) -> list[tuple[str, list[Located]]]:
    paths = team_workload_paths(root, stack.teams)
    return read_inputs(input_files(paths)) if paths else []


def _print(report: UpgradeReport) -> None:
    change = report.change
    print(f"Stack {report.stack}: {change.label} (gpu-dra:{'.'.join(change.key)}), judged on {report.today}")
    if report.calendar:
        print()
        print("EKS support:")
        for window in report.calendar:
            price = f"; ${window.price_per_hour}/cluster-hour today" if window.price_per_hour else ""
            ends = (f"standard until {window.standard_ends}, extended until {window.extended_ends}"
                    if window.standard_ends else "no calendar row")
            print(f"  {window.version}: {ends}; {window.state}{price}")
    if change.what == "kubernetes" and report.gates:
        print()
        print("DRA gates that switch:")
        for switch in report.gates:
            print(f"  {switch.gate}: {switch.before} -> {switch.after}: {switch.changes}")
            for effect in switch.effects:
                print(f"    - {effect}")
    for title, lines in (("Driver chart", report.driver), ("Karpenter", report.karpenter)):
        if lines:
            print()
            print(f"{title}:")
            for line in lines:
                print(f"  - {line}")
    print()
    if report.verdicts:
        print(f"Claim templates whose verdict changes ({len(report.verdicts)}; {report.unchanged} unchanged):")
        for verdict in report.verdicts:
            print(f"  {verdict.claim} (team {verdict.team}):")
            print(f"    before: {verdict.before.words()}")
            print(f"    after:  {verdict.after.words()}")
    elif report.unchanged:
        print(f"Claim templates: all {report.unchanged} keep their verdict and devices")
    if report.workloads_judged:
        moved = len(report.workloads)
        print(f"Legacy workloads: {moved} of {report.workloads_judged} change place" + (":" if moved else ""))
        for move in report.workloads:
            print(f"  {move.workload} ({move.where}):")
            print(f"    before: {move.before}")
            print(f"    after:  {move.after}")
    if report.apis:
        print("API versions the target no longer serves:")
        for use in report.apis:
            print(f"  {use.kind} {use.name} ({use.where}): {use.api_version}, not served from {use.removed_in} "
                  f"(planned); use {use.replacement}")
    print()
    print("Order:")
    for number, step in enumerate(report.order, 1):
        why = f" ({step.why})" if step.why else ""
        print(f"  {number}. {step.what}{why}")
    if report.findings:
        print()
        for item in report.findings:
            where = f"{item.file}:{item.line}" if item.file and item.line else item.file or item.object
            named = f"{item.object}: " if item.object and item.object != where and item.object not in item.message \
                else ""
            print(f"{item.severity}: {where}: [{item.rule}] {named}{item.message}" if where else
                  f"{item.severity}: [{item.rule}] {named}{item.message}")
    for note in report.notes:
        print(f"note: {note}")
    print(f"Sources: {', '.join(report.sources)}")
    errors = sum(1 for f in report.findings if f.severity == "error")
    print()
    print(f"{errors} error(s), {len(report.findings) - errors} warning(s): "
          + ("the upgrade breaks something above" if errors else "nothing breaks"))


def as_sarif(reports: list[UpgradeReport]) -> dict[str, Any]:
    """One result per finding, at the file and line it names (the stack or team file) where it has one."""
    results = []
    for report in reports:
        for item in report.findings:
            text = f"stack {report.stack}, {report.change.label}: {item.message}"
            location: dict[str, Any] = {"logicalLocations": [{"fullyQualifiedName": item.object or report.stack}]}
            if item.file and not item.file.startswith(("stack ", "<")):  # a file, not a stack or <stdin>
                physical: dict[str, Any] = {"artifactLocation": {"uri": item.file}}
                if item.line:
                    physical["region"] = {"startLine": item.line}
                location["physicalLocation"] = physical
            results.append({"ruleId": item.rule, "level": item.severity, "message": {"text": cut(text, 2000)},
                            "locations": [location]})
    return sarif_document(RULES, results)

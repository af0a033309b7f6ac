"""What an upgrade of a stack does to its teams, before it happens: a new Kubernetes minor, driver chart release or
Karpenter release (`gpu-dra upgrade`, docs/upgrading.md).

The stack is loaded twice, as its files say and with the one key changed (stacks), and both are judged by the same
models every verb uses (judging): the EKS support calendar, the gate table, the fleet and the version-faithful
allocator, migrate's placement of legacy workloads, the API versions each minor serves. What differs is the report
(report); a release's own changes come from the facts kept of each release (releases). Pure: the shell reads the
files given and prints."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from gpu_dra.core.analysis import migrate
from gpu_dra.core.analysis.migrate.stack_view import mappings
from gpu_dra.core.analysis.stack_nodes import group_views
from gpu_dra.core.analysis.upgrade import judging, releases
from gpu_dra.core.analysis.upgrade.report import RULES, Change, Step, UpgradeReport, finding
from gpu_dra.core.analysis.upgrade.stacks import (
    KEYS,
    CannotFollow,
    OlderTarget,
    StackPair,
    UpgradeError,
    current_version,
    key_line_of,
    load_pair,
    load_since,
)
from gpu_dra.core.config.models import AllocationMode, Stack
from gpu_dra.core.facts import eks, nvidia
from gpu_dra.core.facts.karpenter_dra import KARPENTER_DRA
from gpu_dra.core.facts.kubernetes_apis import minor_of
from gpu_dra.core.facts.target import Platform

__all__ = ["KEYS", "RULES", "CannotFollow", "Change", "OlderTarget", "StackPair", "UpgradeError", "UpgradeReport",
           "current_version", "judge", "key_line_of", "load_pair", "load_since"]


def judge(pair: StackPair, workloads: Sequence[migrate.Workload] = (), claims: Sequence[Mapping[str, Any]] = (),
          manifests: Sequence[tuple[Mapping[str, Any], str]] = (),
          today: datetime.date | None = None) -> UpgradeReport:
    """The upgrade's report: `workloads` (and the claims they name) are placed at both versions, `manifests`
    (object, where) checked for API versions the target stops serving."""
    before, change = pair.before.stack, pair.change
    today = today or eks.today()
    stack_file, line = pair.before.source.file, key_line_of(pair.before, change.what)
    report = UpgradeReport(before.name, change, today.isoformat(), findings=list(pair.refused))
    eks_cluster = before.config.cluster.platform is Platform.eks
    if change.what == "kubernetes" and eks_cluster:
        report.calendar = [judging.support_window(v, today) for v in (change.current, change.target)]
        report.findings += judging.calendar_findings(report.calendar, today, stack_file, line)
    elif change.what == "kubernetes":
        report.notes.append("an existing cluster's support calendar is its provider's: gpu-dra knows EKS's only; its "
                            "gates are judged as the stack declares them (gpu-dra:cluster.featureGates), else as "
                            "upstream's defaults")
    after = pair.after
    if after is None:  # refused at the target: nothing more can be judged there
        report.order = _order(before, None, change, report)
        return report
    before_plan = judging.plan_workloads(before, workloads, claims)
    after_plan = judging.plan_workloads(after, workloads, claims)
    report.workloads = judging.workload_moves(before_plan, after_plan)
    report.workloads_judged = len(before_plan.verdicts)
    report.findings += judging.workload_findings(report.workloads)
    report.verdicts, report.unchanged = judging.verdict_changes(before, after)
    lines = _template_lines(pair)
    report.findings += judging.verdict_findings(report.verdicts, before.config.target, after.config.target, lines)
    if change.what == "kubernetes":
        report.gates = judging.gate_switches(before, after, report.workloads)
        report.findings += judging.mapping_findings(after, report.gates, stack_file, line)
        report.findings += judging.field_changes(before, after, stack_file, lines)
        report.apis = judging.api_uses(before, after, manifests)
        report.findings += judging.api_findings(report.apis)
    elif change.what == "driver":
        report.driver, found = releases.driver_changes(before, after, stack_file, line)
        report.findings += found
        if not releases.nothing_modelled(report.driver):  # one finding, so a pull request says what moves
            report.findings.append(finding("upgrade-driver", "; ".join(report.driver), file=stack_file, line=line))
    else:
        pools = [(p.name, list(p.instance_types)) for p in before.config.karpenter_node_pools]
        report.karpenter = releases.karpenter_type_changes(
            pools, KARPENTER_DRA.get(change.current, {}), KARPENTER_DRA.get(change.target, {}),
            (change.current, change.target))
        if report.karpenter:
            report.findings.append(finding("upgrade-karpenter", "; ".join(report.karpenter), file=stack_file,
                                           line=line))
    report.notes += [n for n in after_plan.notes if n not in before_plan.notes]
    report.order = _order(before, after, change, report)
    return report


def _template_lines(pair: StackPair) -> dict[str, tuple[str, int | None]]:
    """namespace/template -> the team file and line that declares it; a DeviceClass's name -> the stack file's line
    of the legacyMappings entry that maps it (its only gated field), else of its deviceClasses entry."""
    source = pair.before.source
    config = pair.before.stack.config
    lines: dict[str, tuple[str, int | None]] = {
        c.name: (source.file, source.located.line(("config", "gpu-dra:deviceClasses", i)))
        for i, c in enumerate(config.device_classes)}
    lines.update({m.device_class: (source.file, source.located.line(("config", "gpu-dra:legacyMappings", i)))
                  for i, m in enumerate(config.legacy_mappings)})
    for team in pair.before.stack.teams:
        own = pair.before.teams.get(team.name)
        for index, template in enumerate(team.claim_templates):
            if own is not None:
                line = own.located.line(("claimTemplates", index))
                lines[f"{team.namespace_name}/{template.name}"] = (own.file, line)
    return lines


def _order(before: Stack, after: Stack | None, change: Change, report: UpgradeReport) -> list[Step]:
    """The steps of the upgrade in the order they must happen, each with why."""
    key = f"gpu-dra:{'.'.join(change.key)}"
    steps: list[Step] = []
    if report.findings and any(f.rule == "upgrade-refused" for f in report.findings):
        steps.append(Step("make the stack valid at the target first", "the stack file is refused there (below)"))
    if change.what != "kubernetes":
        chart, _, version = change.target.rpartition("@")
        setting = f"gpu-dra:draDriver.chart: {chart} and version: {version}" if chart else f"{key}: {change.target}"
        steps.append(Step(f"set {setting} and run `pulumi up`",
                          "Helm upgrades the release in place" if change.what == "driver" else
                          "the CRD chart is upgraded before the controller (gpu-dra installs them as two charts)"))
        return steps
    mapped = [g for g in report.gates if g.gate == "DRAExtendedResource" and g.turns_on]
    device_plugin = any(view.mode == AllocationMode.device_plugin.value for view in group_views(before))
    keep = ("give the workloads that must stay on device-plugin nodes a nodeSelector for those nodes" if device_plugin
            else "keep the workloads that must not get them off this stack (it has no device-plugin node group)")
    for mapping in mappings(after).values() if mapped and after is not None else ():
        undo = (f"remove {mapping.origin}" if mapping.origin.startswith("gpu-dra:") else
                f"{mapping.origin}'s class maps it in every release gpu-dra supports, so {keep}")
        steps.append(Step(f"before the control plane: decide whether pods asking for {mapping.resource} may land on "
                          f"DeviceClass {mapping.device_class}'s devices; where not, {undo}",
                          "DRAExtendedResource turns on with the control plane, and from then on the scheduler "
                          f"serves {mapping.resource} from DRA devices too"))
    if report.apis:
        steps.append(Step("before the control plane: rewrite the manifests listed under APIs to the replacement "
                          "version", "the target's API server no longer serves theirs"))
    current, target = (int(v.split(".")[1]) for v in (change.current, change.target))
    if before.config.cluster.platform is not Platform.eks:
        steps.append(Step(f"the cluster to {change.target}, its provider's way; then set "
                          f"gpu-dra:cluster.kubernetesVersion: \"{change.target}\" (and featureGates, where they "
                          "change) and run `pulumi up`", "gpu-dra creates no control plane or nodes on an existing "
                          "cluster: the stack says what the cluster runs"))
        steps += _driver_step(before, change)
        return steps
    for minor in range(current + 1, target + 1):
        steps.append(Step(f"control plane to 1.{minor}: set gpu-dra:cluster.kubernetesVersion: \"1.{minor}\" and run "
                          "`pulumi up`", "EKS upgrades a control plane one minor version at a time"
                          if target - current > 1 else "the control plane first: nodes may not be newer than it"))
    pinned = sorted(before.config.cluster.addon_versions)
    addons = ", ".join(eks.EKS_ADDONS)
    steps.append(Step(f"add-ons ({addons}): the same `pulumi up` moves the unpinned ones to EKS's default version for "
                      f"{change.target}" + (f"; pinned ones ({', '.join(pinned)}) need a version for "
                                            f"{change.target} in cluster.addonVersions" if pinned else ""),
                      "EKS does not update add-ons itself"))
    if before.config.node_groups:
        steps.append(Step("node groups: the same `pulumi up` rolls each managed node group to the target's AMI",
                          "a managed node group follows the cluster's version"))
    if before.config.karpenter_node_pools or before.config.auto_mode_node_pools:
        steps.append(Step("NodePools: Karpenter (or Auto Mode) replaces nodes whose AMI drifted from the target's",
                          "nodes are replaced, not upgraded in place: claims on them are allocated again"))
    steps += _driver_step(before, change)
    return steps


def _driver_step(before: Stack, change: Change) -> list[Step]:
    """Keep the driver chart, or move it after the control plane; whether its Chart.yaml accepts the target."""
    if not before.config.installs_driver_chart:
        return []
    driver = before.config.dra_driver
    floor = nvidia.CHART_MIN_KUBERNETES.get((driver.chart.value, driver.version))
    if floor is None:
        fits = "gpu-dra has not read which Kubernetes versions its Chart.yaml accepts"
    else:
        verb = "is" if minor_of(change.target) >= minor_of(floor) else "is not"
        fits = f"its Chart.yaml asks for Kubernetes {floor} or newer: {change.target} {verb}"
    return [Step(f"driver chart: keep {driver.chart.value} {driver.version} ({fits}) or move it after the control "
                 "plane (`gpu-dra upgrade --driver-to`)", "the driver publishes devices to the new API server")]

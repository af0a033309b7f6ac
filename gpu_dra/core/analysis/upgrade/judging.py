"""The sections of an upgrade that compare the stack at both versions: the support calendar, the DRA gates that
switch and what each changes for the stack's objects, the fields the API server starts or stops dropping, every team
template explained on the stack's fleet at both versions, the legacy workloads' places, and the API versions the
target stops serving. Every verb's model is the same: the fleet is inventory.synthesize's, the verdicts the
Explainer's with features_for(target), the workloads' places migrate.plan's."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from gpu_dra.core.analysis import migrate
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.explain.gates import DROPPED_ON_WRITE
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import synthesize
from gpu_dra.core.analysis.migrate import Plan, WorkloadVerdict
from gpu_dra.core.analysis.migrate.stack_view import mappings
from gpu_dra.core.analysis.provisioning import ProvisioningJudge, claim_provisioning
from gpu_dra.core.analysis.stack_nodes import cluster_nodes, group_views
from gpu_dra.core.analysis.upgrade.report import (
    ApiUse,
    GateSwitch,
    SupportWindow,
    Verdict,
    VerdictChange,
    WorkloadMove,
    finding,
)
from gpu_dra.core.config.models import Stack
from gpu_dra.core.dra.claims import (
    DeviceClass,
    ResourceClaim,
    claims_from_objects,
    classes_from_objects,
    gate_sites,
    parse_device_class,
)
from gpu_dra.core.facts import eks, gates, nvidia, nvidia_driver
from gpu_dra.core.facts.kubernetes_apis import removed_between
from gpu_dra.core.facts.target import Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.render import charts, manifests
from gpu_dra.core.render.chart_templates import chart_objects
from gpu_dra.core.yamlsource import format_path

# A version whose standard support ends within this many days of the day judged is called out: an upgrade takes
# planning, and a stack on upgradePolicy STANDARD is upgraded by EKS itself on that day.
SOON_DAYS = 90


def support_window(version: str, today: datetime.date) -> SupportWindow:
    """The version's EKS support as of `today` (facts/eks.SUPPORT_CALENDAR), what it costs per cluster-hour then."""
    row = eks.SUPPORT_CALENDAR.get(version)
    if row is None:
        return SupportWindow(version, "", "", "not in the EKS calendar gpu-dra has read", "", "")
    if today < row.standard_ends:
        state = f"standard support, {(row.standard_ends - today).days} day(s) left"
        price = eks.STANDARD_PRICE_PER_HOUR
    elif today < row.extended_ends:
        state = (f"extended support since {row.standard_ends} ({(row.extended_ends - today).days} day(s) left; "
                 "only with upgradePolicy EXTENDED, else EKS upgrades the control plane itself)")
        price = eks.EXTENDED_PRICE_PER_HOUR
    else:
        state = f"past extended support since {row.extended_ends}: EKS upgrades the control plane itself"
        price = ""
    return SupportWindow(version, row.standard_ends.isoformat(), row.extended_ends.isoformat(), state, price,
                         f"{row.source} ({row.status})")


def calendar_findings(windows: Sequence[SupportWindow], today: datetime.date, file: str,
                      line: int | None) -> list[Finding]:
    """The current version past standard support; the target leaving it within SOON_DAYS or already gone."""
    current, target = windows
    found = []
    if current.standard_ends and today >= datetime.date.fromisoformat(current.standard_ends):
        found.append(finding("upgrade-support", f"{current.version} left EKS standard support on "
                                                f"{current.standard_ends}: {current.state}", file=file, line=line))
    if target.standard_ends:
        ends = datetime.date.fromisoformat(target.standard_ends)
        if today >= ends:  # a warning: the newest version a stack may name can be there too
            found.append(finding("upgrade-support", f"the target {target.version} left EKS standard support on "
                                                    f"{ends} too: plan the next upgrade", file=file, line=line))
        elif (ends - today).days <= SOON_DAYS:
            found.append(finding("upgrade-support", f"the target {target.version} leaves EKS standard support on "
                                                    f"{ends}, in {(ends - today).days} day(s): plan the next upgrade",
                                 file=file, line=line))
    return found


def mapping_findings(after: Stack, switches: Sequence[GateSwitch], file: str, line: int | None) -> list[Finding]:
    """Each extendedResourceName the target starts to keep: from then on legacy pods may get DRA devices."""
    if not any(s.gate == "DRAExtendedResource" and s.turns_on for s in switches):
        return []
    return [finding("upgrade-mapping", f"DeviceClass {m.device_class} ({m.origin}) starts serving {m.resource} at "
                                       f"Kubernetes {after.config.cluster.kubernetes_version}: pods asking for "
                                       f"{m.resource} may get its devices on any node it reaches",
                    object=f"DeviceClass {m.device_class}", file=file, line=line)
            for m in mappings(after).values()]


def _state(target: Target, gate: str) -> str:
    state = gates.state(gate, target.kubernetes_version)
    if state is None:
        return "absent"
    return f"{state.stage}, {'on' if target.enabled(gate) else 'off'}"


def gate_switches(before: Stack, after: Stack, moved: Sequence[WorkloadMove]) -> list[GateSwitch]:
    """Every DRA gate on in one version and off in the other, and what that changes for this stack by name."""
    old, new = before.config.target, after.config.target
    switches = []
    for gate in gates.GATES:
        if old.enabled(gate) == new.enabled(gate):
            continue
        on = new.enabled(gate)
        switches.append(GateSwitch(gate, _state(old, gate), _state(new, gate), on, gates.WHAT_IT_CHANGES[gate],
                                   _effects(gate, on, before, after, moved)))
    return switches


def _effects(gate: str, on: bool, before: Stack, after: Stack, moved: Sequence[WorkloadMove]) -> list[str]:
    """What the gate's switch does to this stack's objects, named."""
    effects = []
    if gate == "DRAExtendedResource" and on:
        served = mappings(after)
        for mapping in served.values():
            effects.append(f"DeviceClass {mapping.device_class} ({mapping.origin}) starts serving {mapping.resource}: "
                           f"pods asking for {mapping.resource} on nodes without a device plugin get its devices")
        if moved:
            effects.append(f"legacy workloads that change place (below): {', '.join(m.workload for m in moved)}")
        if not served:
            effects.append("no DeviceClass of this stack names an extendedResourceName")
    if gate == "DRADeviceTaints" and on:
        effects += _health_taints(after)
    if gate == "DRAPartitionableDevices" and on:
        classes = _mig_classes(after)
        mig = sorted(f"{team.namespace_name}/{template.name}" for team in after.teams
                     for template in team.claim_templates
                     if any(classes & {r.device_class, *(s.device_class for s in r.first_available or ())}
                            for r in template.requests))
        effects.append(f"templates asking for MIG devices: {', '.join(mig)}" if mig else
                       f"no template of this stack asks for MIG devices ({', '.join(sorted(classes))})")
    return effects


def _health_taints(stack: Stack) -> list[str]:
    """What device taints start to do on the stack: those the driver's health check puts on unhealthy GPUs
    (facts/nvidia_driver.HEALTH_TAINTS), and the templates that tolerate them."""
    driver = stack.config.dra_driver
    if not stack.config.installs_driver_chart:
        return ["no driver chart on this stack: what taints Auto Mode's driver publishes is not documented"]
    level = nvidia.release_level_of(driver.version)
    blocking = [key for key, effect in nvidia_driver.HEALTH_TAINTS.items() if effect.startswith("NoSchedule")]
    if level < nvidia_driver.HEALTH_TAINTS_SINCE:
        return [f"{driver.chart.value} {driver.version} publishes no device taints"]
    gate = nvidia_driver.HEALTH_TAINT_GATE
    if not nvidia_driver.effective_gates(driver.version, driver.feature_gates).get(gate):
        return [f"the driver's health check ({gate}) is off on this stack, so its devices carry no taints; with it "
                f"on, unhealthy GPUs are tainted {', '.join(blocking)} (NoSchedule) and kept from new claims"]
    tolerating = sorted(f"{team.namespace_name}/{template.name}" for team in stack.teams
                        for template in team.claim_templates
                        if any(_tolerates(t, key) for request in template.requests
                               for choice in (request, *(request.first_available or ()))
                               for t in choice.tolerations or () for key in blocking))
    return [f"the driver's health check ({gate}) is on: GPUs it finds unhealthy are tainted {', '.join(blocking)} "
            "(NoSchedule), and from now on no new claim gets such a GPU"
            + (f" but those of the templates that tolerate it: {', '.join(tolerating)}" if tolerating else
               " (no template of this stack tolerates them)")]


def _tolerates(toleration: Any, key: str) -> bool:
    """Whether a template's toleration tolerates a NoSchedule device taint with this key whatever its value (XID
    taints carry the error's number): Exists, for the key or for every key, and NoSchedule or every effect."""
    return (toleration.operator == "Exists" and toleration.key in (None, key)
            and toleration.effect in (None, "NoSchedule"))


def _mig_classes(stack: Stack) -> set[str]:
    """The classes of MIG devices: the chart's, and the stack's that match deviceType mig or MIG profiles."""
    return {"mig.nvidia.com", *(c.name for c in stack.config.device_classes
                                if c.match is not None and (c.match.device_type == "mig" or c.match.mig_profiles))}


def field_changes(before: Stack, after: Stack, stack_file: str,
                  lines: Mapping[str, tuple[str, int | None]]) -> list[Finding]:
    """The gated fields of the stack's classes and templates that the API server drops at one version and keeps at
    the other: kept, they start to act (a toleration, a capacity request); dropped, they stop. `lines`: each
    template's file and line."""
    old, new = before.config.target, after.config.target
    found = []
    for obj in manifests.dra_objects(after):
        if obj["kind"] == "DeviceClass":
            device_class = parse_device_class(obj)
            if device_class is None:
                continue
            parsed: DeviceClass | ResourceClaim = device_class
            label = f"DeviceClass {parsed.name}"
        else:
            parsed = claims_from_objects([obj])[0]
            label = f"ResourceClaimTemplate {parsed.name}"
        for path, guarded in gate_sites(parsed):
            if guarded not in DROPPED_ON_WRITE or old.enabled(guarded.gate) == new.enabled(guarded.gate):
                continue
            kept = new.enabled(guarded.gate)
            words = ("kept from the target on: it starts to act" if kept else
                     "dropped at the target: it stops acting, and the object is stored without it")
            file, line = lines.get(parsed.name, (stack_file, None))
            found.append(finding("upgrade-field", f"{format_path(path)} ({guarded.what}, gate {guarded.gate}) is "
                                                  f"{words}", error=not kept, object=label, file=file, line=line))
    return found


def verdicts(stack: Stack) -> dict[str, tuple[str, Verdict]]:
    """Each team template's verdict on the stack's synthesized fleet with its version's allocator, as `explain
    --stack` gives it: where it fits only nodes the stack's Karpenter or Auto Mode NodePools would launch, whether
    they would ever launch one for it (provisioning.ProvisioningJudge). claim -> (team, verdict)."""
    explainer = Explainer(classes_from_objects(manifests.stack_device_classes(stack)),
                          features=features_for(stack.config.target),
                          chart_classes=stack.config.installs_driver_chart)
    inventory = synthesize(stack.config)
    pools = inventory.launched_pools
    judge = ProvisioningJudge(explainer, stack.config.target.driver_level) if pools else None
    nodes = [n.node for n in cluster_nodes(group_views(stack))] or None
    found = {}
    for team in stack.teams:
        for template in team.claim_templates:
            claim = claims_from_objects([manifests.claim_template(team, template)])[0]
            report = explainer.explain(claim, inventory, nodes=nodes)
            devices: tuple[str, ...] = ()
            if report.solution is not None:
                node, allocations = report.solution
                devices = tuple(f"{node}/{device.name}" for a in allocations for device in a.devices)
            said = (claim_provisioning(partial(judge.judge, claim, pools), pools, report.allocatable, report.nodes)
                    if judge is not None else None)
            provisioning, never = said or ("", False)
            found[claim.name] = (team.name, Verdict(report.allocatable, tuple(sorted(report.nodes)), devices,
                                                    report.reason, provisioning, never))
    return found


def verdict_changes(before: Stack, after: Stack) -> tuple[list[VerdictChange], int]:
    """The templates whose verdict or devices differ between the two versions, and how many stay the same."""
    old, new = verdicts(before), verdicts(after)
    changed = [VerdictChange(claim, team, old[claim][1], verdict) for claim, (team, verdict) in new.items()
               if claim in old and old[claim][1] != verdict]
    return changed, sum(1 for claim in new if claim in old) - len(changed)


def verdict_findings(changes: Sequence[VerdictChange], before: Target, after: Target,
                     lines: Mapping[str, tuple[str, int | None]]) -> list[Finding]:
    """A template that loses its place is an error; one that keeps it on other nodes or devices a warning.
    `lines`: each template's file and line."""
    found = []
    for change in changes:
        file, line = lines.get(change.claim, (f"stacks/teams/{change.team}.yaml", None))
        lost = change.before.usable and not change.after.usable
        message = (f"Kubernetes {before.kubernetes_version}: {change.before.words()}; Kubernetes "
                   f"{after.kubernetes_version}: {change.after.words()}")
        found.append(finding("upgrade-verdict", message, error=lost,
                             object=f"ResourceClaimTemplate {change.claim}", file=file, line=line))
    return found


def _place(verdict: WorkloadVerdict, reasons: bool = True) -> str:
    """Where the workload's pods run, as migrate places them; `reasons`: say why the rest have nowhere."""
    placement = verdict.placement
    ways = [f"device plugin on {group} ({count} pod(s))" for group, count in placement.device_plugin.items()]
    if placement.mapped and placement.mapping is not None:
        ways.append(f"DRA through {placement.mapping.resource} -> DeviceClass {placement.mapping.device_class} "
                    f"({placement.mapped} pod(s))")
    if placement.claims:
        ways.append(f"its claims ({placement.claims} pod(s))")
    if placement.pending or not ways:
        ways.append(f"nowhere for {placement.pending} pod(s)" + (f": {placement.reason}" if reasons else ""))
    return "; ".join(ways)


def workload_moves(before: Plan, after: Plan) -> list[WorkloadMove]:
    """The workloads whose pods run elsewhere at the target (not only for another reason), in input order."""
    moves = []
    for old, new in zip(before.verdicts, after.verdicts, strict=True):
        if _place(old, reasons=False) != _place(new, reasons=False):
            moves.append(WorkloadMove(old.workload.label, old.workload.where, old.workload.source, old.workload.line,
                                      _place(old), _place(new), new.stranded and not old.stranded,
                                      old.stranded and not new.stranded))
    return moves


def workload_findings(moves: Sequence[WorkloadMove]) -> list[Finding]:
    """A workload left with nowhere to run is an error; one served another way (another node group, DRA devices
    through a mapping: other hardware, other quota) or given a place a warning, to review."""
    found = []
    for move in moves:
        what = ("is left with nowhere to run" if move.stranded else "gets a place" if move.placed
                else "is served another way")
        found.append(finding("upgrade-workload", f"{move.workload} {what}: now {move.after}",
                             error=move.stranded, object=move.workload, file=move.file, line=move.line))
    return found


def plan_workloads(stack: Stack, workloads: Sequence[migrate.Workload],
                   claims: Sequence[Mapping[str, Any]]) -> Plan:
    return migrate.plan(stack, workloads, claims, rewrites=False)


def api_uses(before: Stack, after: Stack, given: Sequence[tuple[Mapping[str, Any], str]]) -> list[ApiUse]:
    """Objects gpu-dra renders for the stack (its DRA objects, the driver chart's classes) and the manifests given,
    in an API version the current version serves and the target does not."""
    current, target = before.config.cluster.kubernetes_version, after.config.cluster.kubernetes_version
    driver = before.config.dra_driver
    rendered = chart_objects(driver.chart.value, driver.version, charts.dra_chart_values(before.config), "gpu-dra",
                             "gpu-dra") if before.config.installs_driver_chart else []
    objects = [*((obj, f"stack {before.name}") for obj in [*manifests.dra_objects(before), *rendered]), *given]
    uses = []
    for obj, where in objects:
        api = removed_between(str(obj.get("apiVersion")), current, target)
        if api is not None:
            meta = obj.get("metadata")
            meta = meta if isinstance(meta, Mapping) else {}
            uses.append(ApiUse(api.api_version, str(obj.get("kind")), str(meta.get("name", "?")), where,
                               api.removed or "", api.replacement))
    return uses


def api_findings(uses: Sequence[ApiUse]) -> list[Finding]:
    return [finding("upgrade-api", f"{use.api_version} is not served from Kubernetes {use.removed_in} (planned); "
                                   f"write it as {use.replacement}", object=f"{use.kind} {use.name}",
                    file=use.where) for use in uses]

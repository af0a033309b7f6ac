"""Two changes to a stack's queues that only the base of a change shows. A queued team's claim template changed under
its own name: gpu-dra replaces the ResourceClaimTemplate (a spec is
immutable), and Kueue charges a workload from the template as it was when the workload was queued, so a larger
template recreated under the same name undercharges the queue (facts/kueue.RECREATED_TEMPLATE). No resource carries
what a template was: `gpu-dra check --base REF` compares the team files with REF's and writes the changed templates
of the stack's queued teams to the pack config as `replacedTemplates`. And the classes Kueue's configuration maps
(`mappingChange`: added, removed). Without a base both rules stay silent.

Two more read what the stack's resources do not say: kueue-devices-exist (the queued templates with selectors, as
`queuedTemplates`) and kueue-workloads-admissible (the teams' named workloads Kueue would never admit, as
`queuedWorkloads`)."""

from __future__ import annotations

from gpu_dra.core.analysis.provisioning import launched_nodes
from gpu_dra.core.facts import kueue
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.platform import group_scaling
from gpu_dra.core.policy.resources import Context, Resource, error, node_groups
from gpu_dra.core.policy.selectors import explain_on_fleet

REPLACED = "kueue-template-replaced"
MAPPINGS = "kueue-mappings-changed"
DEVICES = "kueue-devices-exist"
WORKLOADS = "kueue-workloads-admissible"


def kueue_template_replaced(resources: list[Resource], context: Context) -> list[Finding]:
    out = []
    for changed in context.replaced_templates:
        team, template = str(changed.get("team")), str(changed.get("template"))
        found = error(REPLACED, f"team {team}'s template {template} changes under the same name, and the team queues "
                                f"in Kueue: {kueue.RECREATED_TEMPLATE}", None,
                      fix=f"give the changed template a new name (and point the team's workloads at it), or keep "
                          f"{template} as it was")
        line = changed.get("line")  # a float once the pack config has been a protobuf Struct, as in the engine
        out.append(found.at(file=str(changed.get("teamFile") or ""), line=int(line) if line else None))
    return out


def kueue_mappings_changed(resources: list[Resource], context: Context) -> list[Finding]:
    """The classes Kueue's configuration maps change with the change: the chart rolls the controller, which reads
    its configuration once at start (kubernetes-sigs/kueue#13727), and workloads it found inadmissible before stay so
    (facts/kueue.STUCK_INADMISSIBLE)."""
    change = context.mapping_change
    if not change:
        return []
    added, removed = [str(c) for c in change.get("added") or []], [str(c) for c in change.get("removed") or []]
    words = "; ".join(part for part in (f"maps {', '.join(added)} now" if added else "",
                                        f"no longer maps {', '.join(removed)}" if removed else "") if part)
    return [error(MAPPINGS, f"Kueue's device class mappings change ({words}): `pulumi up` restarts the Kueue "
                            f"controller (the chart's config-checksum), and {kueue.STUCK_INADMISSIBLE}", None,
                  fix="after the up, recreate the team workloads Kueue marked inadmissible for an unmapped class")]


def kueue_devices_exist(resources: list[Resource], context: Context) -> list[Finding]:
    """A queued team's template with selectors whose devices are only on nodes not running (a Karpenter or Auto Mode
    NodePool's, not launched yet; a node group at desired size 0): Kueue holds its workloads until matching devices
    exist, and a held pod makes nothing launch a node (facts/kueue.DEVICES_MUST_EXIST)."""
    queued = set(context.queued_templates)
    if not queued:
        return []
    reports, out = explain_on_fleet(DEVICES, resources, context)
    groups, _ = node_groups(resources)
    running = {g.name for g in groups if isinstance(desired := group_scaling(g.resource)[0], int | float)
               and desired >= 1}
    for claim, report, resource in reports:
        if claim not in queued or not report.allocatable:
            continue
        launched = set(launched_nodes(context.launched_pools, report.nodes))
        if any(n not in launched and n.rsplit("-", 1)[0] in running for n in report.nodes):
            continue
        where = sorted({n.rsplit("-", 1)[0] for n in report.nodes})
        out.append(error(DEVICES, f"claim template {claim} is queued in Kueue and its devices are only on nodes not "
                                  f"running ({', '.join(where)}: NodePools not launched, or node groups at desired "
                                  f"size 0): {kueue.DEVICES_MUST_EXIST}", resource,
                         fix="keep its workloads off the queue (no kueue.x-k8s.io/queue-name label) until such a "
                             "node runs, or give the group a desired size of 1 or more"))
    return out


def kueue_workloads_admissible(resources: list[Resource], context: Context) -> list[Finding]:
    """A workload a team names (its file's `workloads:`) that carries the queue label and that Kueue would never
    admit from the team's queue (analysis/queued_workloads.py): it would wait at the admission gate, or suspended,
    for ever, and nothing else says why."""
    out = []
    for held in context.queued_workloads:
        problems = "; ".join(str(p) for p in held.get("problems") or [])
        found = error(WORKLOADS, f"{held.get('workload')} (team {held.get('team')}) queues in LocalQueue "
                                 f"{held.get('queue')!s} and Kueue would never admit it: {problems}", None,
                      fix="fix the workload or the team's queue as said, or take the kueue.x-k8s.io/queue-name "
                          "label off")
        line = held.get("line")
        out.append(found.at(file=str(held.get("file") or ""), line=int(line) if line else None))
    return out

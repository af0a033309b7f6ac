"""Whether Kueue ever admits a team's GPU workload from the team's queue, judged as Kueue 0.19.2 charges it
(facts/kueue.py): the workloads that carry the queue label (kueue.x-k8s.io/queue-name), each charged per pod the
devices of its claim templates (per class, through the class's mapping) and its DRA-backed extended resources
(through the mapping of the class the scheduler allocates them from, else under their own name), times the pods
Kueue admits together. What it finds would leave the workload waiting for ever: a queue that does not exist, a
resource the team's ClusterQueue does not cover, a request Kueue's DRA integration refuses, more than the queue can
ever hold, a priority class the stack does not declare."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.analysis.migrate import Workload
from gpu_dra.core.analysis.migrate.stack_view import gate_off_reason, mappings, mappings_effective
from gpu_dra.core.config.models import Stack, Team
from gpu_dra.core.config.queue_rules import mapped_classes, per_pod, queue_capacity, queued_teams
from gpu_dra.core.dra.claims import device_quota_name
from gpu_dra.core.facts import kueue
from gpu_dra.core.render.kueue import LOCAL_QUEUE

# Where each kind Kueue manages carries its queue label, and whether its pods are admitted together (one Workload for
# the Job's parallel pods, a StatefulSet's replicas as one pod group) or each on its own (a Deployment's pods):
# kueue@v0.19.2:site/content/en/docs/tasks/run/{jobs,deployment,statefulset,plain_pods}.md; a CronJob's Jobs carry
# its jobTemplate's labels. DaemonSets and ReplicaSets are no integration of the chart's default configuration.
_LABELS_AT: dict[str, tuple[str, ...]] = {
    "Pod": ("metadata",), "Job": ("metadata",), "Deployment": ("metadata",), "StatefulSet": ("metadata",),
    "CronJob": ("spec", "jobTemplate", "metadata"),
}
_EACH_POD_ALONE = ("Pod", "Deployment")


@dataclass(frozen=True)
class Charge:
    """What Kueue charges a workload under one of its resource names, for all the pods it admits together."""

    resource: str  # a device class mapping's name, or an extended resource's own
    device_class: str | None  # the class behind it; None for an extended resource no mapped class serves
    devices: int


@dataclass(frozen=True)
class QueuedWorkload:
    workload: Workload
    team: Team
    queue: str  # the label's value
    pods: int  # admitted together
    charges: tuple[Charge, ...]
    problems: tuple[str, ...]  # why Kueue never admits it; empty when it may


def kueue_labels(workload: Workload) -> Mapping[str, Any]:
    """The labels Kueue reads of the workload (the queue's and the priority class's)."""
    node: Any = workload.obj
    for key in _LABELS_AT.get(workload.kind, ()):
        node = node.get(key) if isinstance(node, Mapping) else None
    labels = node.get("labels") if isinstance(node, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def judge(stack: Stack, team: Team, workload: Workload) -> QueuedWorkload | None:
    """The workload as the team's queue sees it on the stack; None when Kueue does not queue it (no Kueue on the
    stack, no queue label, a kind Kueue does not manage, no pods)."""
    config = stack.config
    labels = kueue_labels(workload)
    queue = str(labels[kueue.QUEUE_NAME_LABEL]) if labels.get(kueue.QUEUE_NAME_LABEL) is not None else None
    if config.kueue is None or queue is None or workload.kind not in _LABELS_AT or not workload.replicas:
        return None
    pods = 1 if workload.kind in _EACH_POD_ALONE else workload.replicas
    where = f"namespace {team.namespace_name}"
    if queue != LOCAL_QUEUE or team.queue is None:
        reason = (f"gpu-dra renders the team's LocalQueue as {LOCAL_QUEUE!r}" if team.queue is not None else
                  f"team {team.name} has no queue on this stack (no queue: in its file or gpu-dra:teams)")
        return QueuedWorkload(workload, team, queue, pods, (), (
            f"no LocalQueue {queue!r} in {where} ({reason}): Kueue holds the workload until one exists",))
    mapped = set(mapped_classes(config, stack.teams))
    problems: list[str] = []
    priority = labels.get(kueue.PRIORITY_CLASS_LABEL)
    if priority is not None and str(priority) not in config.kueue.priorities:
        known = ", ".join(sorted(config.kueue.priorities)) or "none"
        problems.append(f"its label {kueue.PRIORITY_CLASS_LABEL}: {priority} names no WorkloadPriorityClass (the "
                        f"stack's gpu-dra:kueue.priorities: {known}): Kueue makes no Workload for it")
    per_pod_charges: dict[tuple[str, str | None], int] = {}

    def charge(resource: str, device_class: str | None, count: int) -> None:
        per_pod_charges[(resource, device_class)] = per_pod_charges.get((resource, device_class), 0) + count

    templates = {t.name: t for t in team.claim_templates}
    for claim in workload.claims:
        name = claim.get("resourceClaimTemplateName")
        if claim.get("resourceClaimName"):
            problems.append(f"pod claim {claim.get('name')} names a ResourceClaim; Kueue's DRA integration charges "
                            "only claims made from a template (\"KueueDRAIntegration feature does not support use "
                            "of resource claims\"): use a claim template")
        template = templates.get(str(name)) if name else None
        # A template the team's file does not declare is not judged. The loader has refused a queued team's
        # templates that Kueue would (what its DRA integration refuses, a class the queue does not map:
        # config/queue_rules.py), so each of the team's is charged per class.
        for device_class, count in (per_pod(template) if template is not None else {}).items():
            charge(device_quota_name(device_class), device_class, count)
    served = mappings(stack) if mappings_effective(stack) else {}
    for resource, count in workload.per_pod().items():
        mapping = served.get(resource)
        if mapping is not None and mapping.device_class in mapped:
            charge(device_quota_name(mapping.device_class), mapping.device_class, count)
        else:
            charge(resource, None, count)
    covered = {device_quota_name(c): c for c in team.queue.nominal_quota}
    capacity = queue_capacity(config, team, queued_teams(config, stack.teams))
    charges = tuple(Charge(resource, device_class, count * pods)
                    for (resource, device_class), count in sorted(per_pod_charges.items()))
    for item in charges:
        if item.resource not in covered:
            problems.append(_uncovered(stack, team, item))
        elif item.device_class is not None and item.devices > capacity[item.device_class]:
            problems.append(f"charged {item.devices} {item.device_class} device(s) for its {pods} pod(s) admitted "
                            f"together, more than the team's queue can ever hold ({capacity[item.device_class]}: "
                            "nominal quota and what it may borrow)")
    return QueuedWorkload(workload, team, queue, pods, charges, tuple(problems))


def _uncovered(stack: Stack, team: Team, item: Charge) -> str:
    blocked = (f"Kueue blocks it (\"resource {item.resource} unavailable in ClusterQueue\"): the team's queue "
               f"covers {', '.join(sorted(team.queue.nominal_quota)) if team.queue else 'nothing'}")
    if item.device_class is not None:
        return f"charged {item.devices} {item.device_class} device(s), a class the team's queue has no nominalQuota "\
               f"of; {blocked}; add it to queue.nominalQuota (0 to borrow only)"
    served = mappings(stack).get(item.resource)
    config = stack.config
    if served is None:
        why = "no DeviceClass maps it on this stack"
    elif not mappings_effective(stack):
        why = f"{served.device_class} maps it, but {gate_off_reason(config.target)}"
    else:
        why = f"{served.device_class} serves it, and no queue on the stack rations that class"
    return (f"requests {item.resource}, which Kueue charges under its own name ({why}); {blocked}; request the "
            "devices through one of the team's claim templates (`gpu-dra migrate` suggests one)")


def judge_all(stack: Stack, named: Sequence[tuple[str, Workload]]) -> list[QueuedWorkload]:
    """The queued workloads of (team name, workload) pairs, in their order; a workload in a namespace other than its
    team's is judged in the queue of the team whose namespace it is, if the stack hosts one."""
    by_team = {team.name: team for team in stack.teams}
    by_namespace = {team.namespace_name: team for team in stack.teams}
    out = []
    for team_name, workload in named:
        namespace = (workload.obj.get("metadata") or {}).get("namespace")
        team = by_namespace.get(str(namespace)) if namespace else by_team.get(team_name)
        judged = judge(stack, team, workload) if team is not None else None
        if judged is not None:
            out.append(judged)
    return out

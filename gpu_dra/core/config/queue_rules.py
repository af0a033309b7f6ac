"""What a stack's Kueue queues must hold to admit its teams' claims, checked before Kueue refuses them at run time:
each class a queued team's templates use is in its queue (else Kueue blocks the workload: the class is unmapped or not
covered), no template uses what Kueue's DRA integration refuses, each template's devices fit what the queue can ever
hold, the hard ResourceQuota does not cap a class below the queue's nominal quota (Kueue would admit pods whose claims
the API server then refuses), the mappings stay within Kueue's limits (facts/kueue.py), and the cluster serves DRA."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_dra.core.config.models import AllocationCount, ClaimTemplate, StackConfig, Team
from gpu_dra.core.dra import metadata
from gpu_dra.core.dra.claims import device_quota_name
from gpu_dra.core.facts import kueue, nvidia
from gpu_dra.core.yamlsource import Loc


@dataclass(frozen=True)
class QueueProblem:
    team: str | None  # None: the stack's gpu-dra:kueue
    loc: Loc  # in the team's file (or the stack's gpu-dra:kueue)
    message: str


def queued_teams(config: StackConfig, teams: Sequence[Team]) -> list[Team]:
    """The teams whose queue the stack renders: those with a queue, where the stack runs Kueue."""
    return [team for team in teams if team.queue is not None] if config.kueue is not None else []


def mapped_classes(config: StackConfig, teams: Sequence[Team]) -> list[str]:
    """The DeviceClasses Kueue's configuration maps, one mapping each: every class a queued team has quota of."""
    return sorted({name for team in queued_teams(config, teams) if team.queue is not None
                   for name in team.queue.nominal_quota})


def cohort_of(config: StackConfig, team: Team) -> str:
    assert config.kueue is not None and team.queue is not None
    return team.queue.cohort or config.kueue.cohort


def per_pod(template: ClaimTemplate) -> dict[str, int]:
    """What Kueue charges a pod using the template: per class, the sum of its requests' counts (default 1)."""
    charged: dict[str, int] = {}
    for request in template.requests:
        if request.device_class is not None:
            charged[request.device_class] = charged.get(request.device_class, 0) + (request.count or 1)
    return charged


def _refused_features(template: ClaimTemplate) -> list[str]:
    found = []
    for request in template.requests:
        if request.first_available:
            found.append("firstAvailable")
        elif request.allocation_mode is AllocationCount.All:
            found.append("allocation mode All")
        if request.admin_access:
            found.append("adminAccess")
    return found


def queue_problems(config: StackConfig, teams: Sequence[Team]) -> list[QueueProblem]:
    queued = queued_teams(config, teams)
    problems: list[QueueProblem] = []
    classes = mapped_classes(config, teams)
    declared = {c.name for c in config.device_classes} | (set(nvidia.CHART_DEVICE_CLASSES)
                                                         if config.installs_driver_chart else set())
    if not config.target.enabled("DynamicResourceAllocation"):
        problems.append(QueueProblem(None, (), "the cluster's DynamicResourceAllocation gate is off (gpu-dra:cluster."
                                              "featureGates): its API server serves no resource.k8s.io objects, so "
                                              "Kueue has no claim to charge to a queue; turn the gate on, or leave "
                                              "Kueue out of this stack"))
    if len(classes) > kueue.MAX_MAPPINGS:
        problems.append(QueueProblem(None, (), f"the teams' queues ration {len(classes)} DeviceClasses; Kueue "
                                              f"{config.kueue.version if config.kueue else ''} maps at most "
                                              f"{kueue.MAX_MAPPINGS} (one mapping per class)"))
    for team in queued:
        assert team.queue is not None
        for name in team.queue.nominal_quota:
            if name not in declared:
                problems.append(QueueProblem(team.name, ("queue", "nominalQuota", name),
                                             f"no DeviceClass {name} on this stack (gpu-dra:deviceClasses"
                                             f"{'' if not config.installs_driver_chart else ', or the DRA chart'})"))
            elif metadata.qualified_name_problem(device_quota_name(name)):
                problems.append(QueueProblem(team.name, ("queue", "nominalQuota", name),
                                             f"{device_quota_name(name)} is too long for a Kueue resource name (a "
                                             "label key): name the DeviceClass shorter"))
        capacity = queue_capacity(config, team, queued)
        for index, template in enumerate(team.claim_templates):
            where = ("claimTemplates", index)
            refused = _refused_features(template)
            if refused:
                problems.append(QueueProblem(team.name, where, f"template {template.name} uses {', '.join(refused)}, "
                                                               "which Kueue's DRA integration refuses: its workloads "
                                                               "would never be admitted from the team's queue"))
                continue
            for device_class, count in per_pod(template).items():
                if device_class not in team.queue.nominal_quota:
                    problems.append(QueueProblem(team.name, where, f"template {template.name} uses DeviceClass "
                                                                   f"{device_class}, which the team's queue has no "
                                                                   "nominalQuota of: Kueue blocks its workloads; add "
                                                                   f"it to queue.nominalQuota (0 to borrow only)"))
                elif count > capacity[device_class]:
                    problems.append(QueueProblem(team.name, where, f"a pod of template {template.name} is charged "
                                                                   f"{count} {device_class} device(s), more than the "
                                                                   f"queue can ever hold ({capacity[device_class]}: "
                                                                   "nominal quota and what it may borrow): never "
                                                                   "admitted"))
        for device_class, hard in team.quota.devices.items():
            most = capacity.get(device_class)
            if most is not None and hard < most:
                problems.append(QueueProblem(team.name, ("quota", "devices", device_class),
                                             f"the hard quota caps {device_class} at {hard}, below what the queue can "
                                             f"hold ({most}: nominal quota and what it may borrow): a pod's claims are "
                                             "made when the pod is created, queued or not, so the hard quota refuses "
                                             "them before the queue's share is used; raise it to at least the "
                                             "queue's"))
    return problems


def queue_capacity(config: StackConfig, team: Team, queued: Sequence[Team]) -> dict[str, int]:
    """Per class, the most the team's queue can hold at once: its nominal quota, and what it may borrow from the
    other queues of its cohort (their nominal quota less what they keep: each lends at most its lendingLimit),
    capped by its borrowingLimit (kueue@v0.19.2:site/content/en/docs/concepts/cluster_queue.md:233-242)."""
    assert team.queue is not None
    cohort = cohort_of(config, team)
    capacity = {}
    for device_class, nominal in team.queue.nominal_quota.items():
        lendable = sum(other.queue.lending_limit.get(device_class, other.queue.nominal_quota.get(device_class, 0))
                       for other in queued if other is not team and other.queue is not None
                       and cohort_of(config, other) == cohort)
        limit = team.queue.borrowing_limit.get(device_class)
        capacity[device_class] = nominal + (lendable if limit is None else min(limit, lendable))
    return capacity

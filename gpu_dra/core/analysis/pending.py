"""Why a live cluster's Pending pods are Pending: the scheduler's own last word, the allocator's reasons, and what
would make each pod schedulable.

On EKS the kube-scheduler's verbosity cannot be raised (control-plane logs go to CloudWatch at the default level:
aws/containers-roadmap#1530), so the per-device reasons it logs at V(5)-V(7) are out of reach; the answer is
computed from the cluster's objects instead. The scheduler's last message comes from its `FailedScheduling` Events
and the pod's `PodScheduled` condition (kubernetes pkg/scheduler/schedule_one.go handleSchedulingFailure records
both). The allocator's verdict is pods.explain_pods on the nodes the pod may use; the hints come from the same
verdict with one obstacle taken away at a time: the node constraints (nodeSelector, affinity, taints), then the
devices other claims hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.inventory import Inventory
from gpu_dra.core.analysis.pods import ClusterNode, PodReport, PodSpec, explain_pods, pods_from_objects
from gpu_dra.core.data import mapping
from gpu_dra.core.dra.claims import InUse, ResourceClaim
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.dra.scheduling import why_not_on
from gpu_dra.core.facts import kueue


@dataclass(frozen=True)
class SchedulerVerdict:
    """The scheduler's last word on a pod: its FailedScheduling message, how often it was said, and when."""

    message: str
    count: int = 1
    last: str = ""  # RFC 3339, as the API server writes times
    source: str = "event"  # "event" or "condition" (PodScheduled)

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "count": self.count, "last": self.last, "source": self.source}


@dataclass(frozen=True)
class QueueHold:
    """A Pending pod Kueue holds at its admission gate: the scheduler does not try it until Kueue admits its
    Workload. What the Workload says: its name, the pod's LocalQueue, and why its quota is not reserved."""

    workload: str  # namespace/name, "" where no Workload of the pod was read
    queue: str  # the LocalQueue the pod names
    reason: str  # the QuotaReserved condition's reason (Pending, Inadmissible, ...), or ""
    message: str
    cohort: str = ""  # whether its ClusterQueue's cohort could lend it the quota it lacks; "" where not judged

    def words(self) -> str:
        queue = f" in queue {self.queue}" if self.queue else ""
        if not self.workload:
            return (f"held by Kueue{queue} (scheduling gate {kueue.ADMISSION_GATE}); no Kueue Workload of it was read: "
                    "Kueue has not created one yet, or its Workloads could not be listed (see the notes)")
        why = f"quota not reserved ({self.reason}): {self.message}" if self.message else "not admitted yet"
        return f"held by Kueue{queue}: Workload {self.workload}: {why}"

    def as_dict(self) -> dict[str, str]:
        return {"workload": self.workload, "queue": self.queue, "reason": self.reason, "message": self.message,
                "cohort": self.cohort}


def queue_holds(objects: Iterable[Mapping[str, Any]]) -> dict[str, QueueHold]:
    """Per Pending pod (namespace/name) gated by Kueue, what its Workload says. A plain pod's Workload is owned by it
    (a controller ownerReference to the pod) and labelled with its UID (kueue@v0.19.2:pkg/controller/jobframework/
    reconciler.go:1606-1633); quota not reserved is its QuotaReserved=False condition, reason Pending or Inadmissible
    and Kueue's message (pkg/scheduler/flavorassigner/flavorassigner.go:228-245, workload_controller.go:431-494)."""
    objects = list(objects)
    workloads: dict[str, Mapping[str, Any]] = {}
    for obj in objects:
        if obj.get("kind") != "Workload":
            continue
        meta = mapping(obj.get("metadata"))
        owners = [mapping(o).get("uid") for o in meta.get("ownerReferences") or [] if mapping(o).get("kind") == "Pod"]
        for uid in [*owners, mapping(meta.get("labels")).get(kueue.JOB_UID_LABEL)]:
            if isinstance(uid, str) and uid:
                workloads[uid] = obj
    holds = {}
    for obj in objects:
        spec = mapping(obj.get("spec"))
        gates = [mapping(g).get("name") for g in spec.get("schedulingGates") or []]
        if obj.get("kind") != "Pod" or kueue.ADMISSION_GATE not in gates:
            continue
        meta = mapping(obj.get("metadata"))
        queue = str(mapping(meta.get("labels")).get(kueue.QUEUE_NAME_LABEL) or "")
        workload = workloads.get(str(meta.get("uid") or ""))
        if workload is None:
            holds[_name(obj)] = QueueHold("", queue, "", "")
            continue
        reserved = next((mapping(c) for c in mapping(workload.get("status")).get("conditions") or []
                         if mapping(c).get("type") == "QuotaReserved"), {})
        waiting = reserved if reserved.get("status") != "True" else {}  # reserved: admission checks remain
        queue = queue or str(mapping(workload.get("spec")).get("queueName") or "")
        message = str(waiting.get("message") or "").strip()
        short = _INSUFFICIENT.search(message) if waiting.get("reason") == "Pending" else None
        cohort = cohort_lending(objects, str(meta.get("namespace") or "default"), queue, *short.groups()) \
            if short else ""
        holds[_name(obj)] = QueueHold(_name(workload), queue, str(waiting.get("reason") or ""), message, cohort)
    return holds


# The flavor assigner's words for quota a workload lacks (kueue@v0.19.2:pkg/scheduler/flavorassigner/
# flavorassigner.go:1368).
_INSUFFICIENT = re.compile(r"insufficient unused quota for (\S+) in flavor (\S+), ")


def cohort_lending(objects: Sequence[Mapping[str, Any]], namespace: str, local_queue: str, resource: str,
                   flavor: str) -> str:
    """Whether the cohort of the LocalQueue's ClusterQueue could lend it `resource` in `flavor` now, by the
    ClusterQueues' spec and reservations: each other queue of the cohort lends what it does not use of its nominal
    quota, at most its lendingLimit; what any queue borrows already is taken from that; the queue borrows at most its
    borrowingLimit (kueue@v0.19.2:site/content/en/docs/concepts/cluster_queue.md:233-242). Flat cohorts only
    (hierarchical Cohort objects are not read); "" where the queues were not read."""
    locals_ = {(_name(o)): o for o in objects if o.get("kind") == "LocalQueue"}
    queues = {str(mapping(o.get("metadata")).get("name")): o for o in objects if o.get("kind") == "ClusterQueue"}
    local = locals_.get(f"{namespace}/{local_queue}")
    name = str(mapping(mapping(local).get("spec")).get("clusterQueue") or "")
    if name not in queues:
        return ""
    cohort = str(mapping(queues[name].get("spec")).get("cohortName") or "")
    if not cohort:
        return f"ClusterQueue {name} is in no cohort: it has no quota to borrow"
    members = {n: _quota(q, resource, flavor) for n, q in queues.items()
               if mapping(q.get("spec")).get("cohortName") == cohort}
    lent = sum((min(max(Decimal(0), nominal - (total - borrowed)), lending if lending is not None else nominal)
                for n, (nominal, lending, _, total, borrowed) in members.items() if n != name), Decimal(0))
    free = max(Decimal(0), lent - sum((borrowed for *_, borrowed in members.values()), Decimal(0)))
    _, _, limit, _, own_borrowed = members[name]
    room = free if limit is None else min(free, max(Decimal(0), limit - own_borrowed))
    capped = f", within its borrowingLimit ({_shown(limit)})" if limit is not None and room < free else ""
    if room > 0:
        return f"cohort {cohort} could lend ClusterQueue {name} {_shown(room)} {resource} now{capped}"
    why = f"ClusterQueue {name} borrows its borrowingLimit ({_shown(limit)}) already" if capped else \
        "the other queues use or keep the rest of their quota"
    return f"cohort {cohort} has no {resource} to lend ClusterQueue {name} now: {why}"


def _quota(queue: Mapping[str, Any], resource: str,
           flavor: str) -> tuple[Decimal, Decimal | None, Decimal | None, Decimal, Decimal]:
    """(nominal, lendingLimit, borrowingLimit, reserved in all, reserved beyond nominal) of a ClusterQueue."""
    spec, status = mapping(queue.get("spec")), mapping(queue.get("status"))
    nominal, lending, limit = Decimal(0), None, None
    for group in spec.get("resourceGroups") or []:
        for entry in mapping(group).get("flavors") or []:
            if mapping(entry).get("name") != flavor:
                continue
            for quota in mapping(entry).get("resources") or []:
                if mapping(quota).get("name") == resource:
                    nominal = _amount(mapping(quota).get("nominalQuota")) or Decimal(0)
                    lending, limit = _amount(mapping(quota).get("lendingLimit")), _amount(
                        mapping(quota).get("borrowingLimit"))
    total = borrowed = Decimal(0)
    for entry in status.get("flavorsReservation") or []:
        if mapping(entry).get("name") == flavor:
            for used in mapping(entry).get("resources") or []:
                if mapping(used).get("name") == resource:
                    total = _amount(mapping(used).get("total")) or Decimal(0)
                    borrowed = _amount(mapping(used).get("borrowed")) or Decimal(0)
    return nominal, lending, limit, total, borrowed


def _amount(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return parse_quantity(str(value))
    except QuantityError:
        return None


def _shown(value: Decimal | None) -> str:
    return f"{value.normalize():f}" if value is not None else ""


def queue_hint(report: PodReport, hold: QueueHold) -> str:
    """What lets a pod Kueue holds run: for an inadmissible Workload, its cause fixed and the pod recreated; else
    quota in its queue; and then devices for its claims."""
    then = (f"then its claims are allocatable on {report.node}" if report.allocatable else
            f"even then its claims are not allocatable: {report.reason}")
    if hold.reason == "Inadmissible":
        return f"Kueue will not admit it as it is: fix what its message says, then {kueue.STUCK_INADMISSIBLE}; {then}"
    cohort = f" ({hold.cohort})" if hold.cohort else ""
    return ("Kueue admits it once its queue has the quota: devices freed in the team's queue, more lent by its "
            f"cohort{cohort}, or a larger queue.nominalQuota in the team file; {then}")


def _name(obj: Mapping[str, Any]) -> str:
    meta = mapping(obj.get("metadata"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '?')}"


def pending_pods(objects: Iterable[Mapping[str, Any]]) -> list[PodSpec]:
    """Pods the scheduler has not placed (phase Pending, no nodeName) that name resource claims, by name."""
    waiting = [o for o in objects if o.get("kind") == "Pod" and mapping(o.get("status")).get("phase") == "Pending"
               and not mapping(o.get("spec")).get("nodeName")]
    return sorted(pods_from_objects(waiting), key=lambda pod: pod.name)


def scheduler_verdicts(objects: Iterable[Mapping[str, Any]]) -> dict[str, SchedulerVerdict]:
    """Per pod (namespace/name) the newest FailedScheduling Event, else its PodScheduled=False condition. An Event
    series counts in `series.count` (events.k8s.io) or `count` (core/v1, deprecated but still set)."""
    verdicts: dict[str, tuple[str, SchedulerVerdict]] = {}
    for obj in objects:
        if obj.get("kind") == "Event" and obj.get("reason") == "FailedScheduling":
            involved = mapping(obj.get("involvedObject"))
            if involved.get("kind") != "Pod":
                continue
            pod = f"{involved.get('namespace') or 'default'}/{involved.get('name', '?')}"
            series = mapping(obj.get("series"))
            last = str(series.get("lastObservedTime") or obj.get("lastTimestamp") or obj.get("eventTime")
                       or mapping(obj.get("metadata")).get("creationTimestamp") or "")
            count = series.get("count") or obj.get("count") or 1
            verdict = SchedulerVerdict(str(obj.get("message") or "").strip(),
                                       count if isinstance(count, int) else 1, last)
            if pod not in verdicts or last >= verdicts[pod][0]:  # RFC 3339 in UTC sorts as text
                verdicts[pod] = (last, verdict)
    out = {pod: verdict for pod, (_, verdict) in verdicts.items()}
    for obj in objects:
        if obj.get("kind") != "Pod" or _name(obj) in out:
            continue
        conditions = mapping(obj.get("status")).get("conditions")
        for condition in conditions if isinstance(conditions, list) else []:
            condition = mapping(condition)
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                message = str(condition.get("message") or condition.get("reason") or "").strip()
                out[_name(obj)] = SchedulerVerdict(message, 1, str(condition.get("lastTransitionTime") or ""),
                                                   "condition")
    return out


def holders(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per ResourceClaim (namespace/name) the pods it is reserved for (status.reservedFor), who holds its devices."""
    out = {}
    for obj in objects:
        if obj.get("kind") != "ResourceClaim":
            continue
        namespace = mapping(obj.get("metadata")).get("namespace") or "default"
        reserved = mapping(obj.get("status")).get("reservedFor")
        pods = [f"{namespace}/{mapping(r).get('name')}" for r in reserved if mapping(r).get("resource") == "pods"] \
            if isinstance(reserved, list) else []
        if pods:
            out[_name(obj)] = pods
    return out


def named_holders(in_use: Mapping[Any, str], reserved: Mapping[str, Sequence[str]]) -> InUse:
    """`in_use` with each holding claim followed by its pods, as the reasons then show it."""
    def label(claim: str) -> str:
        pods = reserved.get(claim)
        if not pods:
            return claim
        more = f" and {len(pods) - 2} more" if len(pods) > 2 else ""
        return f"{claim} (pod {', '.join(pods[:2])}{more})"

    return InUse({device: label(claim) for device, claim in in_use.items()},
                 in_use.shares if isinstance(in_use, InUse) else None)


def untainted(nodes: Sequence[ClusterNode]) -> list[ClusterNode]:
    """The nodes without their taints: where a pod's claims would fit if it could use every node."""
    return [ClusterNode(n.node) for n in nodes]


def hints(pod: PodSpec, report: PodReport, claims: Sequence[ResourceClaim], inventory: Inventory,
          explainer: Explainer, in_use: Mapping[Any, str], nodes: Sequence[ClusterNode],
          free: Sequence[ClusterNode] | None = None) -> list[str]:
    """What would make an unallocatable pod allocatable, found by lifting one obstacle at a time; for a pod the
    allocator would place, why the scheduler may still not have (a filter gpu-dra does not model). `free`: the
    nodes untainted, made once for every pod hinted at."""
    if report.allocatable:
        return [f"its claims are allocatable on {report.node} now: the cluster changed since the scheduler's last "
                "attempt (it retries), or a filter gpu-dra does not model (CPU, memory, pod affinity, topology "
                "spread, volumes) rejects the nodes: see the scheduler's message"]
    if report.errors and not report.claims:
        return []
    if any(c.report is not None and c.report.errors for c in report.claims) or any(
            e.rule == "pod-claim-missing" for e in report.errors):
        return []  # a claim or class is missing or broken: the reason says what to fix
    found = []
    free = untainted(nodes) if free is None else free
    anywhere = replace(pod, spec={k: v for k, v in pod.spec.items()
                                  if k not in ("nodeSelector", "affinity", "tolerations", "nodeName")})
    if nodes:
        (elsewhere,) = explain_pods([anywhere], claims, inventory, explainer, in_use, free)
        blocked = {n.node.name: n for n in nodes}
        usable = [name for name in elsewhere.nodes
                  if name in blocked and why_not_on(pod.spec, blocked[name].node.labels, blocked[name].taints)]
        for name in usable[:3]:
            node = blocked[name]
            why = why_not_on(pod.spec, node.node.labels, node.taints)
            found.append(f"its claims fit on {name}, but {why}")
        if len(usable) > 3:
            found.append(f"... and on {len(usable) - 3} more node(s) it may not use")
    (unheld,) = explain_pods([pod], claims, inventory, explainer, {}, nodes or None)
    if unheld.allocatable and in_use:
        picked = {(d.driver, d.pool, d.device) for c in unheld.claims if c.allocation for d in c.allocation.devices}
        held = sorted({in_use[device] for device in picked if device in in_use})
        if held:
            found.append(f"it would fit on {unheld.node} once these claims release their devices: "
                         f"{', '.join(held[:5])}" + (f" and {len(held) - 5} more" if len(held) > 5 else ""))
    if not found and not report.timed_out:  # a search stopped by the filter timeout decided nothing
        found.append("neither another node nor freed devices would help: no node has matching devices enough "
                     "(add capacity or change the request; the reasons above say what is missing)")
    return found

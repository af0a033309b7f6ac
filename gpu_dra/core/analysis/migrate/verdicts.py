"""What a plan says: where each workload's pods run today, its phase and why, its template and rewrite; the
device-plugin groups' GPUs; and what `--without` breaks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.analysis.migrate.rewriting import Rewrite
from gpu_dra.core.analysis.migrate.stack_view import ExtendedMapping
from gpu_dra.core.analysis.migrate.templates import TemplateChoice
from gpu_dra.core.analysis.migrate.workloads import Workload
from gpu_dra.core.analysis.placement import DevicePluginGroup
from gpu_dra.core.analysis.stack_nodes import GroupView
from gpu_dra.core.facts.target import Target

PHASES = (1, 2, 3)


@dataclass(frozen=True)
class Reason:
    """Why some pods have nowhere to run: in full (the placement's reason) and in short (the phase's words)."""

    long: str = ""
    short: str = ""


@dataclass
class Placement:
    """Where a workload's pods run today."""

    pods: int
    device_plugin: dict[str, int] = field(default_factory=dict)  # group -> pods placed there
    gpus: dict[str, int] = field(default_factory=dict)  # group -> GPUs they take
    mapped: int = 0  # pods served through an extendedResourceName mapping
    mapping: ExtendedMapping | None = None
    claims: int = 0  # pods whose claims allocate
    reason: str = ""  # why the rest have nowhere to run
    # The device-plugin groups its pods may use however full they are (their nodeSelector, affinity and tolerations
    # admit them, a pod's GPUs fit a node): the hardware it runs on, whatever the workloads before it took.
    usable: list[str] = field(default_factory=list)

    @property
    def placed(self) -> int:
        return sum(self.device_plugin.values()) + self.mapped + self.claims

    @property
    def pending(self) -> int:
        return self.pods - self.placed

    @property
    def where(self) -> str:
        ways = [w for w, n in (("device-plugin", sum(self.device_plugin.values())), ("mapping", self.mapped),
                               ("claims", self.claims)) if n]
        return "+".join(ways) or "nowhere"

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "pods": self.pods, "placed": self.placed, "pending": self.pending,
                "device_plugin": [{"group": g, "pods": n, "gpus": self.gpus.get(g, 0)}
                                  for g, n in self.device_plugin.items()],
                "mapping": None if self.mapping is None else {"resource": self.mapping.resource,
                                                              "device_class": self.mapping.device_class,
                                                              "origin": self.mapping.origin, "pods": self.mapped},
                "claims": self.claims, "reason": self.reason}


@dataclass
class GroupCapacity(DevicePluginGroup):
    """A device-plugin group of the stack, its GPUs taken by the workloads in input order."""

    view: GroupView

    @classmethod
    def of(cls, view: GroupView) -> GroupCapacity:
        """Its nodes at max size, all GPUs free; the pods' node selection judged on its first node, hostname
        included."""
        labels = {**view.labels, "kubernetes.io/hostname": f"{view.name}-0"}
        return cls(view.name, labels, view.taints, view.gpus, [view.gpus] * view.nodes, view.instance_type, view)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "instance_type": self.instance_type, "model": self.view.model,
                "nodes": self.view.nodes, "gpus_per_node": self.gpus, "gpus": self.total, "used": self.used}


@dataclass
class WorkloadVerdict:
    workload: Workload
    placement: Placement
    phase: int
    why: str
    templates: list[TemplateChoice] = field(default_factory=list)
    rewrite: Rewrite | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def stranded(self) -> bool:
        """Some pod has nowhere to run (a DaemonSet that no node admits has nowhere at all)."""
        return self.placement.pending > 0 or self.placement.pods == 0 and self.workload.replicas is None

    @property
    def gpus_short(self) -> int:
        """GPUs the pods with nowhere to run need (legacy requests only)."""
        return self.placement.pending * sum(self.workload.per_pod().values())

    def as_dict(self) -> dict[str, Any]:
        w = self.workload
        return {"workload": w.key, "kind": w.kind, "namespace": w.namespace, "name": w.name, "source": w.where,
                "pods": self.placement.pods, "per_pod": w.per_pod(), "on_claims": bool(w.claims),
                "containers": [{"name": c.name, "role": c.role, "gpus": {r: n for r, n in c.gpus.items() if n}}
                               for c in w.containers if any(c.gpus.values())],
                "placement": self.placement.as_dict(), "phase": self.phase, "why": self.why,
                "stranded": self.stranded, "gpus_short": self.gpus_short,
                "templates": [t.as_dict() for t in self.templates],
                "rewrite": None if self.rewrite is None else self.rewrite.as_dict(), "notes": self.notes}


@dataclass
class Plan:
    """Every GPU workload of the inputs on one stack (less the groups `without` names)."""

    stack: str
    target: Target
    effective: bool
    mappings: dict[str, ExtendedMapping]
    groups: list[GroupCapacity]
    verdicts: list[WorkloadVerdict]
    without: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def stranded(self) -> list[WorkloadVerdict]:
        return [v for v in self.verdicts if v.stranded]

    def phases(self) -> dict[int, int]:
        return {phase: sum(1 for v in self.verdicts if v.phase == phase) for phase in PHASES}

    def as_dict(self) -> dict[str, Any]:
        return {"stack": self.stack, "kubernetes": {"version": self.target.kubernetes_version,
                                                    "platform": self.target.platform},
                "without": list(self.without),
                "extended_resources": {"effective": self.effective, "mappings": [
                    {"resource": m.resource, "device_class": m.device_class, "origin": m.origin}
                    for m in self.mappings.values()]},
                "device_plugin_groups": [g.as_dict() for g in self.groups],
                "workloads": [v.as_dict() for v in self.verdicts],
                "phases": {str(k): n for k, n in self.phases().items()},
                "stranded": len(self.stranded), "gpus_short": sum(v.gpus_short for v in self.verdicts),
                "notes": self.notes}


@dataclass
class Breakage:
    """What `--without` breaks: the workloads that had a place and have none after, and the GPUs short per phase
    (the phase each stranded legacy workload is in today)."""

    before: Plan
    after: Plan

    @property
    def broken(self) -> list[tuple[WorkloadVerdict, WorkloadVerdict]]:
        return [(b, a) for b, a in zip(self.before.verdicts, self.after.verdicts, strict=True)
                if a.stranded and not b.stranded]

    def shortfall(self) -> dict[int, int]:
        short = dict.fromkeys(PHASES, 0)
        for before, after in zip(self.before.verdicts, self.after.verdicts, strict=True):
            short[before.phase] += after.gpus_short
        return short

    def as_dict(self) -> dict[str, Any]:
        return {"groups": list(self.after.without),
                "broken": [{"workload": b.workload.key, "kind": b.workload.kind, "phase": b.phase,
                            "gpus_short": a.gpus_short, "reason": a.placement.reason} for b, a in self.broken],
                "stranded": len(self.after.stranded),
                "shortfall": {str(k): n for k, n in self.shortfall().items()}}

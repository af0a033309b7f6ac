"""First-fit placement of device-plugin pods on node groups at max size: the one placement `gpu-dra migrate` and the
policy pack's legacy-workloads-placed rule both judge by (docs/migration.md, phase 1).

A pod asking for N whole GPUs through NVIDIA's device plugin needs them on one node (an extended resource is
counted per node: kubernetes/kubernetes@v1.35.0:pkg/scheduler/framework/plugins/noderesources/fit.go). The pods are
placed in order, node by node, on the groups their nodeSelector, node affinity and tolerations admit; each group's
free GPUs are kept across calls, so the workloads placed first take them first. The callers word the outcome.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gpu_dra.core.dra.scheduling import why_not_on


@dataclass
class DevicePluginGroup:
    """A device-plugin node group (or an existing cluster's pool) at max size, as placement sees it."""

    name: str
    labels: Mapping[str, str]  # its nodes' labels, as admission is judged on them
    taints: Sequence[Mapping[str, Any]]
    gpus: int  # per node
    free: list[int]  # free GPUs per node, taken by the pods placed
    instance_type: str

    @property
    def total(self) -> int:
        return self.gpus * len(self.free)

    @property
    def used(self) -> int:
        return self.total - sum(self.free)

    def node_names(self) -> list[str]:
        return [f"{self.name}-{n}" for n in range(len(self.free))]  # as inventory.synthesize names them


G = TypeVar("G", bound=DevicePluginGroup)


@dataclass(frozen=True)
class GroupOutcome(Generic[G]):
    """What one group did with the pods that reached it."""

    group: G
    refused: str  # why the pods may not use its nodes (nodeSelector, node affinity, taints); "" if they may
    too_small: bool  # a pod needs more GPUs than one of its nodes has
    taken: int  # GPUs the pods placed before these took
    placed: int  # pods placed on it
    full: bool  # it was tried and ran out of free GPUs for the pods it could have run


@dataclass(frozen=True)
class FirstFit(Generic[G]):
    left: int  # pods with nowhere to run
    outcomes: tuple[GroupOutcome[G], ...]  # the groups tried, in order, up to the one that took the last pod

    @property
    def placed(self) -> dict[str, int]:
        """Group name -> pods placed there (the groups that took some)."""
        return {o.group.name: o.placed for o in self.outcomes if o.placed}


def place(pods: int, gpus: int, spec: Mapping[str, Any], groups: Sequence[G],
          daemon_nodes: Collection[str] | None = None) -> FirstFit[G]:
    """Place `pods` pods of `gpus` GPUs each, first fit, node by node, on the groups `spec` (a pod spec: its
    nodeSelector, affinity and tolerations) admits, taking the groups' free GPUs. `daemon_nodes`: a DaemonSet's
    nodes, one pod on each, and only groups holding some of them are tried."""
    left, outcomes = pods, []
    for group in groups:
        indexes = [i for i, name in enumerate(group.node_names()) if daemon_nodes is None or name in daemon_nodes]
        if daemon_nodes is not None and not indexes:
            continue
        refused = why_not_on(spec, group.labels, group.taints) or ""
        too_small = gpus > group.gpus or not group.free
        taken, placed = group.used, 0
        if not refused and not too_small:
            for index in indexes:
                while left > placed and group.free[index] >= gpus:
                    group.free[index] -= gpus
                    placed += 1
                    if daemon_nodes is not None:
                        break
        asked = min(left, len(indexes)) if daemon_nodes is not None else left
        left -= placed
        outcomes.append(GroupOutcome(group, refused, too_small, taken, placed,
                                     full=not refused and not too_small and placed < asked))
        if not left:
            break
    return FirstFit(left, tuple(outcomes))

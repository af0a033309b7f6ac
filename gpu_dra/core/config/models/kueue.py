"""Queues for a stack's teams: Kueue, installed by the program (gpu-dra:kueue), and each team's queue (its file's
`queue:`): nominal quota per DeviceClass, borrowing and lending limits, a cohort. Beside or instead of the team's hard
ResourceQuota (docs/queues.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, raise_field_errors
from gpu_dra.core.config.models.fields import DnsLabel, devices_per_class
from gpu_dra.core.facts import kueue

KueueVersion = Literal[kueue.VERSIONS]  # type: ignore[valid-type]
WithinClusterQueue = Literal[kueue.WITHIN_CLUSTER_QUEUE]  # type: ignore[valid-type]
ReclaimWithinCohort = Literal[kueue.RECLAIM_WITHIN_COHORT]  # type: ignore[valid-type]
Priority = Annotated[int, Field(ge=kueue.PRIORITY_RANGE[0], le=kueue.PRIORITY_RANGE[1])]


class Kueue(Model):
    """Kueue on the cluster, with a ClusterQueue and a LocalQueue per team that declares a queue.

    Its chart in kueue-system, its configuration with a device class mapping per class the teams' queues ration, and a
    ResourceFlavor."""

    version: KueueVersion = Field(default=kueue.DEFAULT_VERSION,
                                  description="The Kueue release (its Helm chart's version); only those gpu-dra has "
                                              "read")
    cohort: DnsLabel = Field(default="gpu", description="The cohort the teams' ClusterQueues share, so that one "
                                                        "team borrows what another does not use (a team's queue may "
                                                        "name its own)")
    priorities: dict[DnsLabel, Priority] = Field(
        default_factory=dict, description="Kueue WorkloadPriorityClasses, name -> value: a workload names one with "
                                          f"the label {kueue.PRIORITY_CLASS_LABEL}; higher values are admitted "
                                          "first and, where a team's queue.preemption allows, preempt lower ones")


class Preemption(Model):
    """What the team's queue may preempt to admit a workload (Kueue's ClusterQueue spec.preemption).

    Each defaults to Never, as in Kueue."""

    within_cluster_queue: WithinClusterQueue = Field(
        default="Never", description="The team's own running workloads of lower priority (LowerPriority), or of "
                                     "equal priority and newer too (LowerOrNewerEqualPriority)")
    reclaim_within_cohort: ReclaimWithinCohort = Field(
        default="Never", description="Workloads of other teams borrowing this team's nominal quota: of lower "
                                     "priority (LowerPriority) or any (Any)")


class Queue(Model):
    """A team's Kueue queue: devices per class its workloads may hold at once, borrow and lend.

    Counted as Kueue counts them: per pod, the devices its claim templates request (`count`), each Deployment pod on
    its own."""

    nominal_quota: dict[str, int] = Field(min_length=1, description="Devices per DeviceClass, e.g. {gpu-l4: 4}")
    borrowing_limit: dict[str, int] = Field(
        default_factory=dict, description="Per class, at most this many more than nominal, borrowed from the cohort "
                                          "(a class left out: as many as the cohort has free)")
    lending_limit: dict[str, int] = Field(
        default_factory=dict, description="Per class, at most this many of its nominal lent to the cohort (a class "
                                          "left out: all of it)")
    cohort: DnsLabel | None = Field(default=None, description="Default: the stack's gpu-dra:kueue.cohort")
    preemption: Preemption | None = Field(default=None, description="Default: Kueue's, never preempt")

    @field_validator("nominal_quota", "borrowing_limit", "lending_limit")
    @classmethod
    def _per_class(cls, values: dict[str, int]) -> dict[str, int]:
        return devices_per_class(values)

    @model_validator(mode="after")
    def _limits(self) -> Queue:
        """Kueue's ClusterQueue webhook: a limit is for a class the queue has quota of, and lending at most the
        nominal quota (kueue@v0.19.2:pkg/webhooks/clusterqueue_webhook.go:382-389)."""
        found: list[tuple[str | tuple[str, ...], str]] = []
        for key, limits in (("borrowingLimit", self.borrowing_limit), ("lendingLimit", self.lending_limit)):
            for name in limits:
                if name not in self.nominal_quota:
                    found.append(((key, name), f"no nominalQuota for {name}: a limit is for a class the queue has "
                                               "quota of (nominalQuota may be 0)"))
        for name, lent in self.lending_limit.items():
            if name in self.nominal_quota and lent > self.nominal_quota[name]:
                found.append((("lendingLimit", name), f"must be less than or equal to the nominalQuota "
                                                      f"({self.nominal_quota[name]}), as Kueue requires"))
        raise_field_errors("Queue", found)
        return self

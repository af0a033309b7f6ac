"""Kueue's objects for a stack, as plain data: the chart's values (the controller's configuration with a device class
mapping per class the teams' queues ration), a ResourceFlavor, and per queued team a ClusterQueue covering its
classes in the stack's cohort and a LocalQueue in its namespace (facts/kueue.py for every rule they follow)."""

from __future__ import annotations

from typing import Any

import yaml

from gpu_dra.core.config.models import Stack, Team
from gpu_dra.core.config.queue_rules import cohort_of, mapped_classes
from gpu_dra.core.dra.claims import device_quota_name
from gpu_dra.core.facts import kueue

FLAVOR = "gpu-dra"  # one empty flavor: the quota is per DeviceClass, and the classes say which nodes serve them
LOCAL_QUEUE = "gpu"  # in each queued team's namespace: workloads carry kueue.x-k8s.io/queue-name: gpu


def configuration(stack: Stack) -> dict[str, Any]:
    """The controller's Configuration: the chart's default keys, and the teams' device class mappings with the
    resources left to the namespaces' own quota."""
    return {**kueue.DEFAULT_CONFIG, "resources": {
        "excludeResourcePrefixes": list(kueue.EXCLUDED_PREFIXES),
        "deviceClassMappings": [{"name": device_quota_name(c), "deviceClassNames": [c]}
                                for c in mapped_classes(stack.config, stack.teams)]}}


def chart_values(stack: Stack) -> dict[str, Any]:
    """The chart's values: the configuration as the one string the chart reads (the chart rolls the controller when
    it changes: facts/kueue.CONFIG_VALUES_KEY), and Kueue's DRA gates on by name (facts/kueue.DRA_GATES)."""
    section, key = kueue.CONFIG_VALUES_KEY
    return {section: {key: yaml.safe_dump(configuration(stack), sort_keys=False)},
            "controllerManager": {"featureGates": [{"name": gate, "enabled": True} for gate in kueue.DRA_GATES]}}


def resource_flavor() -> dict[str, Any]:
    return {"apiVersion": kueue.API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}, "spec": {}}


def cluster_queue(stack: Stack, team: Team) -> dict[str, Any]:
    """The team's ClusterQueue: its namespace only, its classes' quota in the shared flavor, in its cohort."""
    queue = team.queue
    assert queue is not None
    resources = []
    for device_class, nominal in sorted(queue.nominal_quota.items()):
        entry: dict[str, Any] = {"name": device_quota_name(device_class), "nominalQuota": nominal}
        if device_class in queue.borrowing_limit:
            entry["borrowingLimit"] = queue.borrowing_limit[device_class]
        if device_class in queue.lending_limit:
            entry["lendingLimit"] = queue.lending_limit[device_class]
        resources.append(entry)
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace_name}},
        "cohortName": cohort_of(stack.config, team),
        "resourceGroups": [{"coveredResources": [r["name"] for r in resources],
                            "flavors": [{"name": FLAVOR, "resources": resources}]}]}
    if queue.preemption is not None:
        spec["preemption"] = {"withinClusterQueue": queue.preemption.within_cluster_queue,
                              "reclaimWithinCohort": queue.preemption.reclaim_within_cohort}
    return {"apiVersion": kueue.API, "kind": "ClusterQueue", "metadata": {"name": team.name}, "spec": spec}


def local_queue(team: Team) -> dict[str, Any]:
    return {"apiVersion": kueue.API, "kind": "LocalQueue",
            "metadata": {"name": LOCAL_QUEUE, "namespace": team.namespace_name}, "spec": {"clusterQueue": team.name}}



def workload_priority_classes(stack: Stack) -> list[dict[str, Any]]:
    """The stack's priorities as Kueue's WorkloadPriorityClasses (cluster-scoped; a workload names one with the label
    facts/kueue.PRIORITY_CLASS_LABEL)."""
    assert stack.config.kueue is not None
    return [{"apiVersion": kueue.API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}
            for name, value in sorted(stack.config.kueue.priorities.items())]

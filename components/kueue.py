"""Kueue for the teams' queues (gpu-dra:kueue): its namespace and chart, then the ResourceFlavor, the
WorkloadPriorityClasses, a ClusterQueue per queued team and its LocalQueue in the team's namespace. Every value and
document comes from the core (gpu_dra.core.render.kueue); this module only declares resources. Names carry the
team's (or the priority's) name, never a position."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.objects import custom_resource
from gpu_dra.core.config.models import Stack
from gpu_dra.core.config.queue_rules import queued_teams
from gpu_dra.core.facts import kueue as facts
from gpu_dra.core.render import kueue as render


class Kueue(pulumi.ComponentResource):
    """The chart (its CRDs with it), then the queue objects, each team's LocalQueue after the team's namespace."""

    def __init__(self, stack: Stack, team_namespaces: Mapping[str, pulumi.Resource], opts: pulumi.ResourceOptions):
        if stack.config.kueue is None:
            raise ValueError("the stack declares no gpu-dra:kueue")
        super().__init__("gpu-dra:kueue:Kueue", "kueue", None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespace = k8s.core.v1.Namespace("kueue-namespace", metadata={"name": facts.NAMESPACE}, opts=child)
        chart = k8s.helm.v4.Chart(
            "kueue", chart=f"{facts.CHART_REPOSITORY}/{facts.CHART}", version=stack.config.kueue.version,
            namespace=facts.NAMESPACE, values=render.chart_values(stack),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[namespace])))
        after_chart = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[chart]))
        flavor = custom_resource("kueue-flavor", render.resource_flavor(), after_chart)
        for priority in render.workload_priority_classes(stack):
            custom_resource(f"kueue-priority-{priority['metadata']['name']}", priority, after_chart)
        for team in queued_teams(stack.config, stack.teams):
            queue = custom_resource(f"kueue-clusterqueue-{team.name}", render.cluster_queue(stack, team),
                                     pulumi.ResourceOptions.merge(after_chart, pulumi.ResourceOptions(
                                         depends_on=[flavor])))
            custom_resource(f"kueue-localqueue-{team.name}", render.local_queue(team),
                             pulumi.ResourceOptions.merge(after_chart, pulumi.ResourceOptions(
                                 depends_on=[queue, *_of(team_namespaces, team.name)])))
        self.register_outputs({})


def _of(resources: Mapping[str, pulumi.Resource], name: str) -> Sequence[pulumi.Resource]:
    return [resources[name]] if name in resources else []


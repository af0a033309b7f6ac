"""NVIDIA's DRA driver chart, and NVIDIA's device plugin chart while device-plugin node groups remain.

Rendered client-side by helm.v4.Chart, so every object of the charts is a resource that policies see in
`pulumi preview`. Values come from the core (`gpu_dra.core.render.charts`), derived from the stack's node groups.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpu_dra.core.config.models import StackConfig
from gpu_dra.core.facts import nvidia_driver
from gpu_dra.core.render import charts, names

# The plugins run privileged pods (device access); clusters that enforce Pod Security need this label.
PRIVILEGED_NAMESPACE = {"pod-security.kubernetes.io/enforce": "privileged", "app.kubernetes.io/managed-by": "gpu-dra"}


def drop_extended_resource_name(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    """The chart's rendered DeviceClasses without the field the cluster would drop (charts.py says why); a transform
    on the Chart reaches the objects it renders: "Transforms support modifying child resources of packaged components"
    (https://www.pulumi.com/docs/iac/concepts/options/transformations/)."""
    props = charts.without_extended_resource_name(args.type_, args.props)
    return None if props is None else pulumi.ResourceTransformResult(props=props, opts=args.opts)


class GpuDrivers(pulumi.ComponentResource):
    """The driver namespace, the DRA driver chart and, during migration, the device plugin chart."""

    def __init__(self, config: StackConfig, node_groups: list[pulumi.Resource], opts: pulumi.ResourceOptions):
        super().__init__("gpu-dra:driver:GpuDrivers", "nvidia", None, opts)
        settings = config.dra_driver
        namespace = k8s.core.v1.Namespace(
            "driver-namespace", metadata={"name": settings.namespace, "labels": PRIVILEGED_NAMESPACE},
            opts=pulumi.ResourceOptions(parent=self))
        # Waits for its namespace and the node groups its pods run on (controller: system; plugins: GPU groups).
        after = pulumi.ResourceOptions(parent=self, depends_on=[namespace, *node_groups])
        dra_chart = after
        if charts.drops_extended_resource_name(config):
            dra_chart = pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(
                transforms=[drop_extended_resource_name]))
        k8s.helm.v4.Chart(
            names.DRA_DRIVER_CHART, chart=nvidia_driver.chart_reference(settings.chart, settings.repository),
            version=settings.version, namespace=settings.namespace, values=charts.dra_chart_values(config),
            opts=dra_chart)
        if charts.device_plugin_needed(config):
            k8s.helm.v4.Chart(
                names.DEVICE_PLUGIN_CHART, chart=charts.DEVICE_PLUGIN_CHART, version=charts.DEVICE_PLUGIN_VERSION,
                repository_opts={"repo": charts.DEVICE_PLUGIN_REPOSITORY}, namespace=settings.namespace,
                values=charts.device_plugin_values(config), opts=after)
        self.register_outputs({})

"""NVIDIA's DRA driver chart, and NVIDIA's device plugin chart while device-plugin node groups remain.

Rendered client-side by helm.v4.Chart, so every object of the charts is a resource that policies see in
`pulumi preview`. Values come from the core (`gpu_dra.core.render.charts`), derived from the stack's node groups.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpu_dra.core.config import nvidia_driver
from gpu_dra.core.config.models import StackConfig
from gpu_dra.core.render import charts

# The plugins run privileged pods (device access); clusters that enforce Pod Security need this label.
PRIVILEGED_NAMESPACE = {"pod-security.kubernetes.io/enforce": "privileged", "app.kubernetes.io/managed-by": "gpu-dra"}


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
        k8s.helm.v4.Chart(
            "nvidia-dra-driver", chart=nvidia_driver.chart_reference(settings), version=settings.version,
            namespace=settings.namespace, values=charts.dra_chart_values(config), opts=after)
        if charts.device_plugin_needed(config):
            k8s.helm.v4.Chart(
                "nvidia-device-plugin", chart=charts.DEVICE_PLUGIN_CHART, version=charts.DEVICE_PLUGIN_VERSION,
                repository_opts={"repo": charts.DEVICE_PLUGIN_REPOSITORY}, namespace=settings.namespace,
                values=charts.device_plugin_values(config), opts=after)
        self.register_outputs({})

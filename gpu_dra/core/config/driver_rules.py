"""Where the DRA driver chart's values, as the stack derives them, cannot work on the stack's node groups.

NVIDIA's install guide sets them as Helm flags (`--set nvidiaDriverRoot=/run/nvidia/driver --set
resources.computeDomains.enabled=true`); in a stack they follow node-group keys (gpu_dra.core.facts.nvidia_driver.
DERIVED_VALUES), which these rules judge against what EKS's nodes are. Each rule yields (key, path under the key,
message) like the rules of gpu_dra.core.config.stack_rules, and reads only node groups (platform eks): an existing
cluster's node pools are the user's own nodes, with whatever driver install they have.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpu_dra.core.config.models import AllocationMode, DriverSource, StackConfig
from gpu_dra.core.facts.nvidia_driver import MULTI_NODE_NVLINK_FAMILIES, has_multi_node_nvlink
from gpu_dra.core.yamlsource import Loc

Problems = Iterator[tuple[str, Loc, str]]


def driver_root_fits_node_groups(config: StackConfig) -> Problems:
    """`driver: gpu-operator` (nvidiaDriverRoot /run/nvidia/driver) on an EKS node group: every AMI type a node group
    may have is an EKS NVIDIA AMI, which carries the driver on the host (driver root /; docs/sources.md#amis-and-
    device-plugins), so no GPU Operator driver container fills /run/nvidia/driver and the kubelet plugin finds no
    driver there."""
    for index, group in enumerate(config.node_groups):
        if group.driver is DriverSource.gpu_operator and group.allocation_mode is AllocationMode.dra:
            yield ("nodeGroups", (index, "driver"),
                   f"gpu-operator puts the driver root at /run/nvidia/driver, but {group.ami_type.value} is an EKS "
                   "NVIDIA AMI with the driver installed on the host (driver root /), where the GPU Operator "
                   "does not run its driver container: the DRA kubelet plugin would find no driver. Remove "
                   "`driver` (default host)")


def compute_domains_fit_node_groups(config: StackConfig) -> Problems:
    """`multiNodeNvlink` (resources.computeDomains.enabled) on a group none of whose instance types shares an NVLink
    domain with other instances: ComputeDomains need multi-node NVLink."""
    for index, group in enumerate(config.node_groups):
        if group.multi_node_nvlink and not any(has_multi_node_nvlink(t) for t in group.instance_types):
            yield ("nodeGroups", (index, "multiNodeNvlink"),
                   f"ComputeDomains need GPUs joined by NVLink across instances, which "
                   f"{', '.join(group.instance_types)} do not have (on EC2 only the "
                   f"{' and '.join(MULTI_NODE_NVLINK_FAMILIES)} UltraServer families do); remove multiNodeNvlink")


DRIVER_RULES = (driver_root_fits_node_groups, compute_domains_fit_node_groups)

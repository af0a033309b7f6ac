"""Rules on feature gates: Kubernetes DRA gates the target cluster runs, alpha features in production, and the
NVIDIA driver's own gates (the chart's version and gates come from the pack config: the Chart component carries
none of them in the engine, pulumi/pulumi-kubernetes@94977969d provider/pkg/provider/helm/v4/chart.go:158)."""

from __future__ import annotations

from collections.abc import Mapping

from gpu_dra.core.checks.manifest_lint import gates_off
from gpu_dra.core.dra.claims import ResourceClaim, gate_sites
from gpu_dra.core.facts import gates, nvidia_driver
from gpu_dra.core.facts.nvidia_driver import SharingStrategy
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, dra_object_of, environment_of, error
from gpu_dra.core.yamlsource import format_path


def dra_feature_gates(resource: Resource, context: Context) -> list[Finding]:
    obj, out = dra_object_of("dra-feature-gates", resource)
    for path, message in gates_off(obj, context.target, "the pack config's featureGates"):
        out.append(error("dra-feature-gates", message, resource, format_path(path)))
    return out


def driver_gate_path(gate: str) -> str:
    """Where the chart's values set a driver gate (gpu-dra check places it on the stack's draDriver.featureGates)."""
    return format_path(("values", "featureGates", gate))


def no_alpha_in_production(resource: Resource, context: Context) -> list[Finding]:
    if environment_of(context, resource) != "prod":
        return []
    obj, out = dra_object_of("no-alpha-in-production", resource)
    version = context.target.kubernetes_version
    for path, guarded in gate_sites(obj):
        state = gates.state(guarded.gate, version)
        if state is None or state.stage == "alpha":
            out.append(error("no-alpha-in-production", f"{guarded.what} relies on {guarded.gate}, alpha in "
                             f"Kubernetes {version}: not in production", resource, format_path(path)))
    if resource.is_dra_chart:
        for name, enabled in context.driver_gates.items():
            gate = nvidia_driver.DRIVER_GATES.get(name)
            if enabled and gate and gate.stage == "alpha":
                out.append(error("no-alpha-in-production", f"NVIDIA driver gate {name} is alpha: not in production",
                                 resource, driver_gate_path(name)))
    return out


def _sharing(claim: ResourceClaim) -> list[tuple[str, SharingStrategy]]:
    """(path of the strategy, strategy) of every time-slicing or MPS config of a claim or template."""
    found = []
    for config in claim.config:
        sharing = config.parameters.get("sharing")
        strategy = sharing.get("strategy") if isinstance(sharing, Mapping) else None
        if config.parameters.get("kind") == "GpuConfig" and strategy in {s.value for s in SharingStrategy}:
            found.append((format_path((*config.path, "opaque", "parameters", "sharing", "strategy")),
                          SharingStrategy(strategy)))
    return found


def nvidia_driver_gates(resource: Resource, context: Context) -> list[Finding]:
    if not context.pinned:
        return []  # an unpinned chart has no known gates; dra-driver-chart-pinned reports it
    partitionable = context.target.enabled("DRAPartitionableDevices")

    def conflicts(sharing: list[tuple[str, SharingStrategy]]) -> list[tuple[str | None, str]]:
        return nvidia_driver.gate_conflicts(context.chart, context.chart_version, context.driver_gates,
                                            partitionable, sharing)

    if resource.is_dra_chart:  # without sharing, `what` is "version" or a gate
        return [error("nvidia-driver-gates", message, resource, "version" if what == "version"
                      else driver_gate_path(what or "")) for what, message in conflicts([])]
    claim, out = dra_object_of("nvidia-driver-gates", resource)
    if not isinstance(claim, ResourceClaim):
        return out
    for path, strategy in _sharing(claim):  # one at a time, to tell whose sharing the driver rejects
        out += [error("nvidia-driver-gates", message, resource, path,
                      f"enable the driver gate {nvidia_driver.SHARING_GATES[strategy]} (draDriver.featureGates)")
                for what, message in conflicts([(resource.label, strategy)]) if what is None]
    return out

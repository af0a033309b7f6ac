"""The cluster a verdict is for, described once: lint, the policy pack, explain, doctor and migrate judge a field, a
gate or a claim by the same Kubernetes version, platform, declared gates and driver release. The allocator's
switches for a Target are `gpu_dra.core.analysis.features.features_for`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from gpu_dra.core.facts import gates
from gpu_dra.core.facts.nvidia import DEFAULT_LEVEL


# eks: created by gpu-dra on EKS, which runs the upstream gate defaults and no alpha gate; existing: a cluster of
# its own, which declares the gates it runs. (No docstring: the config's JSON Schema would carry it.)
class Platform(StrEnum):
    eks = "eks"
    existing = "existing"


@dataclass(frozen=True)
class Target:
    """The Kubernetes minor version (one of gates.VERSIONS), the platform, the gates an existing cluster declares
    (ignored on EKS), and the NVIDIA driver release (0.x numbering) whose attributes devices carry."""

    kubernetes_version: str = gates.DEFAULT_KUBERNETES_VERSION
    platform: Platform = Platform.eks
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    driver_level: tuple[int, int] = DEFAULT_LEVEL

    def __hash__(self) -> int:  # the declared gates are a mapping: hashed as their items, so a Target keys a cache
        return hash((self.kubernetes_version, self.platform, tuple(sorted(self.feature_gates.items())),
                     self.driver_level))

    def enabled(self, gate: str) -> bool:
        """Whether the gate is on: EKS runs the upstream default; an existing cluster may declare otherwise."""
        current = gates.state(gate, self.kubernetes_version)
        if current is None:
            return False
        if self.platform == Platform.existing and gate in self.feature_gates:
            return self.feature_gates[gate]
        return current.default

    @property
    def taint_rule_gate(self) -> str:
        """The gate under which the scheduler applies DeviceTaintRules: DRADeviceTaintRules from 1.35, DRADeviceTaints
        before. The scheduler sets its ResourceSlice tracker's `EnableDeviceTaints` from DRADeviceTaints in 1.34 and
        `EnableDeviceTaintRules` from DRADeviceTaintRules from 1.35 (kubernetes/kubernetes pkg/scheduler/scheduler.go;
        `Options` in kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.35.0 resourceslice/tracker/tracker.go)."""
        rules = gates.state("DRADeviceTaintRules", self.kubernetes_version)
        return "DRADeviceTaintRules" if rules else "DRADeviceTaints"

    @property
    def label(self) -> str:
        return f"Kubernetes {self.kubernetes_version} ({self.platform})"

"""The cluster the checked objects are meant for: one description for lint, the selector lint rules and the
policy pack, so each judges a field by the same Kubernetes version, platform, gates and driver release."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpu_dra.core.facts import gates
from gpu_dra.core.facts.nvidia import DEFAULT_LEVEL


@dataclass(frozen=True)
class Target:
    """The Kubernetes minor version, the platform (`eks` runs upstream defaults, `existing` declares its gates),
    the gates an existing cluster declares, and the NVIDIA driver release (0.x numbering) whose attributes devices
    carry."""

    kubernetes_version: str = gates.DEFAULT_KUBERNETES_VERSION
    platform: str = "eks"
    feature_gates: dict[str, bool] = field(default_factory=dict)
    driver_level: tuple[int, int] = DEFAULT_LEVEL

    def enabled(self, gate: str) -> bool:
        return gates.enabled(gate, self.kubernetes_version, self.platform, self.feature_gates)

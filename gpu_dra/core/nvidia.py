"""Facts about NVIDIA's DRA driver chart that config validation and manifests share.

Source: ../shared/docs/nvidia-dra-driver.md sections 0 and 3 (chart templates deviceclass-*.yaml, identical in
nvidia-dra-driver-gpu 25.12.0 and dra-driver-nvidia-gpu 0.4.1).
"""

from __future__ import annotations

import fnmatch

DRIVER_NAME = "gpu.nvidia.com"

# DeviceClasses the chart installs; a stack may not define them itself.
CHART_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com",
                        "compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
_CHART_CLASS_PATTERNS = ("compute-domain-*.nvidia.com",)

def is_chart_device_class(name: str) -> bool:
    return name in CHART_DEVICE_CLASSES or any(fnmatch.fnmatch(name, p) for p in _CHART_CLASS_PATTERNS)

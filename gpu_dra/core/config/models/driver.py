"""NVIDIA's DRA driver chart, as a stack pins it."""

from __future__ import annotations

from pydantic import Field, field_validator

from gpu_dra.core.config.models.base import Model
from gpu_dra.core.config.models.fields import DnsLabel
from gpu_dra.core.facts.nvidia import CHART_VERSION_PATTERN, DEFAULT_CHART_VERSION
from gpu_dra.core.facts.nvidia_driver import ChartName


class DraDriver(Model):
    """NVIDIA's DRA driver chart; the version is always pinned."""

    chart: ChartName = Field(default=ChartName.dra_driver_nvidia_gpu, strict=False)
    version: str = Field(default=DEFAULT_CHART_VERSION, pattern=CHART_VERSION_PATTERN,
                         description="An exact chart version, never a range")
    repository: str | None = Field(default=None, pattern=r"^(oci|https)://",
                                   description="Default: the chart's official registry")
    namespace: DnsLabel = "nvidia-dra-driver"
    log_verbosity: int = Field(default=4, ge=0, le=7)
    feature_gates: dict[str, bool] = Field(default_factory=dict)

    @field_validator("namespace")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == "default":
            raise ValueError("the chart refuses the default namespace; use a dedicated one such as nvidia-dra-driver")
        return value

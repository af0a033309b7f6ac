"""NVIDIA's DRA driver chart, as a stack pins it."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from gpu_dra.core.config.models.base import Model, raise_field_errors
from gpu_dra.core.config.models.fields import DnsLabel
from gpu_dra.core.facts.nvidia import CHART_VERSION_PATTERN, DEFAULT_CHART_VERSION, chart_values_of
from gpu_dra.core.facts.nvidia_driver import ChartName, values_problems

VALUES_DESCRIPTION = (
    "More values for the chart, for what the stack does not decide: image.repository and image.tag (a mirror), "
    "imagePullSecrets, priorityClassName and containers.*.resources under kubeletPlugin and controller, "
    "kubeletPlugin.tolerations (added to gpu-dra's own). Checked against the pinned release's values.yaml, which "
    "ships no schema: a key it lacks, or a value of another type than its default, is refused. NVIDIA's install "
    "guide's Helm flags map to stack keys instead: nvidiaDriverRoot to the DRA node groups' `driver` (host: /, "
    "gpu-operator: /run/nvidia/driver), resources.gpus.enabled is always true, resources.computeDomains.enabled "
    "follows `multiNodeNvlink`, featureGates and logVerbosity are the keys above. kubeletPlugin.nodeSelector and "
    "affinity stay gpu-dra's, so the kubelet plugin never runs beside NVIDIA's device plugin")


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
    values: dict[str, Any] = Field(default_factory=dict, description=VALUES_DESCRIPTION)

    @field_validator("namespace")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == "default":
            raise ValueError("the chart refuses the default namespace; use a dedicated one such as nvidia-dra-driver")
        return value

    @model_validator(mode="after")
    def _values_fit_the_chart(self) -> DraDriver:
        """`values` against the pinned release's values.yaml; a release gpu-dra has not read is refused for its
        version (nvidia_driver.unreleased), not here."""
        chart_values = chart_values_of(self.chart.value, self.version)
        if chart_values is not None:
            raise_field_errors("DraDriver", [
                (("values", *path), message)
                for path, message in values_problems(self.chart, self.version, chart_values, self.values)])
        return self

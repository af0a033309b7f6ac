"""Device selection: the `match` shorthand a class or a request compiles to CEL, the platform's DeviceClasses and
the mappings that serve extended-resource requests from them."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from gpu_dra.core.config.models.base import Model, field_error
from gpu_dra.core.config.models.choices import DeviceType
from gpu_dra.core.config.models.fields import Description, DnsSubdomain, MemorySize
from gpu_dra.core.facts.nvidia import DRIVER_NAME


class Match(Model):
    """Selector shorthand, compiled to CEL: say what you need without knowing how the driver publishes it."""

    products: list[str] | None = Field(default=None, min_length=1,
                                       description="Substrings of productName, e.g. [A100, H100]")
    min_memory: MemorySize | None = Field(default=None, description="At least this much GPU memory, with its unit, "
                                                                    "e.g. 20Gi (at least 1Mi)")
    architectures: list[str] | None = Field(default=None, min_length=1, description="e.g. [Hopper, Ampere]")
    min_compute_capability: str | None = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$")
    min_driver_version: str | None = Field(default=None, pattern=r"^\d+(\.\d+){0,2}$")
    device_type: DeviceType | None = Field(default=None, description="gpu (a full GPU) or mig (a MIG slice)")
    mig_profiles: list[str] | None = Field(default=None, min_length=1, description="e.g. [1g.10gb]")

    @model_validator(mode="after")
    def _consistent(self) -> Match:
        if self.mig_profiles and self.device_type is DeviceType.gpu:
            raise field_error("migProfiles", "MIG profiles select MIG devices; drop deviceType: gpu")
        if not self.model_dump(exclude_none=True):
            raise field_error("products", "an empty match selects everything; name at least one condition")
        return self


class OpaqueConfig(Model):
    driver: DnsSubdomain = DRIVER_NAME
    parameters: dict[str, Any]


class DeviceClassConfig(Model):
    """A platform DeviceClass."""

    name: DnsSubdomain
    description: Description | None = None
    match: Match | None = None
    selectors: list[str] = Field(default_factory=list, max_length=32, description="Raw CEL expressions")
    config: list[OpaqueConfig] = Field(default_factory=list, max_length=32)

    @model_validator(mode="after")
    def _selects(self) -> DeviceClassConfig:
        if self.match is None and not self.selectors:
            raise field_error("match", "a class needs match or selectors, else it selects every device of every driver")
        return self


class LegacyMapping(Model):
    """Serve unchanged `nvidia.com/...: N` pod requests from a DeviceClass (DeviceClass.spec.extendedResourceName)."""

    extended_resource_name: str = Field(pattern=r"^[a-z0-9.-]+/[A-Za-z0-9._-]+$",
                                        description="e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb")
    device_class: DnsSubdomain

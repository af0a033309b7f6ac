"""A team's ResourceClaimTemplates: requests and their alternatives, constraints, GPU sharing."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic.alias_generators import to_camel

from gpu_dra.core.config.models.base import Model, field_error
from gpu_dra.core.config.models.choices import AllocationCount
from gpu_dra.core.config.models.classes import Match
from gpu_dra.core.config.models.fields import Description, DnsLabel, DnsSubdomain, QualifiedName, Quantity
from gpu_dra.core.facts.nvidia_driver import SharingStrategy

# Claim templates a team file and a stack may hold: far above what a team writes by hand, and low enough that every
# check of a stack (each template explained on the fleet, each one a resource of the program) ends within a minute
# (docs/benchmarks.md). A team file with 6,000 made `gpu-dra check` run for minutes.
MAX_TEMPLATES_PER_TEAM = 100
MAX_TEMPLATES_PER_STACK = 500


class Toleration(Model):
    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute"] | None = None


class DeviceChoice(Model):
    """What one request (or one alternative of firstAvailable) asks for."""

    device_class: DnsSubdomain
    match: Match | None = None
    selectors: list[str] = Field(default_factory=list, max_length=32)
    allocation_mode: AllocationCount = AllocationCount.ExactCount
    count: int | None = Field(default=None, ge=1)
    tolerations: list[Toleration] = Field(default_factory=list, max_length=16)
    capacity: dict[str, Quantity] = Field(default_factory=dict,
                                          description="Consumable capacity requests, e.g. {memory: 10Gi} (1.36+)")

    @model_validator(mode="after")
    def _count(self) -> DeviceChoice:
        if self.allocation_mode is AllocationCount.All and self.count is not None:
            raise field_error("count", "must not be set when allocationMode is All")
        return self


class Alternative(DeviceChoice):
    name: DnsLabel


class Request(DeviceChoice):
    """A request: one device choice (`deviceClass`, ...) or ordered alternatives (`firstAvailable`)."""

    name: DnsLabel
    device_class: DnsSubdomain | None = None  # type: ignore[assignment]
    first_available: list[Alternative] | None = Field(default=None, min_length=1, max_length=8)
    admin_access: bool = False

    @model_validator(mode="after")
    def _one_form(self) -> Request:
        if (self.device_class is None) == (self.first_available is None):
            raise field_error("deviceClass", "set exactly one of deviceClass (one kind of device) or "
                                             "firstAvailable (ordered alternatives)")
        if self.first_available is not None:
            extra = [k for k in ("match", "selectors", "allocation_mode", "count", "tolerations", "capacity")
                     if k in self.model_fields_set]
            if extra:
                raise field_error(to_camel(extra[0]), "belongs inside each firstAvailable alternative")
            names = [a.name for a in self.first_available]
            if len(names) != len(set(names)):
                raise field_error("firstAvailable", "alternative names must be unique")
            if self.admin_access:
                raise field_error("adminAccess", "not allowed with firstAvailable (Kubernetes has no such field)")
        return self


class Constraint(Model):
    requests: list[str] = Field(default_factory=list, description="Request names; empty = all requests")
    match_attribute: QualifiedName | None = None
    distinct_attribute: QualifiedName | None = None

    @model_validator(mode="after")
    def _one(self) -> Constraint:
        if (self.match_attribute is None) == (self.distinct_attribute is None):
            raise field_error("matchAttribute", "set exactly one of matchAttribute or distinctAttribute")
        return self


class Sharing(Model):
    """GPU sharing through the NVIDIA driver's opaque GpuConfig."""

    strategy: SharingStrategy = Field(strict=False)
    requests: list[str] = Field(default_factory=list, description="Requests it applies to; empty = all")
    interval: Literal["Default", "Short", "Medium", "Long"] | None = None
    active_thread_percentage: int | None = Field(default=None, ge=0, le=100)
    pinned_memory_limit: Quantity | None = None

    @model_validator(mode="after")
    def _fields_fit(self) -> Sharing:
        if self.strategy is SharingStrategy.TimeSlicing:
            for key in ("active_thread_percentage", "pinned_memory_limit"):
                if getattr(self, key) is not None:
                    raise field_error(to_camel(key), "is an MPS setting; strategy is TimeSlicing")
        elif self.interval is not None:
            raise field_error("interval", "is a TimeSlicing setting; strategy is MPS")
        return self


class ClaimTemplate(Model):
    """A ResourceClaimTemplate: pods reference it, each pod gets its own claim."""

    name: DnsSubdomain
    description: Description | None = None
    requests: list[Request] = Field(min_length=1, max_length=32)
    constraints: list[Constraint] = Field(default_factory=list, max_length=32)
    sharing: Sharing | None = None

    @model_validator(mode="after")
    def _references(self) -> ClaimTemplate:
        names = [r.name for r in self.requests]
        if len(names) != len(set(names)):
            raise field_error("requests", "request names must be unique within a template")
        valid = set(names) | {f"{r.name}/{a.name}" for r in self.requests for a in r.first_available or []}
        for where, refs in [("constraints", c.requests) for c in self.constraints] + (
                [("sharing", self.sharing.requests)] if self.sharing else []):
            for ref in refs:
                if ref not in valid:
                    raise field_error(where, f"{ref!r} is not a request of this template (have: {', '.join(names)})")
        return self

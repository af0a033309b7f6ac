"""Text fields checked as the API server, EKS and the catalog would: names, quantities, attribute names,
descriptions, GPU instance types, paths in the repository."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from gpu_dra.core.dra import metadata
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.facts.hardware import INSTANCE_TYPES, LEAST_MEMORY
from gpu_dra.core.findings import did_you_mean

DESCRIPTION_ANNOTATION = "gpu-dra.io/description"  # where render puts a description

# resource.k8s.io FullyQualifiedName: a DNS subdomain of at most 63 characters, a slash, and a C identifier of at most
# 32 (k8s.io/api resource/v1 types.go: QualifiedName, FullyQualifiedName).
_QUALIFIED_NAME = re.compile(r"(?=[^/]{1,63}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                             r"/[A-Za-z_][A-Za-z0-9_]{0,31}")


def dns_label(value: str) -> str:
    """The value if it is a DNS label (RFC 1123) as the API server checks a namespace's name, else its message."""
    if problem := metadata.dns_label_problem(value):
        raise ValueError(problem)
    return value


def dns_subdomain(value: str) -> str:
    """The value if it is a DNS subdomain (RFC 1123) as the API server checks most objects' names, else its
    message."""
    if problem := metadata.dns_subdomain_problem(value):
        raise ValueError(problem)
    return value


def devices_per_class(values: dict[str, int]) -> dict[str, int]:
    """A count of devices per DeviceClass (a quota, a queue's limits): each name a class name, each count >= 0."""
    for name, count in values.items():
        dns_subdomain(name)
        if count < 0:
            raise ValueError(f"{name}: must be >= 0")
    return values


def _quantity(value: str) -> str:
    try:
        parse_quantity(value)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None
    return str(value)


def _memory_unit(value: Any) -> Any:
    """A bare number, before the string check: YAML's 40 is no memory size, and quoting it ("40") makes 40 bytes."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value <= 0:
            raise ValueError(f"{value} asks for no memory, which every GPU has: give a size such as 20Gi, or leave "
                             "minMemory out")
        raise ValueError(f"{value} needs a unit: {value}Gi for {value} GiB ({value} alone is {value} bytes, which "
                         "every GPU has)")
    return value


def _memory_size(value: str) -> str:
    if parse_quantity(value) < LEAST_MEMORY:
        example = f"{value.strip()}Gi" if value.strip().isdigit() and int(value) > 0 else "20Gi"
        raise ValueError(f"{value} is {parse_quantity(value).normalize():f} bytes, which every GPU has: give a "
                         f"size in Gi, e.g. {example}")
    return value


def _qualified_name(value: str) -> str:
    if not _QUALIFIED_NAME.fullmatch(value):
        raise ValueError(f"{value!r} must be a domain and a name separated by a slash, "
                         "e.g. resource.kubernetes.io/pcieRoot or gpu.nvidia.com/productName")
    return value


def _description(value: str) -> str:
    """Descriptions become the `gpu-dra.io/description` annotation of what they describe: within the API server's
    annotation limit."""
    if problems := metadata.annotation_problems({DESCRIPTION_ANNOTATION: value}):
        raise ValueError(problems[0][1])
    return value


def _gpu_instance_type(value: str) -> str:
    """One of the catalog's GPU instance types: a typo gets the closest, else the sizes of its family (or the
    families), not the whole catalog."""
    if value not in INSTANCE_TYPES:
        family = value.split(".", 1)[0]
        sizes = [t for t in INSTANCE_TYPES if t.split(".", 1)[0] == family]  # in the catalog's order
        known = (f"{family} sizes: {', '.join(s.split('.', 1)[1] for s in sizes)}" if sizes else
                 f"GPU families: {', '.join(dict.fromkeys(t.split('.', 1)[0] for t in sorted(INSTANCE_TYPES)))}")
        raise ValueError(f"unknown GPU instance type {value!r}; {did_you_mean(value, INSTANCE_TYPES)}{known}")
    return value


def _repository_path(value: str) -> str:
    """A path inside the repository, relative to its root: the policy pack reads it wherever the repository is."""
    parts = value.replace("\\", "/").split("/")
    if not value or value.startswith(("/", "~")) or ".." in parts or ":" in parts[0]:
        raise ValueError(f"{value!r} must be a path inside the repository, relative to its root (e.g. "
                         "workloads/ops/gpu-burn.yaml), without '..'")
    return value


GpuInstanceType = Annotated[str, AfterValidator(_gpu_instance_type)]
RepositoryPath = Annotated[str, AfterValidator(_repository_path)]
DnsLabel = Annotated[str, AfterValidator(dns_label)]
DnsSubdomain = Annotated[str, AfterValidator(dns_subdomain)]
Quantity = Annotated[str, AfterValidator(_quantity)]
MemorySize = Annotated[str, BeforeValidator(_memory_unit), AfterValidator(_quantity), AfterValidator(_memory_size)]
QualifiedName = Annotated[str, AfterValidator(_qualified_name)]
Description = Annotated[str, AfterValidator(_description)]

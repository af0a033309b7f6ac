"""A workload rewritten to claims: its requests replaced by its team's templates, the DRA nodes' GPU taint
tolerated, everything else as written."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.analysis.migrate.templates import TemplateChoice, slug
from gpu_dra.core.analysis.migrate.workloads import Workload, pod_containers, pod_spec
from gpu_dra.core.config.models import AllocationMode
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.facts.labels import DEVICE_PLUGIN_NODE_LABEL, DEVICE_PLUGIN_SOURCE_LABEL


@dataclass
class Rewrite:
    manifest: dict[str, Any]
    schema: str  # the version judged
    schema_error: str | None = None
    allocatable: bool = False
    node: str | None = None
    nodes: list[str] = field(default_factory=list)  # where its pods' claims fit
    runs_on: list[str] = field(default_factory=list)  # a DaemonSet's nodes
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"manifest": self.manifest, "schema": {"kubernetes": self.schema, "strict": True,
                                                       "valid": self.schema_error is None, "error": self.schema_error},
                "allocatable": self.allocatable, "node": self.node, "nodes": len(self.nodes), "reason": self.reason}


def claim_entry(resource: str, single: bool) -> str:
    """The pod's name for the claim that replaces `resource` (a DNS label)."""
    if single:
        return "gpu"
    return slug(resource.removeprefix("nvidia.com/").replace(".", "-"))[:63]


def rewrite(workload: Workload, choices: Mapping[str, TemplateChoice], tolerations: Sequence[Mapping[str, str]],
            ) -> dict[str, Any]:
    """The workload on claims: `spec.resourceClaims` naming each resource's template, `resources.claims` in every
    container that asked for it, the nvidia.com/* requests and limits removed, and the DRA nodes' GPU taint
    tolerated (the ExtendedResourceToleration admission plugin added that toleration only while the pod asked for
    nvidia.com/gpu). A nodeSelector on gpu-dra's own labels that kept the pods on device-plugin nodes
    (`gpu-dra.io/allocation: device-plugin`, `gpu-dra.io/device-plugin`) selects the DRA nodes instead. Everything else
    is left as written; status is dropped."""
    obj = {k: copy.deepcopy(v) for k, v in workload.obj.items() if k != "status"}
    spec = pod_spec(obj)
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        selector.pop(DEVICE_PLUGIN_SOURCE_LABEL, None)
        if selector.get(DEVICE_PLUGIN_NODE_LABEL[0]) == DEVICE_PLUGIN_NODE_LABEL[1]:
            selector[DEVICE_PLUGIN_NODE_LABEL[0]] = AllocationMode.dra.value
    taken = {str(c.get("name")) for c in spec.get("resourceClaims") or [] if isinstance(c, Mapping)}
    entries: dict[str, str] = {}
    for resource in choices:
        name = claim_entry(resource, len(choices) == 1 and "gpu" not in taken)
        stem, n = name, 2
        while name in taken:
            name, n = f"{stem}-{n}", n + 1
        taken.add(name)
        entries[resource] = name
        spec.setdefault("resourceClaims", []).append(
            {"name": name, "resourceClaimTemplateName": choices[resource].name})
    for _, _, container in pod_containers(spec):
        assert isinstance(container, dict)
        resources = container.get("resources")
        if not isinstance(resources, dict):
            continue
        used = []
        for part in ("limits", "requests"):
            values = resources.get(part)
            if isinstance(values, dict):
                used += [r for r in values if r in entries]
                for resource in [r for r in values if r in entries]:
                    del values[resource]
                if not values:
                    del resources[part]
        for resource in sorted(set(used), key=list(entries).index):
            claims = resources.setdefault("claims", [])
            if not any(c.get("name") == entries[resource] for c in claims):
                claims.append({"name": entries[resource]})
        if not resources:
            del container["resources"]
    have = list(spec.get("tolerations") or [])
    for toleration in tolerations:
        taint = {k: v for k, v in toleration.items() if k != "operator"}
        if not schedules_on({"tolerations": have}, {}, [taint]):
            have.append(dict(toleration))
    if have:
        spec["tolerations"] = have
    return obj

"""Which claim template serves a legacy request: what `nvidia.com/*: N` means as a claim, the team's template that
asks exactly that, or the one to paste into the team file."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpu_dra.core.config.models import AllocationCount, ClaimTemplate, DeviceType, Stack, Team
from gpu_dra.core.facts.hardware import GPU_MODELS
from gpu_dra.core.facts.nvidia import DEVICE_PLUGIN_GPU, DEVICE_PLUGIN_MIG_PREFIX
from gpu_dra.core.facts.nvidia_driver import SHARING_GATES, SharingStrategy, effective_gates
from gpu_dra.core.render import manifests
from gpu_dra.core.render.selectors import products_match

GPU, MIG_PREFIX = DEVICE_PLUGIN_GPU, DEVICE_PLUGIN_MIG_PREFIX
# NVIDIA's device plugin advertises a time-sliced GPU as `<name>.shared` when its config sets `renameByDefault`
# (NVIDIA/k8s-device-plugin@v0.18.2:api/config/v1/consts.go DefaultSharedResourceNameSuffix, resources.go
# DefaultSharedRename); without it a time-sliced GPU is plain nvidia.com/gpu and cannot be told from a whole one.
SHARED_SUFFIX = ".shared"
GPU_CLASS, MIG_CLASS = "gpu.nvidia.com", "mig.nvidia.com"


@dataclass(frozen=True)
class Wanted:
    """What a legacy request means as a claim: the class, the match shorthand and the sharing of a template."""

    resource: str
    count: int
    device_class: str
    match: Mapping[str, Any] | None = None  # team-file `match`, camelCase
    sharing: Mapping[str, Any] | None = None  # team-file `sharing`
    why: str = ""


def wanted(resource: str, count: int, stack: Stack, ran_on: Sequence[str] = ()) -> Wanted | None:
    """The claim that asks for what `resource: count` asks for; None for an nvidia.com name gpu-dra cannot read.

    A name the stack maps (legacyMappings) means the class it maps to; nvidia.com/gpu the GPUs its pods run on today
    (`ran_on`: the productNames of the device-plugin groups they are placed on), so a rewrite keeps the hardware and
    the per-model quota the workload had: the stack's narrowest class selecting them, else gpu.nvidia.com with
    `match.products`; whole GPUs of any model (gpu.nvidia.com, the chart's class) only for a workload that runs
    nowhere today; nvidia.com/mig-<profile> a MIG device of that profile (the stack's class selecting exactly that
    profile, else mig.nvidia.com with `match.migProfiles`, compiled to the driver's `profile` attribute); `.shared`, a
    time-sliced GPU, the same with TimeSlicing sharing."""
    mapped = {m.extended_resource_name: m.device_class for m in stack.config.legacy_mappings}
    if resource in mapped:
        return Wanted(resource, count, mapped[resource], why=f"the class the stack maps {resource} to")
    base = resource.removesuffix(SHARED_SUFFIX)
    sharing = {"strategy": SharingStrategy.TimeSlicing.value} if base != resource else None
    if base == GPU and ran_on:
        models = sorted(set(ran_on))
        shown = ", ".join(m.removeprefix("NVIDIA ") for m in models)
        classes = [(sum(products_match(c.match.products, m.product_name) for m in GPU_MODELS.values()), c.name)
                   for c in stack.config.device_classes
                   if c.match is not None and c.match.products and not c.selectors
                   and c.match.device_type in (None, DeviceType.gpu)
                   and c.match.model_dump(exclude_none=True, by_alias=False).keys() <= {"products", "device_type"}
                   and all(products_match(c.match.products, m) for m in models)]
        if classes:
            return Wanted(resource, count, min(classes)[1], sharing=sharing,
                          why=f"the stack's class for {shown}, what its pods run on today")
        return Wanted(resource, count, GPU_CLASS, {"products": [m.removeprefix("NVIDIA ") for m in models]},
                      sharing, why=f"{shown}, what its pods run on today")
    if base == GPU:
        return Wanted(resource, count, GPU_CLASS, sharing=sharing, why="whole GPUs of any model")
    if base.startswith(MIG_PREFIX) and len(base) > len(MIG_PREFIX):
        profile = base[len(MIG_PREFIX):]
        for device_class in stack.config.device_classes:
            match = device_class.match
            if (match is not None and not device_class.selectors and match.mig_profiles == [profile]
                    and match.model_dump(exclude_none=True, by_alias=False).keys() <= {"mig_profiles", "device_type"}):
                return Wanted(resource, count, device_class.name, sharing=sharing,
                              why=f"the stack's class for MIG profile {profile}")
        return Wanted(resource, count, MIG_CLASS, {"migProfiles": [profile]}, sharing,
                      why=f"a MIG device of profile {profile}")
    return None


def fits(template: ClaimTemplate, want: Wanted) -> bool:
    """A template asks exactly for `want`: one request of its class and count, nothing that narrows or widens it."""
    if len(template.requests) != 1 or template.constraints:
        return False
    request = template.requests[0]
    if (request.first_available is not None or request.device_class != want.device_class or request.selectors
            or request.allocation_mode is not AllocationCount.ExactCount or (request.count or 1) != want.count
            or request.tolerations or request.capacity or request.admin_access):
        return False
    if want.match is None:
        if request.match is not None:
            return False
    else:
        written = request.match.model_dump(by_alias=True, exclude_none=True) if request.match else {}
        kind = DeviceType.mig.value if "migProfiles" in want.match else DeviceType.gpu.value
        if written.pop("deviceType", kind) != kind or written != want.match:
            return False
    if want.sharing is None:
        return template.sharing is None
    return (template.sharing is not None and template.sharing.strategy.value == want.sharing["strategy"]
            and template.sharing.requests in ([], [request.name]))


class _TeamDumper(yaml.SafeDumper):
    """Lists indented under their key, as the team files are written."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


@dataclass
class TemplateChoice:
    """The team's template for one resource of a workload: one that fits, or the one to add to the team file."""

    resource: str
    count: int
    name: str
    exists: bool
    team: str | None  # None: no team of the stack owns the namespace
    team_file: str | None
    device_class: str
    template: ClaimTemplate
    rendered: dict[str, Any]  # the ResourceClaimTemplate gpu-dra renders from it
    written: dict[str, Any] | None = None  # a new template as the team file holds it (camelCase)
    notes: list[str] = field(default_factory=list)

    @property
    def team_yaml(self) -> str | None:
        """A new template as team-file YAML to paste (under the file's `claimTemplates:`, or with it)."""
        if self.written is None:
            return None
        return yaml.dump({"claimTemplates": [self.written]}, Dumper=_TeamDumper, sort_keys=False,
                         default_flow_style=False, width=1000)

    def as_dict(self) -> dict[str, Any]:
        return {"resource": self.resource, "count": self.count, "name": self.name, "exists": self.exists,
                "team": self.team, "team_file": self.team_file, "device_class": self.device_class,
                "team_yaml": self.team_yaml, "notes": self.notes}


def slug(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9.-]", "-", text.lower())).strip("-.") or "gpu"


def choose_template(want: Wanted, team: Team | None, stack: Stack, namespace: str,
                    claimed: Mapping[str, ClaimTemplate]) -> TemplateChoice:
    """The team's template that fits `want`, else a new one (named after what it asks for) for its team file.
    `claimed`: templates already suggested to this team in this run, reused by later workloads."""
    own = list(team.claim_templates) if team else []
    for template in [*own, *claimed.values()]:
        if fits(template, want):
            return _choice(want, team, stack, namespace, template, exists=template in own)
    products = (want.match or {}).get("products")
    base = {GPU_CLASS: "-".join(products) if products else "gpu",
            MIG_CLASS: f"mig-{(want.match or {}).get('migProfiles', [''])[0]}"}.get(want.device_class,
                                                                                  want.device_class)
    stem = slug(f"{base}{'-shared' if want.sharing else ''}-x{want.count}")
    taken = {t.name for t in own} | set(claimed)
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    request: dict[str, Any] = {"name": "gpu", "deviceClass": want.device_class}
    if want.match:
        request["match"] = dict(want.match)
    if want.count != 1:
        request["count"] = want.count
    data: dict[str, Any] = {
        "name": name, "description": f"{want.count} x {want.device_class} ({want.why}), for pods that asked for "
                                     f"{want.count} {want.resource}", "requests": [request]}
    if want.sharing:
        data["sharing"] = dict(want.sharing)
    choice = _choice(want, team, stack, namespace, ClaimTemplate.model_validate(data), exists=False)
    choice.written = data
    return choice


def _choice(want: Wanted, team: Team | None, stack: Stack, namespace: str, template: ClaimTemplate,
            exists: bool) -> TemplateChoice:
    owner = team or Team.model_validate({"name": slug(namespace)[:63] or "default",
                                         "namespace": {"name": namespace}})
    notes = []
    if team is None:
        hosted = ", ".join(f"{t.name} ({t.namespace_name})" for t in stack.teams) or "none"
        notes.append(f"no team of stack {stack.name} owns namespace {namespace} (its teams: {hosted}), so nothing "
                     "creates this template there: host the namespace's team (gpu-dra:teams) or move the workload")
    if template.sharing is not None:
        gate = SHARING_GATES[template.sharing.strategy]
        driver = stack.config.dra_driver
        if not effective_gates(driver.version, driver.feature_gates).get(gate):
            notes.append(f"{template.sharing.strategy.value} sharing needs the DRA driver gate {gate} (alpha), off on "
                         f"stack {stack.name}: set gpu-dra:draDriver.featureGates.{gate}: true, or the stack refuses "
                         "the template")
    if team is not None and not exists:
        quota = team.quota.devices.get(template.requests[0].device_class or "")
        if quota is not None and quota < want.count:
            notes.append(f"team {team.name}'s quota allows {quota} {want.device_class} devices on stack {stack.name}; "
                         f"one claim of this template is charged {want.count}: raise the quota")
    return TemplateChoice(want.resource, want.count, template.name, exists, team.name if team else None,
                          f"stacks/teams/{team.name}.yaml" if team else None, want.device_class, template,
                          manifests.claim_template(owner, template), notes=notes)

"""The three migration phases of docs/migration.md, workload by workload, on one stack.

Phase 1: the workload keeps asking for `nvidia.com/gpu: N` and runs on a device-plugin node group. Phase 2: it is
rewritten to a ResourceClaim (its team's claim template). Phase 3: it keeps its extended resource and DRA serves it
through a DeviceClass `extendedResourceName` (KEP-5004, https://www.kubernetes.dev/resources/keps/5004/; gate
DRAExtendedResource: alpha in 1.34 and 1.35, so dropped on EKS, beta and on from 1.36: facts/gates.py).

For each Pod or workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob) that requests an
`nvidia.com/*` extended resource or names resource claims, this says where its pods run today on the stack (the
device-plugin groups at max size, whose GPUs the workloads before it take in input order; a mapping the stack's
version makes effective; or nowhere), its phase and why, the team's claim template that fits (or the one to paste
into the team file), and the workload rewritten to claims: valid under the strict OpenAPI schema of the stack's
version and explained on the stack's synthesized fleet with the faithful allocator (gpu_dra.core.analysis.pods).

Pure: no I/O. The shell (gpu_dra/cli/commands/migrate.py) reads the files and writes the rewrites.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import kubernetes_validate
import yaml

from gpu_dra.core.analysis.explain import Explainer, claims_from_objects, classes_from_objects, features_for
from gpu_dra.core.analysis.inventory import SHARED, Inventory, objects_in_document, pool_spec, synthesize
from gpu_dra.core.analysis.pods import (
    POD_TEMPLATES,
    ClusterNode,
    PodReport,
    PodSpec,
    explain_pods,
    pods_from_objects,
)
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.config.models import (
    AllocationCount,
    AllocationMode,
    ClaimTemplate,
    DeviceType,
    NodeGroup,
    NodePool,
    Platform,
    SharingStrategy,
    Stack,
    Team,
)
from gpu_dra.core.config.nvidia_driver import SHARING_GATES, effective_gates
from gpu_dra.core.data import helm_merge
from gpu_dra.core.dra import k8s_schema, metadata
from gpu_dra.core.dra.objects import ObjectError, ResourceClaim, parse_claim
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.dra.scheduling import schedules_on, why_not_on
from gpu_dra.core.facts import engine_shapes, gates
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import (
    DEVICE_PLUGIN_NODE_LABEL,
    DEVICE_PLUGIN_SOURCE_LABEL,
    GPU_TAINT_KEY,
    SYSTEM_NODE_LABEL,
)
from gpu_dra.core.facts.nvidia import DEVICE_PLUGIN_GPU, DEVICE_PLUGIN_MIG_PREFIX, DRA_CHART_DEFAULTS
from gpu_dra.core.render import charts, manifests
from gpu_dra.core.render.nodes import node_labels, node_taints, well_known_labels
from gpu_dra.core.yamlsource import Loc, Located, format_path

GPU, MIG_PREFIX = DEVICE_PLUGIN_GPU, DEVICE_PLUGIN_MIG_PREFIX
# NVIDIA's device plugin advertises a time-sliced GPU as `<name>.shared` when its config sets `renameByDefault`
# (NVIDIA/k8s-device-plugin@v0.18.2:api/config/v1/consts.go DefaultSharedResourceNameSuffix, resources.go
# DefaultSharedRename); without it a time-sliced GPU is plain nvidia.com/gpu and cannot be told from a whole one.
SHARED_SUFFIX = ".shared"
GPU_CLASS, MIG_CLASS = "gpu.nvidia.com", "mig.nvidia.com"
PHASES = (1, 2, 3)


class MigrateError(ValueError):
    """Bad input or arguments, said in one line that names the file, line and object: the shell exits 2."""


# --------------------------------------------------------------------------------------------- reading workloads


@dataclass(frozen=True)
class Container:
    name: str
    role: str  # "init", "sidecar" (an init container with restartPolicy Always) or "container"
    gpus: Mapping[str, int]  # nvidia.com/* resource -> count (0 for none)


@dataclass
class Workload:
    """A Pod or workload that requests nvidia.com/* extended resources or names resource claims."""

    source: str
    line: int | None
    obj: dict[str, Any]
    containers: tuple[Container, ...]  # init containers in order, then the app containers
    replicas: int | None  # pods it makes; None for a DaemonSet (one per node it runs on)

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "default")

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.key}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source

    @property
    def spec(self) -> dict[str, Any]:
        return _pod_spec(self.obj)

    @property
    def claims(self) -> list[Mapping[str, Any]]:
        return [c for c in self.spec.get("resourceClaims") or [] if isinstance(c, Mapping)]

    def per_pod(self) -> dict[str, int]:
        """What one pod needs of each resource: the sum of its app containers and sidecars, or the largest init
        container (with the sidecars started before it), whichever is more (`PodRequests` in
        kubernetes/component-helpers@v0.35.0:resource/helpers.go; sidecars: KEP-753)."""
        names = sorted({r for c in self.containers for r, n in c.gpus.items() if n})
        need: dict[str, int] = {}
        for resource in names:
            total = sidecars = init = 0
            for container in self.containers:
                count = container.gpus.get(resource, 0)
                if container.role == "container":
                    total += count
                elif container.role == "sidecar":
                    total += count
                    sidecars += count
                    init = max(init, sidecars)
                else:
                    init = max(init, count + sidecars)
            need[resource] = max(total, init)
        return need


def _pod_spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec: Any = obj
    for key in (*POD_TEMPLATES[str(obj.get("kind"))], "spec"):
        spec = spec.get(key) if isinstance(spec, Mapping) else None
    return spec if isinstance(spec, dict) else {}


def _is_gpu_resource(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("nvidia.com/")


def _containers(spec: Mapping[str, Any]) -> Iterable[tuple[str, int, Mapping[str, Any]]]:
    for field_name in ("initContainers", "containers"):
        items = spec.get(field_name)
        for index, container in enumerate(items if isinstance(items, list) else []):
            if isinstance(container, Mapping):
                yield field_name, index, container


def _wants_gpus(obj: Mapping[str, Any]) -> bool:
    """Whether the pods name claims or ask for a GPU resource (a count of 0 asks for nothing)."""
    spec = _pod_spec(obj)
    if spec.get("resourceClaims"):
        return True
    for _, _, container in _containers(spec):
        resources = container.get("resources")
        for part in ("limits", "requests"):
            values = resources.get(part) if isinstance(resources, Mapping) else None
            if isinstance(values, Mapping) and any(_is_gpu_resource(name) and str(value).strip() not in ("0", "0.0")
                                                   for name, value in values.items()):
                return True
    return False


def _owned_or_done(obj: Mapping[str, Any]) -> bool:
    """A pod or Job a controller made (its CronJob, Deployment or Job is the workload), or a Job that has finished
    (its conditions Complete or Failed): a live cluster's `kubectl get` lists them beside their owners."""
    meta = obj.get("metadata")
    owners = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if isinstance(owners, list) and any(isinstance(o, Mapping) and o.get("controller") for o in owners):
        return True
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) and obj.get("kind") == "Job" else None
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in conditions)


def _count(value: Any) -> int:
    """An extended resource's quantity as the API server accepts it: a whole number, at least 0
    (ValidateResourceRequirements and validateResourceQuantityValue in kubernetes/kubernetes@v1.35.0:
    pkg/apis/core/validation/validation.go)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a quantity")
    try:
        quantity = parse_quantity(str(value))
    except QuantityError as error:
        raise ValueError(str(error)) from None
    if quantity < 0:
        raise ValueError(f"{value}: must be greater than or equal to 0")
    if quantity != quantity.to_integral_value():
        raise ValueError(f"{value}: must be an integer")
    return int(quantity)


class _Reader:
    """One input's objects, each error located at its file, line and object."""

    def __init__(self, source: str, document: Located, base: Loc, obj: Mapping[str, Any]):
        self.source, self.document, self.base, self.obj = source, document, base, obj

    def error(self, path: Loc, message: str) -> MigrateError:
        line = self.document.line((*self.base, *(path or ("kind",))))
        meta = self.obj.get("metadata") if isinstance(self.obj.get("metadata"), Mapping) else {}
        name = f"{meta.get('namespace') or 'default'}/{meta.get('name', '?')}" if isinstance(meta, Mapping) else "?"
        where = f"{self.source}:{line}" if line else self.source
        at = f": {format_path(path)}" if path else ""
        return MigrateError(f"{where}: {self.obj.get('kind')} {name}{at}: {message}")


def read_workloads(inputs: Iterable[tuple[str, Sequence[Located]]],
                   version: str) -> tuple[list[Workload], list[dict[str, Any]]]:
    """The GPU workloads of the inputs, in input order, and their ResourceClaims and ResourceClaimTemplates.

    A document may hold one object or a list (`kind: List`, `kubectl get -o yaml`), and any other kinds (the
    Services and ConfigMaps of `helm template` output), which are ignored. A GPU workload must pass the strict
    OpenAPI schema of `version` and the API server's rules for extended resources, else MigrateError names it."""
    workloads: list[Workload] = []
    claims: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], Workload] = {}
    for source, documents in inputs:
        for document in documents:
            items = document.data.get("items") if isinstance(document.data, Mapping) else None
            for obj in objects_in_document(document.data):
                base: Loc = ()
                if isinstance(items, list) and obj is not document.data:
                    base = ("items", next(i for i, item in enumerate(items) if item is obj))
                reader = _Reader(source, document, base, obj)
                kind = obj.get("kind")
                if kind in ("ResourceClaim", "ResourceClaimTemplate"):
                    claims.append(_claim_object(reader))
                elif isinstance(kind, str) and kind in POD_TEMPLATES and _wants_gpus(obj) and not _owned_or_done(obj):
                    workload = _workload(reader, version)
                    earlier = seen.get((workload.kind, workload.key))
                    if earlier is not None:
                        raise reader.error((), f"defined twice (first at {earlier.where}); give each workload once")
                    seen[(workload.kind, workload.key)] = workload
                    workloads.append(workload)
    return workloads, claims


# The shapes found valid in this process: (Kubernetes version, strict, the object as JSON without its name and
# namespace, its keys in their order). Bounded: past it, objects are validated as if unseen.
_VALID_SHAPES: set[tuple[str, bool, str]] = set()
_VALID_SHAPES_KEPT = 20_000


def _shape(obj: Mapping[str, Any]) -> str | None:
    """The object as JSON with its metadata name and namespace blanked, when it is plain JSON (string keys, no other
    types); else None."""
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        obj = {**obj, "metadata": {**meta, **{key: "" for key in ("name", "namespace")
                                              if isinstance(meta.get(key), str)}}}
    try:
        text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == obj else None  # {1: ...} and {"1": ...} dump alike: not plain JSON


def schema_validate(obj: Mapping[str, Any], version: str, strict: bool) -> None:
    """k8s_schema.validate, once per shape: an object that differs from one found valid only in its metadata name
    and namespace is valid too, since the schema asks nothing of those but to be strings (ObjectMeta in
    kubernetes-validate's schemas; the API server's own rules are metadata.object_meta_problems'). So a workload
    copied across namespaces, and a rewrite like the one before it, are validated once. An error is always the
    validator's own, raised from the object itself."""
    shape = _shape(obj)
    if shape is not None and (version, strict, shape) in _VALID_SHAPES:
        return
    k8s_schema.validate(dict(obj), version, strict=strict)
    if shape is not None and len(_VALID_SHAPES) < _VALID_SHAPES_KEPT:
        _VALID_SHAPES.add((version, strict, shape))


def _validate(reader: _Reader, version: str, strict: bool) -> None:
    try:
        schema_validate(reader.obj, version, strict=strict)
    except kubernetes_validate.ValidationError as error:
        schema = "strict " if strict else ""
        raise reader.error(tuple(error.path), f"{error.message} (the {schema}OpenAPI schema of Kubernetes "
                                              f"{version})") from None
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
        raise reader.error((), str(error)) from None


def _claim_object(reader: _Reader) -> dict[str, Any]:
    _validate(reader, "1.36", strict=False)  # any served version, as explain reads them (cli.common.validate_objects)
    try:
        parse_claim(reader.obj)
    except ObjectError as error:
        raise reader.error((), str(error)) from None
    return dict(reader.obj)


def _workload(reader: _Reader, version: str) -> Workload:
    obj = reader.obj
    _validate(reader, version, strict=True)
    meta = obj.get("metadata") or {}
    if not meta.get("name"):
        raise reader.error(("metadata",), "name: required (gpu-dra migrate needs each workload's name; generateName "
                                          "alone names no workload)")
    # The API server's rules (ValidateObjectMeta: a DNS subdomain name, a DNS label namespace, labels and
    # annotations), which also keep `--write`'s <namespace>/<kind>-<name>.yaml inside its folder.
    template = POD_TEMPLATES[str(obj["kind"])]
    pod: Any = obj
    for key in (*template, "metadata"):  # the pod template's metadata (a Pod's is its own)
        pod = pod.get(key) if isinstance(pod, Mapping) else None
    for base, values in ((("metadata",), meta), ((*template, "metadata"), pod if template else None)):
        for loc, problem in metadata.object_meta_problems(values if isinstance(values, Mapping) else {},
                                                          named=base == ("metadata",)):
            raise reader.error((*base, *loc), problem)
    containers = []
    for field_name, index, container in _containers(_pod_spec(obj)):
        path: Loc = (*template, "spec", field_name, index, "resources")
        resources = container.get("resources") or {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        gpus: dict[str, int] = {}
        for name in sorted(n for n in {*limits, *requests} if _is_gpu_resource(n)):
            # Extended resources cannot be overcommitted: a request needs a limit, and equals it.
            try:
                limit = _count(limits[name]) if name in limits else None
                request = _count(requests[name]) if name in requests else None
            except ValueError as error:
                part = "limits" if name in limits else "requests"
                raise reader.error((*path, part, name), str(error)) from None
            if limit is None:
                raise reader.error((*path, "requests", name), "Limit must be set for non overcommitable resources "
                                                              f"(the API server refuses it: set limits {name})")
            if request is not None and request != limit:
                raise reader.error((*path, "requests", name), f"must be equal to {name} limit of {limit} (the API "
                                                              "server refuses it)")
            gpus[name] = limit
        role = "container"
        if field_name == "initContainers":
            role = "sidecar" if container.get("restartPolicy") == "Always" else "init"
        containers.append(Container(str(container.get("name", f"#{index}")), role, gpus))
    line = reader.document.line((*reader.base, "kind"))
    return Workload(reader.source, line, dict(obj), tuple(containers), _replicas(reader))


def _replicas(reader: _Reader) -> int | None:
    """The pods a workload runs at once: replicas (default 1), a Job's parallelism (at most its completions), one for
    a Pod; None for a DaemonSet, which runs one per node it may use. A null is the default (`helm template` writes
    one for an unset value); a negative or non-integer count is refused, as the API server does
    (ValidateNonnegativeField in kubernetes/kubernetes@v1.35.0:pkg/apis/apps/validation/validation.go)."""
    obj = reader.obj
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        return 1
    if kind == "DaemonSet":
        return None
    path: Loc = ("spec",)
    if kind == "CronJob":
        spec, path = (spec.get("jobTemplate") or {}).get("spec") or {}, ("spec", "jobTemplate", "spec")

    def count(key: str, default: int | None) -> int | None:
        value = spec.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise reader.error((*path, key), f"{value!r}: must be a whole number, 0 or more")
        return value

    if kind in ("Job", "CronJob"):
        parallelism, completions = count("parallelism", 1) or 0, count("completions", None)
        return min(parallelism, completions) if completions is not None else parallelism
    return count("replicas", 1)


# --------------------------------------------------------------------------------------------- the stack's nodes


@dataclass(frozen=True)
class GroupView:
    """A node group (or an existing cluster's pool) as placement sees it: every node at max size."""

    name: str
    mode: str  # "dra", "device-plugin" or "system"
    nodes: int
    gpus: int  # per node
    model: str
    instance_type: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]

    def node_names(self) -> list[str]:
        return [f"{self.name}-{n}" for n in range(self.nodes)]  # as inventory.synthesize names them

    @property
    def summary(self) -> str:
        return f"{self.nodes} x {self.instance_type}, {self.gpus} x {self.model} each"


def _taint(key: str, value: str | None, effect: str) -> dict[str, str]:
    return {"key": key, **({"value": value} if value else {}), "effect": effect}


def group_views(stack: Stack) -> list[GroupView]:
    """The stack's GPU node groups (or pools) and, on EKS, the system group, with the labels and taints their nodes
    carry: gpu-dra's (render/nodes), EKS's node group label and the well-known instance-type, os and arch labels."""
    config = stack.config
    views = []
    for group in charts.gpu_nodes(config):
        if isinstance(group, NodeGroup):
            itype = INSTANCE_TYPES[group.instance_types[0]]
            labels = {**node_labels(group), "eks.amazonaws.com/nodegroup": f"{config.cluster.name}-{group.name}",
                      **well_known_labels(itype.name)}
            taints = tuple(_taint(t.key, t.value, t.effect.value) for t in node_taints(group))
            nodes, gpus, model, name = group.scaling.max, itype.gpus, itype.gpu.product_name, itype.name
        else:
            assert isinstance(group, NodePool)
            hardware = pool_spec(group).hardware()
            labels = dict(group.labels)
            taints = tuple(_taint(t.key, t.value, t.effect.value) for t in group.taints)
            nodes, gpus = group.nodes, hardware.gpus if hardware else 0
            model = hardware.gpu.product_name if hardware else str(group.gpu_model)
            name = group.instance_type or f"{group.gpu_count} x {group.gpu_model}"
            labels |= {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        views.append(GroupView(group.name, group.allocation_mode.value, nodes, gpus, model, name, labels, taints))
    if config.cluster.platform is Platform.eks:
        system = config.cluster.system_node_group
        views.append(GroupView("system", "system", system.scaling.max, 0, "", system.instance_types[0],
                               {SYSTEM_NODE_LABEL[0]: SYSTEM_NODE_LABEL[1], "kubernetes.io/os": "linux",
                                "node.kubernetes.io/instance-type": system.instance_types[0],
                                "kubernetes.io/arch": "arm64" if system.ami_type.endswith("ARM_64_STANDARD")
                                else "amd64"}, ()))
    return views


def _cluster_nodes(views: Sequence[GroupView]) -> list[ClusterNode]:
    return [ClusterNode(Node(name, {**view.labels, "kubernetes.io/hostname": name}), view.taints)
            for view in views for name in view.node_names()]


# --------------------------------------------------------------------------------------------- extended resources


@dataclass(frozen=True)
class ExtendedMapping:
    """A DeviceClass that maps an extended resource (spec.extendedResourceName)."""

    resource: str
    device_class: str
    origin: str  # "the DRA driver chart" or "gpu-dra:legacyMappings[i]"


def mappings(stack: Stack) -> dict[str, ExtendedMapping]:
    """Extended resource -> the class mapping it: the chart's own classes as it renders them for this stack
    (facts/engine_shapes, the one model of the chart's templates: gpu.nvidia.com maps nvidia.com/gpu from 0.4.x and
    25.12.0), then the stack's legacyMappings, which the API server picks over the chart's when both map a name (the
    later class wins: DeviceClassSpec.extendedResourceName, kubernetes/api@v0.36.0 resource/v1 types.go)."""
    driver = stack.config.dra_driver
    values = helm_merge(DRA_CHART_DEFAULTS[driver.chart.value], charts.dra_chart_values(stack.config))
    found: dict[str, ExtendedMapping] = {}
    for obj in engine_shapes.dra_chart_objects(driver.chart.value, driver.version, values, "gpu-dra", "gpu-dra"):
        resource = (obj.get("spec") or {}).get("extendedResourceName") if obj.get("kind") == "DeviceClass" else None
        if resource:
            found[str(resource)] = ExtendedMapping(str(resource), str(obj["metadata"]["name"]), "the DRA driver chart")
    for index, mapping in enumerate(stack.config.legacy_mappings):
        found[mapping.extended_resource_name] = ExtendedMapping(mapping.extended_resource_name, mapping.device_class,
                                                         f"gpu-dra:legacyMappings[{index}]")
    return found


def mappings_effective(stack: Stack) -> bool:
    """Whether the API server keeps extendedResourceName (the gate DRAExtendedResource; render/charts decides the
    same for the chart's classes)."""
    return not charts.drops_extended_resource_name(stack.config)


def _gate_off(stack: Stack) -> str:
    cluster = stack.config.cluster
    state = gates.state("DRAExtendedResource", cluster.kubernetes_version)
    stage = f"{state.stage} in {cluster.kubernetes_version}" if state else f"absent in {cluster.kubernetes_version}"
    platform = "; EKS runs no alpha gates" if cluster.platform is Platform.eks else " and not declared on"
    return f"DRAExtendedResource is off ({stage}{platform}), so the API server drops extendedResourceName"


def admission_tolerations(resources: Iterable[str], platform: str) -> list[dict[str, str]]:
    """The tolerations the ExtendedResourceToleration admission plugin adds to a pod requesting extended resources:
    key = the resource, Exists, NoSchedule (https://kubernetes.io/docs/reference/access-authn-authz/
    admission-controllers/#extendedresourcetoleration). EKS enables it on every platform version
    (https://docs.aws.amazon.com/eks/latest/userguide/platform-versions.html); an existing cluster may not, so none
    are assumed there. So `nvidia.com/gpu: 1` pods tolerate the DRA groups' `nvidia.com/gpu` taint, MIG ones do not."""
    if platform != "eks":
        return []
    return [{"key": r, "operator": "Exists", "effect": "NoSchedule"} for r in sorted(resources)]


# --------------------------------------------------------------------------------------------- claim templates


@dataclass(frozen=True)
class Wanted:
    """What a legacy request means as a claim: the class, the match shorthand and the sharing of a template."""

    resource: str
    count: int
    device_class: str
    match: Mapping[str, Any] | None = None  # team-file `match`, camelCase
    sharing: Mapping[str, Any] | None = None  # team-file `sharing`
    why: str = ""


def wanted(resource: str, count: int, stack: Stack) -> Wanted | None:
    """The claim that asks for what `resource: count` asks for; None for an nvidia.com name gpu-dra cannot read.

    A name the stack maps (legacyMappings) means the class it maps to; nvidia.com/gpu whole GPUs of any model
    (gpu.nvidia.com, the chart's class); nvidia.com/mig-<profile> a MIG device of that profile (the stack's class
    selecting exactly that profile, else mig.nvidia.com with `match.migProfiles`, compiled to the driver's `profile`
    attribute); `.shared`, a time-sliced GPU, the same with TimeSlicing sharing."""
    mapped = {m.extended_resource_name: m.device_class for m in stack.config.legacy_mappings}
    if resource in mapped:
        return Wanted(resource, count, mapped[resource], why=f"the class the stack maps {resource} to")
    base = resource.removesuffix(SHARED_SUFFIX)
    sharing = {"strategy": SharingStrategy.TimeSlicing.value} if base != resource else None
    if base == GPU:
        return Wanted(resource, count, GPU_CLASS, sharing=sharing, why="whole GPUs of any model")
    if base.startswith(MIG_PREFIX) and len(base) > len(MIG_PREFIX):
        profile = base[len(MIG_PREFIX):]
        for device_class in stack.config.device_classes:
            match = device_class.match
            if (match is not None and not device_class.selectors and match.mig_profiles == [profile]
                    and match.model_dump(exclude_none=True).keys() <= {"mig_profiles", "device_type"}):
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
        if written.pop("deviceType", DeviceType.mig.value) != DeviceType.mig.value or written != want.match:
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


def _slug(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9.-]", "-", text.lower())).strip("-.") or "gpu"


def choose_template(want: Wanted, team: Team | None, stack: Stack, namespace: str,
                    claimed: Mapping[str, ClaimTemplate]) -> TemplateChoice:
    """The team's template that fits `want`, else a new one (named after what it asks for) for its team file.
    `claimed`: templates already suggested to this team in this run, reused by later workloads."""
    own = list(team.claim_templates) if team else []
    for template in [*own, *claimed.values()]:
        if fits(template, want):
            return _choice(want, team, stack, namespace, template, exists=template in own)
    base = {GPU_CLASS: "gpu", MIG_CLASS: f"mig-{(want.match or {}).get('migProfiles', [''])[0]}"}.get(
        want.device_class, want.device_class)
    stem = _slug(f"{base}{'-shared' if want.sharing else ''}-x{want.count}")
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
    owner = team or Team.model_validate({"name": _slug(namespace)[:63] or "default",
                                         "namespace": {"name": namespace}})
    notes = []
    if team is None:
        hosted = ", ".join(f"{t.name} ({t.namespace_name})" for t in stack.teams) or "none"
        notes.append(f"no team of stack {stack.name} owns namespace {namespace} (its teams: {hosted}), so nothing "
                     "creates this template there: host the namespace's team (gpu-dra:teams) or move the workload")
    if template.sharing is not None:
        gate = SHARING_GATES[template.sharing.strategy]
        if not effective_gates(stack.config.dra_driver).get(gate):
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


# --------------------------------------------------------------------------------------------- the rewrite


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
    return _slug(resource.removeprefix("nvidia.com/").replace(".", "-"))[:63]


def rewrite(workload: Workload, choices: Mapping[str, TemplateChoice], tolerations: Sequence[Mapping[str, str]],
            ) -> dict[str, Any]:
    """The workload on claims: `spec.resourceClaims` naming each resource's template, `resources.claims` in every
    container that asked for it, the nvidia.com/* requests and limits removed, and the DRA nodes' GPU taint
    tolerated (the ExtendedResourceToleration admission plugin added that toleration only while the pod asked for
    nvidia.com/gpu). A nodeSelector on gpu-dra's own labels that kept the pods on device-plugin nodes
    (`gpu-dra.io/allocation: device-plugin`, `gpu-dra.io/device-plugin`) selects the DRA nodes instead. Everything else
    is left as written; status is dropped."""
    obj = {k: copy.deepcopy(v) for k, v in workload.obj.items() if k != "status"}
    spec = _pod_spec(obj)
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
    for _, _, container in _containers(spec):
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


def gpu_tolerations(views: Sequence[GroupView]) -> list[dict[str, str]]:
    """A toleration per distinct GPU taint of the DRA groups (render/nodes.node_taints puts nvidia.com/gpu on each)."""
    out: list[dict[str, str]] = []
    for view in views:
        if view.mode != AllocationMode.dra.value:
            continue
        for taint in view.taints:
            toleration = {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
            if taint["key"] == GPU_TAINT_KEY and toleration not in out:
                out.append(toleration)
    return out


# --------------------------------------------------------------------------------------------- placement


@dataclass
class Placement:
    """Where a workload's pods run today."""

    pods: int
    device_plugin: dict[str, int] = field(default_factory=dict)  # group -> pods placed there
    gpus: dict[str, int] = field(default_factory=dict)  # group -> GPUs they take
    mapped: int = 0  # pods served through an extendedResourceName mapping
    mapping: ExtendedMapping | None = None
    claims: int = 0  # pods whose claims allocate
    reason: str = ""  # why the rest have nowhere to run

    @property
    def placed(self) -> int:
        return sum(self.device_plugin.values()) + self.mapped + self.claims

    @property
    def pending(self) -> int:
        return self.pods - self.placed

    @property
    def where(self) -> str:
        ways = [w for w, n in (("device-plugin", sum(self.device_plugin.values())), ("mapping", self.mapped),
                               ("claims", self.claims)) if n]
        return "+".join(ways) or "nowhere"

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "pods": self.pods, "placed": self.placed, "pending": self.pending,
                "device_plugin": [{"group": g, "pods": n, "gpus": self.gpus.get(g, 0)}
                                  for g, n in self.device_plugin.items()],
                "mapping": None if self.mapping is None else {"resource": self.mapping.resource,
                                                              "device_class": self.mapping.device_class,
                                                              "origin": self.mapping.origin, "pods": self.mapped},
                "claims": self.claims, "reason": self.reason}


@dataclass
class GroupCapacity:
    view: GroupView
    free: list[int]  # per node

    @property
    def total(self) -> int:
        return self.view.nodes * self.view.gpus

    @property
    def used(self) -> int:
        return self.total - sum(self.free)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.view.name, "instance_type": self.view.instance_type, "model": self.view.model,
                "nodes": self.view.nodes, "gpus_per_node": self.view.gpus, "gpus": self.total, "used": self.used}


@dataclass
class Verdict:
    workload: Workload
    placement: Placement
    phase: int
    why: str
    templates: list[TemplateChoice] = field(default_factory=list)
    rewrite: Rewrite | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def stranded(self) -> bool:
        """Some pod has nowhere to run (a DaemonSet that no node admits has nowhere at all)."""
        return self.placement.pending > 0 or self.placement.pods == 0 and self.workload.replicas is None

    @property
    def gpus_short(self) -> int:
        """GPUs the pods with nowhere to run need (legacy requests only)."""
        return self.placement.pending * sum(self.workload.per_pod().values())

    def as_dict(self) -> dict[str, Any]:
        w = self.workload
        return {"workload": w.key, "kind": w.kind, "namespace": w.namespace, "name": w.name, "source": w.where,
                "pods": self.placement.pods, "per_pod": w.per_pod(), "on_claims": bool(w.claims),
                "containers": [{"name": c.name, "role": c.role, "gpus": {r: n for r, n in c.gpus.items() if n}}
                               for c in w.containers if any(c.gpus.values())],
                "placement": self.placement.as_dict(), "phase": self.phase, "why": self.why,
                "stranded": self.stranded, "gpus_short": self.gpus_short,
                "templates": [t.as_dict() for t in self.templates],
                "rewrite": None if self.rewrite is None else self.rewrite.as_dict(), "notes": self.notes}


@dataclass
class Plan:
    """Every GPU workload of the inputs on one stack (less the groups `without` names)."""

    stack: str
    version: str
    platform: str
    effective: bool
    mappings: dict[str, ExtendedMapping]
    groups: list[GroupCapacity]
    verdicts: list[Verdict]
    without: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def stranded(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.stranded]

    def phases(self) -> dict[int, int]:
        return {phase: sum(1 for v in self.verdicts if v.phase == phase) for phase in PHASES}

    def as_dict(self) -> dict[str, Any]:
        return {"stack": self.stack, "kubernetes": {"version": self.version, "platform": self.platform},
                "without": list(self.without),
                "extended_resources": {"effective": self.effective, "mappings": [
                    {"resource": m.resource, "device_class": m.device_class, "origin": m.origin}
                    for m in self.mappings.values()]},
                "device_plugin_groups": [g.as_dict() for g in self.groups],
                "workloads": [v.as_dict() for v in self.verdicts],
                "phases": {str(k): n for k, n in self.phases().items()},
                "stranded": len(self.stranded), "gpus_short": sum(v.gpus_short for v in self.verdicts),
                "notes": self.notes}


@dataclass(frozen=True)
class PodOutcome:
    """What a plan reads of a pod's report (pods.PodReport): whether its claims allocate together, where, or why not."""

    allocatable: bool
    node: str | None
    nodes: tuple[str, ...]
    reason: str


# The name a pod is explained under when pods alike but for their name share one explanation (_Planner.explain): not a
# DNS subdomain, so no object's name; the inputs saying it anywhere else turn the sharing off.
_ANY_NAME = "<a pod name: gpu-dra migrate>"


class _Planner:
    def __init__(self, stack: Stack, claim_objects: Sequence[Mapping[str, Any]],
                 cache: dict[str, PodOutcome | None] | None = None, rewrites: bool = True):
        self.rewrites = rewrites
        config = stack.config
        cluster = config.cluster
        self.stack = stack
        self.version, self.platform = cluster.kubernetes_version, cluster.platform.value
        self.views = group_views(stack)
        self.nodes = _cluster_nodes(self.views)
        self.inventory: Inventory = synthesize(config)
        classes = manifests.stack_device_classes(stack)
        self.explainer = Explainer(classes_from_objects(classes),
                                   features=features_for(self.version, self.platform, dict(cluster.feature_gates)))
        self.mappings = mappings(stack)
        self.effective = mappings_effective(stack)
        # The stack's templates and the claims given, parsed once: each workload's pod is explained against them.
        self.claims = claims_from_objects([
            *(manifests.claim_template(team, t) for team in stack.teams for t in team.claim_templates),
            *claim_objects])
        self.teams = {team.namespace_name: team for team in stack.teams}
        self.suggested: dict[str, dict[str, ClaimTemplate]] = {}  # namespace -> templates suggested in this run
        self.tolerations = gpu_tolerations(self.views)
        # Whether pods alike but for their name share an explanation (explain): not where the stack or the claims
        # given say _ANY_NAME, which a reason quoting them would have renamed.
        self.renames = not any(_ANY_NAME in text for text in (stack.model_dump_json(), json.dumps(claim_objects,
                                                                                                   default=str)))
        # Pod outcomes by what was explained: the DRA fleet is the same without a device-plugin group, so `--without`
        # reuses them (a claim for more devices than a node has costs the allocator's whole search, 0.5 s on prod).
        self.cache = {} if cache is None else cache

    # ----------------------------------------------------------------------------------------- explain

    def explain(self, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]] = ()) -> PodOutcome | None:
        """The pod's claims allocated together on the fleet, on the nodes it may use (explain_pods).

        Pods alike but for their name are explained once, under _ANY_NAME: no verdict depends on a pod's name (the
        allocator reads none; explain keys its own verdicts on claims without their names, _claim_shape), which only
        the reason's words carry (the pod's, and its template claims' `<pod>-<entry>`), said with the pod's own."""
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if isinstance(meta, Mapping) and isinstance(name, str) and self.renames:
            anonymous = {**obj, "metadata": {**meta, "name": _ANY_NAME}}
            key = json.dumps([anonymous, extra], sort_keys=True, default=str)
            if key.count(_ANY_NAME) == 1:  # else the inputs say it too, and it would be renamed there
                outcome = self._cached(key, anonymous, extra)
                return outcome if outcome is None else replace(outcome, reason=outcome.reason.replace(_ANY_NAME, name))
        return self._cached(json.dumps([obj, extra], sort_keys=True, default=str), obj, extra)

    def _cached(self, key: str, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]]) -> PodOutcome | None:
        if key not in self.cache:
            self.cache[key] = self._explain(obj, extra)
        return self.cache[key]

    def _explain(self, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]]) -> PodOutcome | None:
        """What explaining the pod says, or None for no pod (an object that names no resource claims)."""
        pods = pods_from_objects([obj])
        if not pods:
            return None
        claims = [*self.claims, *claims_from_objects(extra)]
        report = self._too_few(pods[0], claims) or explain_pods(pods, claims, self.inventory, self.explainer, None,
                                                                self.nodes)[0]
        return PodOutcome(report.allocatable, report.node, tuple(report.nodes), report.reason)

    def _too_few(self, pod: PodSpec, claims: Sequence[ResourceClaim]) -> PodReport | None:
        """The pod's report, said at once, when a claim asks for more devices than match on any one node: the faithful
        allocator, as upstream's, then tries device after device on every node (seconds for 16 of 8 GPUs; upstream
        bounds it with DRASchedulerFilterTimeout), to find what the match report already shows. The words are
        explain's (Explainer._unallocatable_reason, pods._explain_pod)."""
        namespace, _, name = pod.name.partition("/")
        by_name = {(c.kind, c.name): c for c in claims}
        for entry in pod.spec.get("resourceClaims") or []:
            if not isinstance(entry, Mapping):
                continue
            template, shared = entry.get("resourceClaimTemplateName"), entry.get("resourceClaimName")
            claim = by_name.get(("ResourceClaimTemplate", f"{namespace}/{template}") if template
                                else ("ResourceClaim", f"{namespace}/{shared}"))
            if claim is None or claim.allocated:
                continue
            made = f"{namespace}/{name}-{entry['name']}" if template else claim.name
            report, matched = self.explainer.match(claim, self.inventory)
            if matched is None or len(report.requests) != len(claim.requests):
                continue  # an error explain reports, or firstAvailable alternatives
            for request, matching in zip(claim.requests, report.requests, strict=True):
                [choice] = request.choices
                per_node = Counter(d.node for d in matching.matching)
                if choice.allocation_mode != "ExactCount" or not per_node or set(per_node) & set(SHARED):
                    continue
                most = max(per_node.values())
                node = min(n for n, count in per_node.items() if count == most)
                if most < choice.count:
                    return PodReport(pod.name, pod.kind, reason=(
                        f"claim {made} ({entry['name']}): request {request.name} needs "
                        f"{choice.count} device(s), but at most {most} match on one node ({node})"))
        return None

    def runs_on(self, spec: Mapping[str, Any]) -> list[tuple[GroupView, str]]:
        """The nodes a DaemonSet's pods are made for: its pod template's node selection and tolerations (the
        DaemonSet controller judges the template, before any admission plugin adds to the pods)."""
        return [(view, name) for view in self.views for name in view.node_names()
                if schedules_on(spec, {**view.labels, "kubernetes.io/hostname": name}, view.taints)]

    # ----------------------------------------------------------------------------------------- a workload

    def verdict(self, workload: Workload, capacity: dict[str, GroupCapacity]) -> Verdict:
        need = workload.per_pod()
        notes: list[str] = []
        if workload.replicas is None:
            nodes = self.runs_on(workload.spec)
            pods = len(nodes)
        else:
            nodes, pods = [], workload.replicas
        placement = Placement(pods)
        if not need:  # on claims already
            report = self.explain(workload.obj)
            if report is not None and report.allocatable:
                fit = set(report.nodes)
                placement.claims = sum(1 for _, n in nodes if n in fit) if workload.replicas is None else pods
            placement.reason = _pending_reason(report, placement) if placement.pending or not pods else ""
            return Verdict(workload, placement, 2, _why_claims(placement, self.stack.name))
        mapping_reason, mapping_short = self._map(workload, need, placement, nodes)
        plugin_reason, plugin_short = self._device_plugin(workload, need, placement, nodes, capacity)
        placement.reason = "; ".join(r for r in (plugin_reason, mapping_reason) if r) if placement.pending else ""
        short = "; ".join(r for r in (plugin_short, mapping_short) if r)
        if workload.replicas is None and pods == 0:
            placement.reason = (f"no node of stack {self.stack.name} admits its pods (nodeSelector, node affinity, "
                                "taints)")
            short = "no node admits its pods"
        phase, why = self._phase(placement, need, short)
        verdict = Verdict(workload, placement, phase, why, notes=notes)
        if self.rewrites:
            self._rewrite(verdict, need)
        if placement.pods > 1 and placement.mapped:
            notes.append("the DRA fleet is judged per pod at max size, as `gpu-dra explain --stack` does: its "
                         f"{placement.pods} pods each fit alone; they compete for the devices with each other and "
                         "the stack's other claims")
        return verdict

    def _map(self, workload: Workload, need: Mapping[str, int], placement: Placement,
             nodes: Sequence[tuple[GroupView, str]]) -> tuple[str, str]:
        """Serve the pods through extendedResourceName mappings, if the stack has them effective and the scheduler's
        claim for the pod allocates: one request per resource for the pod's count, of the mapped class (the devices
        `createDeviceRequests` reaches for its containers, init containers' reused; kubernetes/kubernetes@v1.36.0
        pkg/scheduler/framework/plugins/dynamicresources/extendedresources.go)."""
        mapped = [self.mappings.get(r) for r in need]
        missing = [r for r, m in zip(need, mapped, strict=True) if m is None]
        if missing:
            return f"no DeviceClass maps {', '.join(missing)}", f"no class maps {', '.join(missing)}"
        first = mapped[0]
        assert first is not None
        placement.mapping = first
        names = ", ".join(f"{m.device_class} ({m.origin}) maps {m.resource}" for m in mapped if m)
        classes = ", ".join(dict.fromkeys(m.device_class for m in mapped if m))
        if not self.effective:
            return f"{names}, but {_gate_off(self.stack)}", f"the {classes} mapping is dropped on {self.version}"
        claim_name = f"{workload.name}-extended-resources"[:253]
        claim = {"apiVersion": manifests.RESOURCE_API, "kind": "ResourceClaim",
                 "metadata": {"name": claim_name, "namespace": workload.namespace},
                 "spec": {"devices": {"requests": [
                     {"name": claim_entry(m.resource, len(need) == 1),
                      "exactly": {"deviceClassName": m.device_class, "allocationMode": "ExactCount",
                                  "count": need[m.resource]}}
                     for m in mapped if m]}}}
        pod = copy.deepcopy(workload.obj)
        spec = _pod_spec(pod)
        spec["tolerations"] = [*(spec.get("tolerations") or []), *admission_tolerations(need, self.platform)]
        spec["resourceClaims"] = [*(spec.get("resourceClaims") or []),
                                  {"name": "extended-resources", "resourceClaimName": claim_name}]
        report = self.explain(pod, [claim])
        if report is None or not report.allocatable:
            reason = report.reason if report is not None else "no pod"
            return f"{names}, but {self._no_node(reason, spec)}", f"the {classes} mapping finds no node for it"
        if workload.replicas is None:
            fit = set(report.nodes)
            placement.mapped = sum(1 for _, n in nodes if n in fit)
            if placement.mapped < len(nodes):
                return (f"{names}, but its pods on other nodes get no mapped device",
                        f"the {classes} mapping serves only some of its nodes")
        else:
            placement.mapped = placement.pods
        return "", ""

    def _no_node(self, reason: str, spec: Mapping[str, Any]) -> str:
        """The allocator's reason, and what keeps the pod off the first DRA group it may not use (its devices are
        then out of reach, whatever the allocator says of the nodes it tried)."""
        for view in self.views:
            if view.mode == AllocationMode.dra.value and view.nodes:
                why = why_not_on(spec, {**view.labels, "kubernetes.io/hostname": view.node_names()[0]}, view.taints)
                if why:
                    return f"{reason} (it may use no {view.name} node: {why})"
        return reason

    def _device_plugin(self, workload: Workload, need: Mapping[str, int], placement: Placement,
                       nodes: Sequence[tuple[GroupView, str]], capacity: dict[str, GroupCapacity]) -> tuple[str, str]:
        """Place the pods the mapping left on device-plugin nodes, first fit, node by node (a pod needs its GPUs on
        one node; a DaemonSet's pod, on its own node). NVIDIA's device plugin advertises whole GPUs as nvidia.com/gpu
        only: gpu-dra sets no MIG strategy and no time-slicing config (render/charts.device_plugin_values; the
        chart's migStrategy and config default to none and unshared, NVIDIA/k8s-device-plugin@v0.18.2:deployments/
        helm/nvidia-device-plugin/values.yaml), and leaves the built-in plugin of Bottlerocket groups as it is."""
        left = placement.pending
        if not left:
            return "", ""
        if not capacity:
            return f"stack {self.stack.name} has no device-plugin node group", "no device-plugin group"
        other = sorted(r for r in need if r != GPU)
        if other:
            return (f"the device plugin advertises only {GPU} (gpu-dra configures no MIG strategy and no "
                    f"time-slicing), not {', '.join(other)}", f"the device plugin advertises no {', '.join(other)}")
        count = need[GPU]
        spec = {**workload.spec, "tolerations": [*(workload.spec.get("tolerations") or []),
                                                 *admission_tolerations(need, self.platform)]}
        daemon = workload.replicas is None
        ours = {name for _, name in nodes}
        reasons: list[str] = []
        short = ""
        for group in capacity.values():
            view = group.view
            indexes = [i for i, name in enumerate(view.node_names()) if not daemon or name in ours]
            if daemon and not indexes:
                continue
            why = why_not_on(spec, {**view.labels, "kubernetes.io/hostname": f"{view.name}-0"}, view.taints) \
                if view.nodes else "it has no nodes"
            if why:
                reasons.append(f"{view.name}: {why}")
                short = short or "it may not use the device-plugin groups"
                continue
            if count > view.gpus:
                reasons.append(f"{view.name}: a pod needs {count} GPUs on one node; its {view.instance_type} nodes "
                               f"have {view.gpus}")
                short = short or f"no device-plugin node has {count} GPUs"
                continue
            before, placed = group.used, 0
            for index in indexes:
                while left > placed and group.free[index] >= count:
                    group.free[index] -= count
                    placed += 1
                    if daemon:
                        break
            if placed:
                placement.device_plugin[view.name] = placed
                placement.gpus[view.name] = placed * count
                left -= placed
            if (daemon and placed < len(indexes)) or (not daemon and left):
                taken = f", {placed * count} by this one" if placed else ""
                reasons.append(f"{view.name} is full: {group.total} GPUs ({view.summary}), {before} taken by the "
                               f"workloads before it{taken}")
                short = "the device-plugin groups are full"
            if not left:
                break
        return ("; ".join(reasons), short) if left else ("", "")

    def _phase(self, placement: Placement, need: Mapping[str, int], short: str) -> tuple[int, str]:
        resources = ", ".join(f"{r}: {n}" for r, n in need.items())
        if placement.pods and not placement.pending and placement.mapped == placement.pods:
            mapping = placement.mapping
            assert mapping is not None
            return 3, (f"Served unchanged: DeviceClass {mapping.device_class} ({mapping.origin}) maps "
                       f"{mapping.resource} and DRAExtendedResource is on in Kubernetes {self.version}, so its pods "
                       f"({resources}) run on DRA nodes as they are.")
        if placement.pods and not placement.pending:
            groups = ", ".join(placement.device_plugin)
            later = ""
            if placement.mapping is not None and not self.effective:
                later = (f"; from Kubernetes 1.36 {placement.mapping.device_class} serves it unchanged "
                         "(DRAExtendedResource on by default)")
            return 1, (f"Runs on the device plugin ({groups}) and may stay there; rewrite it to claims before {groups} "
                       f"is removed{later}.")
        if placement.placed:
            return 2, (f"{placement.pending} of its {placement.pods} pods have nowhere to run on stack "
                       f"{self.stack.name} ({short}): rewrite it to claims.")
        return 2, f"Nowhere to run on stack {self.stack.name} ({short}): rewrite it to claims."

    def _rewrite(self, verdict: Verdict, need: Mapping[str, int]) -> None:
        """The team's templates for the workload's requests and the workload rewritten to them, explained."""
        workload = verdict.workload
        team = self.teams.get(workload.namespace)
        suggested = self.suggested.setdefault(workload.namespace, {})
        choices: dict[str, TemplateChoice] = {}
        for resource, count in need.items():
            want = wanted(resource, count, self.stack)
            if want is None:
                verdict.notes.append(f"gpu-dra does not know what {resource} is: map it to a class (gpu-dra:"
                                     "legacyMappings) or write its claim template yourself")
                return
            choice = choose_template(want, team, self.stack, workload.namespace, suggested)
            if not choice.exists:
                suggested[choice.name] = choice.template
            choices[resource] = choice
        verdict.templates = list(choices.values())
        manifest = rewrite(workload, choices, self.tolerations)
        result = Rewrite(manifest, self.version)
        try:
            schema_validate(manifest, self.version, strict=True)
        except kubernetes_validate.ValidationError as error:
            result.schema_error = f"{'.'.join(str(p) for p in error.path) or '(object)'}: {error.message}"
        verdict.rewrite = result
        if sum(1 for c in workload.containers if c.role != "init" and any(c.gpus.values())) > 1:
            verdict.notes.append("more than one of its containers asked for GPUs: each now sees every device of the "
                                 "pod's claim; give each container its own claim if they must not share")
        report = self.explain(manifest, [c.rendered for c in choices.values()])
        assert report is not None
        result.node, result.nodes = report.node, list(report.nodes)
        if workload.replicas is None:
            result.runs_on = [n for _, n in self.runs_on(_pod_spec(manifest))]
            missing = [n for n in result.runs_on if n not in set(report.nodes)] if report.allocatable \
                else list(result.runs_on)
            result.allocatable = bool(result.runs_on) and not missing
            if not result.runs_on:
                result.reason = (f"no node of stack {self.stack.name} admits its pods (nodeSelector, node affinity, "
                                 "taints)")
            elif missing:
                why = report.reason if not report.allocatable else "its claim does not allocate there"
                result.reason = (f"{len(missing)} of the {len(result.runs_on)} nodes it runs on get nothing "
                                 f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): {why}")
        else:
            result.allocatable = report.allocatable
            result.reason = "" if report.allocatable else self._no_node(report.reason, _pod_spec(manifest))
        if team is None and result.allocatable:
            result.allocatable = False
            result.reason = (f"no team of stack {self.stack.name} owns namespace {workload.namespace}, so its "
                             "template is not created there (the fleet itself would allocate it)")


def _pending_reason(report: PodOutcome | None, placement: Placement) -> str:
    if report is None:
        return "no pod"
    if placement.pods == 0:
        return "no node of the stack admits its pods (nodeSelector, node affinity, taints)"
    if report.allocatable and placement.pending:
        return "its claims do not allocate on some of the nodes it runs on"
    return report.reason


def _why_claims(placement: Placement, stack: str) -> str:
    if placement.pods and not placement.pending:
        return "On claims already (phase 2 done): its claims allocate on the stack's fleet."
    return f"On claims already, but its claims do not allocate on stack {stack} ({placement.reason})."


def device_plugin_groups(stack: Stack) -> list[str]:
    return [g.name for g in charts.gpu_nodes(stack.config) if g.allocation_mode is AllocationMode.device_plugin]


def without_groups(stack: Stack, names: Sequence[str]) -> Stack:
    """The stack with these device-plugin groups (or pools) removed; MigrateError for a name that is none."""
    legacy = device_plugin_groups(stack)
    for name in names:
        if name not in legacy:
            groups = [g.name for g in charts.gpu_nodes(stack.config)]
            problem = f"{name} is a dra group" if name in groups else f"stack {stack.name} has no node group {name!r}"
            have = (f"its device-plugin groups: {', '.join(legacy)}" if legacy
                    else f"it has no device-plugin group (its GPU groups: {', '.join(groups) or 'none'})")
            raise MigrateError(f"--without {name}: {problem}; {have}")
    config = stack.config.model_copy(update={
        "node_groups": [g for g in stack.config.node_groups if g.name not in names],
        "node_pools": [p for p in stack.config.node_pools if p.name not in names]})
    return stack.model_copy(update={"config": config})


def plan(stack: Stack, workloads: Sequence[Workload], claim_objects: Sequence[Mapping[str, Any]] = (),
         without: Sequence[str] = (), cache: dict[str, PodOutcome | None] | None = None,
         rewrites: bool = True) -> Plan:
    """Every workload's verdict on the stack, in input order (earlier workloads take the device-plugin GPUs first).
    `cache`: pod outcomes of an earlier plan of the same stack and inputs, reused. `rewrites=False` where only where
    the pods run is read (the policy pack's legacy-workloads-placed, `--without`'s second plan): no templates,
    rewrites or their explanations, which placing the workloads does not depend on."""
    judged = without_groups(stack, without) if without else stack
    planner = _Planner(judged, claim_objects, cache, rewrites)
    capacity = {v.name: GroupCapacity(v, [v.gpus] * v.nodes) for v in planner.views
                if v.mode == AllocationMode.device_plugin.value}
    verdicts = [planner.verdict(w, capacity) for w in workloads]
    result = Plan(stack.name, planner.version, planner.platform, planner.effective, planner.mappings,
                  list(capacity.values()), verdicts, tuple(without))
    result.notes += [n for n in planner.inventory.notes if "device-plugin" not in n]
    return result


@dataclass
class Breakage:
    """What `--without` breaks: the workloads that had a place and have none after, and the GPUs short per phase
    (the phase each stranded legacy workload is in today)."""

    before: Plan
    after: Plan

    @property
    def broken(self) -> list[tuple[Verdict, Verdict]]:
        return [(b, a) for b, a in zip(self.before.verdicts, self.after.verdicts, strict=True)
                if a.stranded and not b.stranded]

    def shortfall(self) -> dict[int, int]:
        short = dict.fromkeys(PHASES, 0)
        for before, after in zip(self.before.verdicts, self.after.verdicts, strict=True):
            short[before.phase] += after.gpus_short
        return short

    def as_dict(self) -> dict[str, Any]:
        return {"groups": list(self.after.without),
                "broken": [{"workload": b.workload.key, "kind": b.workload.kind, "phase": b.phase,
                            "gpus_short": a.gpus_short, "reason": a.placement.reason} for b, a in self.broken],
                "stranded": len(self.after.stranded),
                "shortfall": {str(k): n for k, n in self.shortfall().items()}}

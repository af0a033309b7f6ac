"""Reading the inputs: the GPU workloads (Pods and the workloads that make them) and the ResourceClaims and
ResourceClaimTemplates given beside them, each checked as the API server would, each error naming its file, line and
object."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kubernetes_validate

from gpu_dra.core.analysis.inventory import objects_in_document
from gpu_dra.core.analysis.pods import POD_TEMPLATES
from gpu_dra.core.dra import k8s_schema, metadata
from gpu_dra.core.dra.claims import parse_claim
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.yamlsource import Loc, Located, format_path


class MigrateError(ValueError):
    """Bad input or arguments, said in one line that names the file, line and object: the shell exits 2."""


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
        return pod_spec(self.obj)

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


def pod_spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec: Any = obj
    for key in (*POD_TEMPLATES[str(obj.get("kind"))], "spec"):
        spec = spec.get(key) if isinstance(spec, Mapping) else None
    return spec if isinstance(spec, dict) else {}


def _is_gpu_resource(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("nvidia.com/")


def pod_containers(spec: Mapping[str, Any]) -> Iterable[tuple[str, int, Mapping[str, Any]]]:
    for field_name in ("initContainers", "containers"):
        items = spec.get(field_name)
        for index, container in enumerate(items if isinstance(items, list) else []):
            if isinstance(container, Mapping):
                yield field_name, index, container


def _wants_gpus(obj: Mapping[str, Any]) -> bool:
    """Whether the pods name claims or ask for a GPU resource (a count of 0 asks for nothing)."""
    spec = pod_spec(obj)
    if spec.get("resourceClaims"):
        return True
    for _, _, container in pod_containers(spec):
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
    _validate(reader, "1.36", strict=False)  # any served version, as explain reads them (cli.sources.validate_objects)
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
    for field_name, index, container in pod_containers(pod_spec(obj)):
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

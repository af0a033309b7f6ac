"""Lint DeviceClass, ResourceClaim and ResourceClaimTemplate manifests offline, as the API server and the
scheduler would judge them, plus the lint rules: strict OpenAPI schema of the target Kubernetes version, CEL compile,
selector lint, and the feature gates of the target platform.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.config.nvidia_driver import DEFAULT_LEVEL
from gpu_dra.core.dra import k8s_schema
from gpu_dra.core.dra.api import DNS_LABEL, KINDS, REQUEST_FIELDS, uses_exactly
from gpu_dra.core.dra.cel import CompileError, compile_selector
from gpu_dra.core.facts import gates, nvidia
from gpu_dra.core.findings import ERROR, WARNING, Finding
from gpu_dra.core.yamlsource import Located, format_path


@dataclass(frozen=True)
class Target:
    """The cluster the manifests are meant for."""

    kubernetes_version: str = gates.DEFAULT_KUBERNETES_VERSION
    platform: str = "eks"
    feature_gates: dict[str, bool] = field(default_factory=dict)
    driver_level: tuple[int, int] = DEFAULT_LEVEL

    def enabled(self, gate: str) -> bool:
        return gates.enabled(gate, self.kubernetes_version, self.platform, self.feature_gates)


@dataclass
class ManifestObject:
    file: str
    data: dict[str, Any]
    located: Located
    prefix: tuple[str | int, ...]  # where the object sits in its document (items[i] of a List)

    @property
    def name(self) -> str:
        meta = _mapping(self.data.get("metadata"))
        namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
        return f"{self.data.get('kind')}/{namespace}{meta.get('name', '?')}"

    def line(self, path: tuple[str | int, ...]) -> int | None:
        """The line of `path`, of its nearest parent, or else of the object's `kind`."""
        return self.located.line(self.prefix + path) or self.located.line(self.prefix + ("kind",))


def objects_in(file: str, documents: list[Located]) -> Iterator[ManifestObject]:
    """DeviceClasses and claims in multi-document YAML or `kind: List` (what `kubectl get -o yaml` prints)."""
    for document in documents:
        data = document.data
        if not isinstance(data, dict):
            continue
        if data.get("kind") == "List" or (data.get("kind", "").endswith("List") and "items" in data):
            for index, item in enumerate(data.get("items") or []):
                if isinstance(item, dict) and item.get("kind") in KINDS:
                    yield ManifestObject(file, item, document, ("items", index))
        elif data.get("kind") in KINDS:
            yield ManifestObject(file, data, document, ())


def claim_devices(data: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str | int, ...]]:
    """spec.devices of a ResourceClaim (spec.spec.devices of a template), and its path; {} where malformed."""
    spec = _mapping(data.get("spec"))
    if data.get("kind") == "ResourceClaimTemplate":
        return _mapping(_mapping(spec.get("spec")).get("devices")), ("spec", "spec", "devices")
    return _mapping(spec.get("devices")), ("spec", "devices")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _uses_exactly(data: Mapping[str, Any]) -> bool:
    return uses_exactly(str(data.get("apiVersion", "")))


def selector_sites(obj: ManifestObject) -> Iterator[tuple[tuple[str | int, ...], str, str | None]]:
    """(path of the expression, expression, device class name or None for a class's own selectors)."""
    if obj.data.get("kind") == "DeviceClass":
        for i, selector in enumerate((obj.data.get("spec") or {}).get("selectors") or []):
            expression = ((selector or {}).get("cel") or {}).get("expression")
            if isinstance(expression, str):
                yield ("spec", "selectors", i, "cel", "expression"), expression, None
        return
    devices, base = claim_devices(obj.data)
    for r, request in enumerate(devices.get("requests") or []):
        if not isinstance(request, dict):
            continue
        choices: list[tuple[tuple[str | int, ...], dict[str, Any]]] = []
        if isinstance(request.get("exactly"), dict):
            choices.append(((r, "exactly"), request["exactly"]))
        for a, alternative in enumerate(request.get("firstAvailable") or []):
            if isinstance(alternative, dict):
                choices.append(((r, "firstAvailable", a), alternative))
        if any(key in request for key in REQUEST_FIELDS):
            choices.append(((r,), request))  # misplaced fields: still lint what they say
        for where, choice in choices:
            for s, selector in enumerate(choice.get("selectors") or []):
                expression = ((selector or {}).get("cel") or {}).get("expression")
                if isinstance(expression, str):
                    yield (*base, "requests", *where, "selectors", s, "cel", "expression"), expression, \
                        choice.get("deviceClassName")


def gate_sites(obj: ManifestObject) -> Iterator[tuple[tuple[str | int, ...], gates.GuardedField]]:
    if obj.data.get("kind") == "DeviceClass":
        if "extendedResourceName" in (obj.data.get("spec") or {}):
            yield ("spec", "extendedResourceName"), gates.EXTENDED_RESOURCE
        return
    devices, base = claim_devices(obj.data)
    for r, request in enumerate(devices.get("requests") or []):
        if not isinstance(request, dict):
            continue
        if "firstAvailable" in request:
            yield (*base, "requests", r, "firstAvailable"), gates.PRIORITIZED_LIST
        exactly = request.get("exactly") or {}
        choices: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [((r, "exactly"), exactly)]
        choices += [((r, "firstAvailable", a), alt or {}) for a, alt in enumerate(request.get("firstAvailable") or [])]
        for where, choice in choices:
            if choice.get("adminAccess"):
                yield (*base, "requests", *where, "adminAccess"), gates.ADMIN_ACCESS
            if choice.get("tolerations"):
                yield (*base, "requests", *where, "tolerations"), gates.DEVICE_TAINTS
            if choice.get("capacity"):
                yield (*base, "requests", *where, "capacity"), gates.CAPACITY_REQUESTS
    for c, constraint in enumerate(devices.get("constraints") or []):
        if isinstance(constraint, dict) and "distinctAttribute" in constraint:
            yield (*base, "constraints", c, "distinctAttribute"), gates.DISTINCT_ATTRIBUTE


def _schema_findings(obj: ManifestObject, target: Target) -> list[Finding]:
    try:
        k8s_schema.validate(obj.data, target.kubernetes_version, strict=True)
    except k8s_schema.ValidationError as error:
        path = tuple(error.path)
        message = error.message
        if "Additional properties are not allowed" in message:
            message = message.replace("Additional properties are not allowed", "unknown field(s)")
        return [Finding("schema", ERROR, f"rejected by the resource.k8s.io schema of Kubernetes "
                                         f"{target.kubernetes_version}: {message}",
                        file=obj.file, line=obj.line(path), object=obj.name, path=format_path(path))]
    except k8s_schema.SchemaNotFound as error:
        return [Finding("schema", ERROR, str(error), file=obj.file, line=obj.line(("apiVersion",)), object=obj.name,
                        path="apiVersion")]
    return []


def _misplaced_request_fields(obj: ManifestObject) -> list[Finding]:
    if obj.data.get("kind") == "DeviceClass" or not _uses_exactly(obj.data):
        return []
    devices, base = claim_devices(obj.data)
    findings = []
    for r, request in enumerate(devices.get("requests") or []):
        if not isinstance(request, dict):
            continue
        misplaced = [key for key in REQUEST_FIELDS if key in request]
        if misplaced:
            path = (*base, "requests", r)
            findings.append(Finding(
                "request-fields-outside-exactly", ERROR,
                f"{', '.join(misplaced)} belong under `exactly:` in resource.k8s.io/v1 (the v1beta1 shape put them "
                "on the request)",
                "move them: requests: [{name: ..., exactly: {deviceClassName: ..., selectors: [...]}}]",
                file=obj.file, line=obj.line((*path, misplaced[0])), object=obj.name, path=format_path(path)))
    return findings


def _semantic_findings(obj: ManifestObject) -> list[Finding]:
    """What the API server's validation rejects beyond the schema (kubernetes/kubernetes
    pkg/apis/resource/validation/validation.go; docs/sources.md#kubernetes-dra-api), for claims and templates in the
    `exactly` shape."""
    if obj.data.get("kind") == "DeviceClass":
        return []
    devices, base = claim_devices(obj.data)
    problems: list[tuple[tuple[str | int, ...], str]] = []
    names: list[str] = []
    subrequests: set[str] = set()
    for r, request in enumerate(devices.get("requests") or []):
        here = (*base, "requests", r)
        name = str(request.get("name", ""))
        if not DNS_LABEL.match(name):
            problems.append(((*here, "name"), f"{name!r}: must be a DNS label (lowercase letters, digits, '-')"))
        if name in names:
            problems.append(((*here, "name"), f"{name!r}: duplicate request name"))
        names.append(name)
        single, where_single = ((request.get("exactly"), (*here, "exactly")) if _uses_exactly(obj.data)
                                else (request if "deviceClassName" in request else None, here))
        has_first = "firstAvailable" in request
        if (single is not None) == has_first:
            field = "`exactly`" if _uses_exactly(obj.data) else "`deviceClassName`"
            problems.append((here, f"exactly one of {field} or `firstAvailable` is required"
                                   + (", but multiple fields are set" if has_first else "")))
        choices = [(where_single, single or {})] if single is not None else []
        for a, alternative in enumerate(request.get("firstAvailable") or []):
            choices.append(((*here, "firstAvailable", a), alternative))
            subrequests.add(f"{name}/{alternative.get('name')}")
        for where, choice in choices:
            mode = choice.get("allocationMode", "ExactCount")
            if mode not in ("ExactCount", "All"):
                problems.append(((*where, "allocationMode"), f"Unsupported value: {mode!r}: supported values: "
                                                             "\"All\", \"ExactCount\""))
            elif mode == "ExactCount" and "count" in choice and choice["count"] <= 0:
                problems.append(((*where, "count"), "must be greater than zero"))
            elif mode == "All" and choice.get("count"):
                problems.append(((*where, "count"), "must not be specified when allocationMode is 'All'"))
    valid_refs = set(names) | subrequests
    for c, constraint in enumerate(devices.get("constraints") or []):
        here = (*base, "constraints", c)
        for i, ref in enumerate(constraint.get("requests") or []):
            if ref not in valid_refs:
                problems.append(((*here, "requests", i), f"{ref!r}: must be the name of a request in the claim or "
                                                         "the name of a request and a subrequest separated by '/'"))
        fields = [k for k in ("matchAttribute", "distinctAttribute") if constraint.get(k)]
        if len(fields) != 1:
            problems.append((here, 'exactly one of "matchAttribute" or "distinctAttribute" is required'))
        for key in fields:
            if "/" not in str(constraint[key]):
                problems.append(((*here, key), "a fully qualified name must be a domain and a name separated by a "
                                               "slash"))
    return [Finding("validation", ERROR, f"rejected by the API server: {message}", file=obj.file, line=obj.line(path),
                    object=obj.name, path=format_path(path)) for path, message in problems]


def lint_object(obj: ManifestObject, target: Target) -> list[Finding]:
    misplaced = _misplaced_request_fields(obj)
    # Misplaced request fields are what the schema would reject first: say it in the user's terms, then check the
    # rest of the object as if they were where they belong.
    moved = _request_fields_moved(obj.data) if misplaced else None
    shaped = ManifestObject(obj.file, moved, obj.located, obj.prefix) if moved else obj
    structure = _schema_findings(shaped, target)
    if structure:
        return misplaced + structure  # wrong shapes: the checks below would only guess
    findings = misplaced + _semantic_findings(shaped)
    where_written = _original_path if moved else (lambda path: path)
    consumable = target.enabled("DRAConsumableCapacity")
    for shaped_path, expression, device_class in selector_sites(shaped):
        path = where_written(shaped_path)  # report where the user wrote it
        where = format_path(path)
        line = obj.line(path)
        try:
            compile_selector(expression, consumable_capacity=consumable)
        except CompileError as error:
            if error.kind == "unsupported":
                findings.append(Finding("cel-unsupported", WARNING, error.message, file=obj.file, line=line,
                                        object=obj.name, path=where))
                continue
            fix = None
            if error.kind == "cost":
                fix = ("objects of unknown size (quantity, semver) compare at unbounded estimated cost: use "
                       "q.compareTo(quantity('20Gi')) == 0; keep nested loops few (maps hold at most 32 entries)")
            elif re.search(r"no matching overload for '_(>=|>|<=|<)_'.*kubernetes\.Quantity", error.message):
                fix = "quantities have no comparison operators: q.compareTo(quantity('20Gi')) >= 0"
            findings.append(Finding("cel-compile", ERROR, f"the API server rejects this selector: {error.message}", fix,
                                    file=obj.file, line=line, object=obj.name, path=where))
        class_type = nvidia.CHART_CLASS_DEVICE_TYPES.get(device_class or "")
        context = SelectorContext(class_selector=device_class is None,
                                  device_types=(class_type,) if class_type else nvidia.DEVICE_TYPES,
                                  driver_level=target.driver_level)
        rewritten = fix_expression(expression)
        for lint in lint_selector(expression, context):
            fix = rewritten if lint.rule == "capacity-as-attribute" and rewritten != expression else lint.fix
            findings.append(lint.at(fix=fix, file=obj.file, line=line, object=obj.name, path=where))
    for shaped_path, guarded in gate_sites(shaped):
        path = where_written(shaped_path)
        if not target.enabled(guarded.gate):
            current = gates.state(guarded.gate, target.kubernetes_version)
            stage = f"{current.stage} and off" if current else "not present"
            where = ("EKS runs only the upstream defaults (no alpha gates)" if target.platform == "eks"
                     else "the cluster does not enable it (--feature-gates)")
            consequence = ("silently drops" if guarded is gates.EXTENDED_RESOURCE else "rejects or drops")
            findings.append(Finding("feature-gate", ERROR,
                                    f"{guarded.what} needs the gate {guarded.gate}, {stage} in Kubernetes "
                                    f"{target.kubernetes_version}; {where}, so the API server {consequence} it",
                                    file=obj.file, line=obj.line(path), object=obj.name, path=format_path(path)))
    return findings


# --------------------------------------------------------------------------------------------- fixes

_MEMORY_AS_ATTRIBUTE = re.compile(
    r"""device\.attributes\[\s*(['"])([^'"]+)\1\s*\]\.memory(?:\.quantity)?\s*(>=|>|<=|<|==|!=)\s*"""
    r"""(quantity\(\s*(['"])[^'"]+\5\s*\))""")


def fix_expression(expression: str) -> str:
    """`device.attributes[d].memory[.quantity] OP quantity(q)` -> `device.capacity[d].memory.compareTo(quantity(q))
    OP 0`: memory is a capacity, and quantities compare with compareTo."""
    return _MEMORY_AS_ATTRIBUTE.sub(
        lambda m: f"device.capacity['{m.group(2)}'].memory.compareTo({m.group(4)}) {m.group(3)} 0", expression)


def _original_path(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A path in the object with request fields moved under `exactly`, as written (without `exactly`)."""
    for i in range(len(path) - 2):
        if path[i] == "requests" and isinstance(path[i + 1], int) and path[i + 2] == "exactly":
            return path[:i + 2] + path[i + 3:]
    return path


def _request_fields_moved(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy with v1 request fields moved under `exactly`, or None when none sit on a request."""
    if data.get("kind") == "DeviceClass" or not _uses_exactly(data):
        return None
    moved = copy.deepcopy(dict(data))
    devices, _ = claim_devices(moved)
    changed = False
    for request in devices.get("requests") or []:
        if isinstance(request, dict) and any(k in request for k in REQUEST_FIELDS) and "exactly" not in request:
            request["exactly"] = {k: request.pop(k) for k in REQUEST_FIELDS if k in request}
            changed = True
    return moved if changed else None


def fixed_object(obj: ManifestObject) -> dict[str, Any] | None:
    """The object with what can be fixed mechanically fixed, or None when nothing changed."""
    data = _request_fields_moved(obj.data)
    changed = data is not None
    data = data if data is not None else copy.deepcopy(obj.data)
    spec = data.get("spec") or {}
    selectors: list[Any] = list(spec.get("selectors") or []) if data.get("kind") == "DeviceClass" else []
    if data.get("kind") != "DeviceClass":
        devices, _ = claim_devices(data)
        for request in devices.get("requests") or []:
            if isinstance(request, dict):
                for choice in [request.get("exactly") or request, *(request.get("firstAvailable") or [])]:
                    if isinstance(choice, dict) and isinstance(choice.get("selectors"), list):
                        selectors += choice["selectors"]
    for selector in selectors:
        cel = selector.get("cel") if isinstance(selector, dict) else None
        if not isinstance(cel, dict):
            continue
        if isinstance(cel.get("expression"), str):
            fixed = fix_expression(cel["expression"])
            if fixed != cel["expression"]:
                cel["expression"] = fixed
                changed = True
    return data if changed else None


def severity_counts(findings: list[Finding]) -> dict[str, int]:
    return {level: sum(1 for f in findings if f.severity == level) for level in (ERROR, WARNING)}

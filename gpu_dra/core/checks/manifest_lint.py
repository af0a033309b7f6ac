"""Lint DeviceClass, ResourceClaim and ResourceClaimTemplate manifests offline, as the API server and the
scheduler would judge them, plus the lint rules: strict OpenAPI schema of the target Kubernetes version, CEL compile,
selector lint, and the feature gates of the target platform.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.data import mapping
from gpu_dra.core.dra import k8s_schema, metadata
from gpu_dra.core.dra.api import KINDS, REQUEST_FIELDS, uses_exactly
from gpu_dra.core.dra.cel import CompileError, check_selector
from gpu_dra.core.dra.claims import DeviceClass, ResourceClaim, gate_sites, parse_object
from gpu_dra.core.dra.objects import INT64_MAX
from gpu_dra.core.facts import gates, nvidia
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import ERROR, WARNING, Finding
from gpu_dra.core.yamlsource import Loc, Located, format_path


@dataclass
class ManifestObject:
    file: str
    data: dict[str, Any]
    located: Located
    prefix: Loc  # where the object sits in its document (items[i] of a List)

    @property
    def name(self) -> str:
        meta = mapping(self.data.get("metadata"))
        name, namespace = (str(part) if str(part).isprintable() else repr(part)  # "gpu\n" on one line
                           for part in (meta.get("name", "?"), meta.get("namespace") or ""))
        return f"{self.data.get('kind')}/{namespace + '/' if namespace else ''}{name}"

    @cached_property
    def parsed(self) -> DeviceClass | ResourceClaim | None:
        """The object typed, with the path of each element as written."""
        return parse_object(self.data)

    def line(self, path: Loc) -> int | None:
        """The line of `path`, of its nearest parent, or else of the object's `kind`."""
        return self.located.line(self.prefix + path) or self.located.line(self.prefix + ("kind",))


def objects_in(file: str, documents: list[Located]) -> Iterator[ManifestObject]:
    """DeviceClasses and claims in multi-document YAML or `kind: List` (what `kubectl get -o yaml` prints)."""
    for document in documents:
        data = document.data
        if not isinstance(data, dict):
            continue
        kind = data.get("kind")
        if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in data):
            for index, item in enumerate(data.get("items") or []):
                if isinstance(item, dict) and item.get("kind") in KINDS:
                    yield ManifestObject(file, item, document, ("items", index))
        elif kind in KINDS:
            yield ManifestObject(file, data, document, ())


class SelectorSite(NamedTuple):
    path: Loc  # of the expression, as written
    expression: str
    device_class: str | None  # the class a request's selector runs behind; None for a DeviceClass's own selector


def selector_sites(parsed: DeviceClass | ResourceClaim | None) -> Iterator[SelectorSite]:
    """Every selector of a class or claim, where it was written."""
    if isinstance(parsed, DeviceClass):
        for path, expression in zip(parsed.selector_paths, parsed.selectors, strict=True):
            yield SelectorSite(path, expression, None)
    elif parsed is not None:
        for request in parsed.requests:
            for choice in request.choices:
                for path, expression in zip(choice.selector_paths, choice.selectors, strict=True):
                    yield SelectorSite(path, expression, choice.device_class)


def gates_off(parsed: DeviceClass | ResourceClaim | None, target: Target,
              declared_in: str) -> Iterator[tuple[Loc, str]]:
    """Every field of `parsed` whose gate the target cluster runs off, with what the API server then does, for lint
    and the dra-feature-gates rule alike. `declared_in`: where this caller's user declares the gates a cluster
    enables (lint's --feature-gates, the pack config's featureGates)."""
    for path, guarded in gate_sites(parsed):
        if target.enabled(guarded.gate):
            continue
        current = gates.state(guarded.gate, target.kubernetes_version)
        stage = f"{current.stage} and off" if current else "not present"
        where = ("EKS runs only the upstream defaults (no alpha gates)" if target.platform is Platform.eks
                 else f"the cluster does not enable it ({declared_in})")
        consequence = "silently drops" if guarded is gates.EXTENDED_RESOURCE else "rejects or drops"
        yield path, (f"{guarded.what} needs the gate {guarded.gate}, {stage} in Kubernetes "
                     f"{target.kubernetes_version}; {where}, so the API server {consequence} it")


def _schema_findings(obj: ManifestObject, data: dict[str, Any], target: Target) -> list[Finding]:
    """The strict schema's verdict on `data`: the object, or the object with misplaced request fields moved."""
    try:
        k8s_schema.validate(data, target.kubernetes_version, strict=True)
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


def _misplaced(claim: ResourceClaim) -> Iterator[tuple[Loc, list[str]]]:
    """(path of the request, its fields that belong under `exactly`) for a v1 or v1beta2 claim."""
    if uses_exactly(claim.api_version):
        for request in claim.requests:
            misplaced = [key for key in REQUEST_FIELDS if key in request.fields]
            if misplaced:
                yield request.path, misplaced


def _misplaced_request_fields(obj: ManifestObject) -> list[Finding]:
    claim = obj.parsed
    if not isinstance(claim, ResourceClaim):
        return []
    return [Finding("request-fields-outside-exactly", ERROR,
                    f"{', '.join(misplaced)} belong under `exactly:` in resource.k8s.io/v1 (the v1beta1 shape put them "
                    "on the request)",
                    "move them: requests: [{name: ..., exactly: {deviceClassName: ..., selectors: [...]}}]",
                    file=obj.file, line=obj.line((*path, misplaced[0])), object=obj.name, path=format_path(path))
            for path, misplaced in _misplaced(claim)]


def _semantic_findings(obj: ManifestObject) -> list[Finding]:
    """What the API server's validation rejects beyond the schema (kubernetes/kubernetes
    pkg/apis/resource/validation/validation.go; docs/sources.md#kubernetes-dra-api), for claims and templates that
    passed it, and every object's metadata (ValidateObjectMeta); misplaced request fields are judged as if under
    `exactly`, where they are reported."""
    problems: list[tuple[Loc, str]] = [
        (("metadata", *path), message)
        for path, message in metadata.object_meta_problems(mapping(obj.data.get("metadata")))]
    claim = obj.parsed
    if isinstance(claim, ResourceClaim):
        problems += _claim_problems(claim)
    return [Finding("validation", ERROR, f"rejected by the API server: {message}", file=obj.file, line=obj.line(path),
                    object=obj.name, path=format_path(path)) for path, message in problems]


def _claim_problems(claim: ResourceClaim) -> list[tuple[Loc, str]]:
    exactly_shape = uses_exactly(claim.api_version)
    # The fields that make a request a single choice: `exactly` (or what belongs there), or v1beta1's class name.
    single_fields = {"exactly", *REQUEST_FIELDS} if exactly_shape else {"deviceClassName"}
    problems: list[tuple[Loc, str]] = []
    names: list[str] = []
    subrequests: set[str] = set()
    for request in claim.requests:
        here, name = request.path, request.name
        if problem := metadata.dns_label_problem(name):
            problems.append(((*here, "name"), problem))
        if name in names:
            problems.append(((*here, "name"), f"{name!r}: duplicate request name"))
        names.append(name)
        has_first = "firstAvailable" in request.fields
        if bool(request.fields & single_fields) == has_first:
            field = "`exactly`" if exactly_shape else "`deviceClassName`"
            problems.append((here, f"exactly one of {field} or `firstAvailable` is required"
                                   + (", but multiple fields are set" if has_first else "")))
        for choice in request.choices:
            if choice.subrequest:
                subrequests.add(f"{name}/{choice.subrequest}")
            mode = choice.allocation_mode
            if mode not in ("ExactCount", "All"):
                problems.append(((*choice.path, "allocationMode"), f"Unsupported value: {mode!r}: supported values: "
                                                                   "\"All\", \"ExactCount\""))
            elif mode == "ExactCount" and choice.written_count is not None and choice.written_count <= 0:
                problems.append(((*choice.path, "count"), "must be greater than zero"))
            elif choice.written_count is not None and choice.written_count > INT64_MAX:  # the JSON decoder's refusal
                problems.append(((*choice.path, "count"), f"must be at most {INT64_MAX} (an int64)"))
            elif mode == "All" and choice.written_count:
                problems.append(((*choice.path, "count"), "must not be specified when allocationMode is 'All'"))
    valid_refs = set(names) | subrequests
    for constraint in claim.constraints:
        here = constraint.path
        for i, ref in enumerate(constraint.requests):
            if ref not in valid_refs:
                problems.append(((*here, "requests", i), f"{ref!r}: must be the name of a request in the claim or "
                                                         "the name of a request and a subrequest separated by '/'"))
        fields = [(key, value) for key, value in (("matchAttribute", constraint.match_attribute),
                                                  ("distinctAttribute", constraint.distinct_attribute)) if value]
        if len(fields) != 1:
            problems.append((here, 'exactly one of "matchAttribute" or "distinctAttribute" is required'))
        for key, value in fields:
            if "/" not in str(value):
                problems.append(((*here, key), "a fully qualified name must be a domain and a name separated by a "
                                               "slash"))
    return problems


def lint_object(obj: ManifestObject, target: Target) -> list[Finding]:
    misplaced = _misplaced_request_fields(obj)
    # Misplaced request fields are what the schema would reject first: say it in the user's terms, then check the
    # rest of the object as if they were where they belong.
    moved = _request_fields_moved(obj) if misplaced else None
    structure = _schema_findings(obj, obj.data if moved is None else moved, target)
    if structure:
        return misplaced + structure  # wrong shapes: the checks below would only guess
    findings = misplaced + _semantic_findings(obj)
    consumable, list_types = target.enabled("DRAConsumableCapacity"), target.enabled("DRAListTypeAttributes")
    for path, expression, device_class in selector_sites(obj.parsed):
        where = format_path(path)
        line = obj.line(path)
        try:
            check_selector(expression, consumable_capacity=consumable, list_type_attributes=list_types)
        except CompileError as error:
            if error.kind == "unsupported":
                findings.append(Finding("cel-unsupported", WARNING, error.message, file=obj.file, line=line,
                                        object=obj.name, path=where))
                continue
            fix = None
            if error.kind == "cost":
                fix = ("`!=` between quantities or semvers has an unbounded estimated cost: use "
                       "q.compareTo(quantity('20Gi')) != 0; keep nested loops few (maps hold at most 32 entries)")
            elif re.search(r"no matching overload for '_(>=|>|<=|<)_'.*kubernetes\.Quantity", error.message):
                fix = "quantities have no comparison operators: q.compareTo(quantity('20Gi')) >= 0"
            findings.append(Finding("cel-compile", ERROR, f"the API server rejects this selector: {error.message}", fix,
                                    file=obj.file, line=line, object=obj.name, path=where))
        class_type = nvidia.CHART_CLASS_DEVICE_TYPES.get(device_class or "")
        context = SelectorContext(class_selector=device_class is None,
                                  device_types=(class_type,) if class_type else nvidia.DEVICE_TYPES, target=target)
        rewritten = fix_expression(expression)
        for lint in lint_selector(expression, context):
            fix = rewritten if lint.rule == "capacity-as-attribute" and rewritten != expression else lint.fix
            findings.append(lint.at(fix=fix, file=obj.file, line=line, object=obj.name, path=where))
    for path, message in gates_off(obj.parsed, target, "--feature-gates"):
        findings.append(Finding("feature-gate", ERROR, message, file=obj.file, line=obj.line(path), object=obj.name,
                                path=format_path(path)))
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


def _node(data: Any, path: Loc) -> Any:
    """The value at `path` inside `data`."""
    for key in path:
        data = data[key]
    return data


def _request_fields_moved(obj: ManifestObject) -> dict[str, Any] | None:
    """A copy with v1 request fields moved under `exactly`, or None when none sit on a request without one."""
    claim = obj.parsed
    if not isinstance(claim, ResourceClaim):
        return None
    moved = copy.deepcopy(obj.data)
    changed = False
    for path, misplaced in _misplaced(claim):
        request = _node(moved, path)
        if "exactly" not in request:
            request["exactly"] = {key: request.pop(key) for key in misplaced}
            changed = True
    return moved if changed else None


def fixed_object(obj: ManifestObject) -> dict[str, Any] | None:
    """The object with what can be fixed mechanically fixed, or None when nothing changed."""
    moved = _request_fields_moved(obj)
    data = moved if moved is not None else copy.deepcopy(obj.data)
    changed = moved is not None
    for path, expression, _ in selector_sites(parse_object(data)):
        fixed = fix_expression(expression)
        if fixed != expression:
            _node(data, path[:-1])["expression"] = fixed
            changed = True
    return data if changed else None


def severity_counts(findings: list[Finding]) -> dict[str, int]:
    return {level: sum(1 for f in findings if f.severity == level) for level in (ERROR, WARNING)}

"""Kubernetes' rules for names, label and annotation keys and values, as the API server validates every object's
metadata (k8s.io/apimachinery@v0.34.0 pkg/util/validation/validation.go: IsDNS1123Label, IsDNS1123Subdomain,
IsQualifiedName, IsValidLabelValue; pkg/api/validation/objectmeta.go: ValidateAnnotations and
TotalAnnotationSizeLimitB; pkg/apis/meta/v1/validation/validation.go: ValidateLabels).

Go's `regexp.MatchString("^...$")` matches the whole text; Python's `re.match` with `$` also matches before a final
newline, so every pattern here is applied with `fullmatch` and no anchors: "gpu\\n" is no name. Config, lint and
migrate call these functions, so a value one of them accepts is one the API server accepts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63  # the name part of a label or annotation key
LABEL_VALUE_MAX = 63
TOTAL_ANNOTATION_SIZE = 256 * (1 << 10)  # TotalAnnotationSizeLimitB: the keys' and values' bytes together

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def is_dns_label(value: str) -> bool:
    """RFC 1123 label: namespaces, request names, node group names."""
    return len(value) <= DNS_LABEL_MAX and _DNS_LABEL.fullmatch(value) is not None


def is_dns_subdomain(value: str) -> bool:
    """RFC 1123 subdomain: most object names, DeviceClass names."""
    return len(value) <= DNS_SUBDOMAIN_MAX and _DNS_SUBDOMAIN.fullmatch(value) is not None


def dns_label_problem(value: str) -> str | None:
    if is_dns_label(value):
        return None
    return (f"{value!r} must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or "
            f"digit, at most {DNS_LABEL_MAX} characters")


def dns_subdomain_problem(value: str) -> str | None:
    if is_dns_subdomain(value):
        return None
    return (f"{value!r} must be a DNS subdomain: lowercase letters, digits, '-' and '.', at most {DNS_SUBDOMAIN_MAX} "
            "characters")


def qualified_name_problem(key: str) -> str | None:
    """A label or annotation key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or not is_dns_subdomain(prefix)) or key.count("/") > 1:
        return (f"{key!r} is not a qualified name: its prefix before '/' must be a DNS subdomain (lowercase letters, "
                "digits, '-' and '.')")
    if not name or len(name) > QUALIFIED_NAME_MAX or _QUALIFIED_NAME.fullmatch(name) is None:
        return (f"{key!r} is not a qualified name: the name must be 1 to {QUALIFIED_NAME_MAX} letters, digits, '-', "
                "'_' or '.', starting and ending with a letter or digit")
    return None


def label_value_problem(key: str, value: str) -> str | None:
    if len(value) <= LABEL_VALUE_MAX and _LABEL_VALUE.fullmatch(value) is not None:
        return None
    return (f"{key}: {value!r} is not a label value (at most {LABEL_VALUE_MAX} letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit)")


def label_problems(labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """(key, message) for each label the API server refuses."""
    found = []
    for key, value in labels.items():
        problem = qualified_name_problem(key) or label_value_problem(key, value)
        if problem:
            found.append((key, problem))
    return found


def annotation_problems(annotations: Mapping[str, str]) -> list[tuple[str, str]]:
    """(key, message) for each annotation key the API server refuses, and ("", message) when all of them together
    exceed 256 KiB. Keys are checked lowercased, as ValidateAnnotations does."""
    found = [(key, problem) for key in annotations if (problem := qualified_name_problem(key.lower()))]
    total = sum(len(key.encode()) + len(value.encode()) for key, value in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE:
        found.append(("", f"annotations take {total:,} bytes in all; the API server allows at most "
                          f"{TOTAL_ANNOTATION_SIZE:,} (256 KiB)"))
    return found


def object_meta_problems(meta: Mapping[str, object], named: bool = True) -> list[tuple[tuple[str, ...], str]]:
    """(key path below metadata, message) for what ValidateObjectMeta refuses: a name that is no DNS subdomain (most
    kinds'; `named=False` for a pod template, which has none), a namespace that is no DNS label, and the labels and
    annotations. Values of the wrong type are the schema's to report."""
    found: list[tuple[tuple[str, ...], str]] = []
    name, namespace = meta.get("name"), meta.get("namespace")
    if named and isinstance(name, str) and (problem := dns_subdomain_problem(name)):
        found.append((("name",), problem))
    if isinstance(namespace, str) and (problem := dns_label_problem(namespace)):
        found.append((("namespace",), problem))
    for field, check in (("labels", label_problems), ("annotations", annotation_problems)):
        values = meta.get(field)
        if isinstance(values, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            found += [((field, key) if key else (field,), problem) for key, problem in check(values)]
    return found

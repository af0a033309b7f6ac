"""Which nodes a DaemonSet's pods can land on: nodeSelector, required node affinity and taints vs tolerations.

Used to prove that NVIDIA's device plugin and the DRA kubelet plugin never share a node (both would advertise every
GPU: silent oversubscription), from the node groups' labels and taints and the charts' effective values.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any


def helm_merge(defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's value coalescing: maps merge key by key, anything else (lists included) is replaced."""
    merged = copy.deepcopy(dict(defaults))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _expression_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise ValueError(f"unsupported node selector operator {operator!r}")


def _tolerated(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint["effect"]:
            continue
        if toleration.get("operator", "Equal") == "Exists":
            if not toleration.get("key") or toleration["key"] == taint["key"]:
                return True
        elif toleration.get("key") == taint["key"] and toleration.get("value") == taint.get("value"):
            return True
    return False


def schedules_on(pod: Mapping[str, Any], labels: Mapping[str, str], taints: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a pod spec's `nodeSelector`, `affinity` and `tolerations` admit a node with these labels and taints."""
    if any(labels.get(k) != v for k, v in (pod.get("nodeSelector") or {}).items()):
        return False
    required = ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        terms = required.get("nodeSelectorTerms") or []
        if not any(all(_expression_holds(e, labels) for e in term.get("matchExpressions") or []) for term in terms):
            return False
    blocking = [t for t in taints if t["effect"] in ("NoSchedule", "NoExecute")]
    return all(_tolerated(t, list(pod.get("tolerations") or [])) for t in blocking)

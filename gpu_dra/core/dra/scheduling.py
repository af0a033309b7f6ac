"""Which nodes a DaemonSet's pods can land on: nodeSelector, required node affinity and taints vs tolerations.

Used to prove that NVIDIA's device plugin and the DRA kubelet plugin never share a node (both would advertise every
GPU: silent oversubscription), from the node groups' labels and taints and the charts' effective values.
Semantics are the scheduler's: kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/
nodeaffinity/nodeaffinity.go (terms ORed, an empty or unparsable term matches nothing), k8s.io/apimachinery
pkg/labels/selector.go (`Requirement.Matches`) and k8s.io/api core/v1 toleration.go (`ToleratesTaint`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard


def _integer(text: Any) -> int | None:
    """A value as Go's strconv.ParseInt(text, 10, 64) reads it, or None where that fails."""
    if not isinstance(text, str) or not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -2**63 <= value < 2**63 else None


def _expression_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool | None:
    """One matchExpressions requirement against node labels, as `labels.Requirement.Matches`; None where
    `labels.NewRequirement` refuses it (values missing or extra, a Gt/Lt value that is not one integer, an unknown
    operator): the scheduler then treats the whole term as matching nothing."""
    key, operator = str(expression.get("key", "")), expression.get("operator")
    values = list(expression.get("values") or [])
    if not key:  # not a valid label key
        return None
    if operator in ("In", "NotIn"):
        if not values:
            return None
        if operator == "In":
            return key in labels and labels[key] in values
        return key not in labels or labels[key] not in values  # a node without the label is "not in"
    if operator in ("Exists", "DoesNotExist"):
        if values:
            return None
        return (key in labels) == (operator == "Exists")
    if operator in ("Gt", "Lt"):
        bound = _integer(values[0]) if len(values) == 1 else None
        if bound is None:
            return None
        value = _integer(labels.get(key))  # a missing or non-integer label value does not match
        if value is None:
            return False
        return value > bound if operator == "Gt" else value < bound
    return None


def _term_admits(term: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A nodeSelectorTerm: its requirements ANDed. An empty term matches nothing. matchFields (node names, unknown
    for a node group's nodes) are not evaluated: such a term admits the nodes as far as its matchExpressions do."""
    expressions = term.get("matchExpressions") or []
    if not expressions and not term.get("matchFields"):
        return False
    if not _is_list(expressions) or not all(isinstance(e, Mapping) for e in expressions):
        return False  # not a requirement the API server would have stored: as one that does not parse
    results = [_expression_holds(e, labels) for e in expressions]
    return None not in results and all(results)


def _tolerated(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """`ToleratesTaint`: an empty effect matches every effect and an empty key every key; operator Equal (the
    default) compares values, Exists matches any value; any other operator tolerates nothing."""
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("key") and toleration["key"] != taint.get("key"):
            continue
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" or (operator == "Equal"
                                    and (toleration.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def _is_list(value: Any) -> TypeGuard[Sequence[Any]]:
    """A YAML list, or the policy pack's lazy view of one (a Sequence, not a list)."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _field(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def schedules_on(pod: Mapping[str, Any], labels: Mapping[str, str], taints: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a pod spec's `nodeSelector`, `affinity` and `tolerations` admit a node with these labels and taints."""
    return why_not_on(pod, labels, taints) is None


def why_not_on(pod: Mapping[str, Any], labels: Mapping[str, str],
               taints: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a pod spec may not go to a node with these labels and taints, in the scheduler's order of filters
    (NodeAffinity, then TaintToleration), or None where it may. Fields of the wrong type (a live cluster's objects
    are not schema-checked here) count as absent."""
    selector = pod.get("nodeSelector")
    for key, value in (selector if isinstance(selector, Mapping) else {}).items():
        if labels.get(key) != value:
            have = f"it has {key}={labels[key]}" if key in labels else "it has no such label"
            return f"the pod's nodeSelector wants {key}={value}; {have}"
    required = _field(_field(pod, "affinity"), "nodeAffinity").get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    terms = [t for t in terms if isinstance(t, Mapping)] if _is_list(terms) else []
    if isinstance(required, Mapping) and not any(_term_admits(term, labels) for term in terms):
        return "the pod's required node affinity does not match its labels"
    listed = pod.get("tolerations")
    tolerations = [t for t in listed if isinstance(t, Mapping)] if _is_list(listed) else []
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerated(taint, tolerations):
            value = f"={taint['value']}" if taint.get("value") else ""
            return f"the pod does not tolerate its taint {taint.get('key')}{value}:{taint.get('effect')}"
    return None

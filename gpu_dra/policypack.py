"""The CrossGuard shell: each rule of `gpu_dra.core.policy` as a pulumi_policy policy of its kind.

A resource rule becomes a `ResourceValidationPolicy` (it judges a resource's inputs before the resource is created
or changed, in preview and in up); a stack rule becomes a `StackValidationPolicy` (it judges every resource's
outputs after the preview or update). The engine's properties reach the rules through a read-only view that hands
over `UNKNOWN` for a value not known yet instead of raising: pulumi_policy raises UnknownValueError on the first
unknown read, and turns it into one "can't run policy ... during preview" for the whole policy (pulumi_policy 1.21
policy.py Analyze/AnalyzeStack), so a rule would stop at a value it does not even need.

A check a rule skips for an unknown value is reported with `args.not_applicable(reason)` after its violations, once
per resource (resource policies) or per stack (stack policies), naming the values. `gpu-dra check` runs this pack
through pulumi_policy's own analyzer service and collects the findings with `collecting()`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from gpu_dra.core import policy
from gpu_dra.core.data import UNKNOWN, plain
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.findings import NOT_JUDGED, Finding

CONTEXT_SCHEMA = PolicyConfigSchema(properties={
    "kubernetesVersion": {"type": "string"},
    "platform": {"type": "string", "enum": [platform.value for platform in Platform]},
    "featureGates": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "environment": {"type": "string", "enum": ["dev", "staging", "prod"]},
    "chart": {"type": "string"},
    "chartVersion": {"type": "string"},
    "driverGates": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "chartValues": {"type": "object", "description": "The DRA driver chart values the rules judge"},
    "deviceClasses": {"type": "object", "description": "The stack's DeviceClasses: name -> CEL selectors",
                      "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    "today": {"type": "string", "description": "ISO date, for support-window checks (default: today)"},
    "nodePools": {"type": "array", "items": {"type": "object"},
                  "description": "An existing cluster's GPU node pools: name, instanceType (or gpuModel and gpus), "
                                 "maxNodes, dra, labels, taints"},
    "karpenter": {"type": "object", "description": "The stack's Karpenter: version, nodePools (name, instanceTypes, "
                                                   "maxNodes, dra)"},
    "autoMode": {"type": "object", "description": "The stack's EKS Auto Mode GPU NodePools: nodePools (name, "
                                                  "instanceTypes, maxNodes)"},
    "legacyWorkloads": {"type": "array", "items": {"type": "object"},
                        "description": "The workloads team files name that need the device plugin: workload, team, "
                                       "teamFile, line, file, pods, gpus, other, nodeSelector, affinity, "
                                       "tolerations"},
    "adminNamespaces": {"type": "array", "items": {"type": "string"},
                        "description": "The namespaces of the teams the stack grants admin access"},
    "platformKeys": {"type": "array", "items": {"type": "object"},
                     "description": "Keys only the platform may set, found in team files: team, teamFile, line, key"},
    "queuedTemplates": {"type": "array", "items": {"type": "string"},
                        "description": "The claim templates (namespace/name) queued in Kueue whose requests have "
                                       "selectors"},
    "mappingChange": {"type": "object", "description": "The classes Kueue's configuration maps that the change adds "
                                                       "and removes since its base: added, removed"},
    "replacedTemplates": {"type": "array", "items": {"type": "object"},
                          "description": "The queued teams' claim templates changed under their names since the base "
                                         "of the change: team, template, teamFile, line"},
    "upgradeFindings": {"type": "array", "items": {"type": "object"},
                        "description": "What moving the stack's versions since the base of the change does, as "
                                       "`gpu-dra check --base` judges it: change, command, rule, severity, message, "
                                       "fix, file, line, object"},
})
LEVELS = {policy.ADVISORY: EnforcementLevel.ADVISORY, policy.MANDATORY: EnforcementLevel.MANDATORY,
          "disabled": EnforcementLevel.DISABLED}


class _Props(Mapping[str, Any]):
    """A resource's properties as the engine sent them, read lazily; an unknown value reads as UNKNOWN."""

    def __init__(self, proxy: Mapping[str, Any]):
        self._proxy = proxy

    def __getitem__(self, key: str) -> Any:
        try:
            return _view(self._proxy[key])
        except UnknownValueError:
            return UNKNOWN

    def __iter__(self) -> Iterator[str]:
        return iter(self._proxy)

    def __len__(self) -> int:
        return len(self._proxy)


class _Items(Sequence[Any]):
    def __init__(self, proxy: Sequence[Any]):
        self._proxy = proxy

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        try:
            return _view(self._proxy[index])
        except UnknownValueError:
            return UNKNOWN

    def __len__(self) -> int:
        return len(self._proxy)


def _view(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _Props(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return _Items(value)
    return value


@dataclass
class _Session:
    """One offline run of the pack over one stack (`collecting`): the findings, and what every policy of the run
    reads alike. The analyzer hands each policy its own copy of a resource's properties; within one run they are
    the same (the inputs of one Analyze, the outputs of one AnalyzeStack), so a resource is typed once for all
    rules and each rule's config read once, not once per resource."""

    found: list[Finding] = field(default_factory=list)
    resources: dict[tuple[str, str], policy.Resource] = field(default_factory=dict)  # (phase, URN) -> resource
    contexts: dict[str, policy.Context] = field(default_factory=dict)  # rule -> its config section's facts


_collected: ContextVar[_Session | None] = ContextVar("gpu_dra_collected", default=None)


def _resource(phase: str, type_: str, name: str, urn: str, props: Mapping[str, Any], opts: Any) -> policy.Resource:
    session = _collected.get()
    if session is not None and (phase, urn) in session.resources:
        return session.resources[(phase, urn)]
    resource = policy.Resource(type_, name, urn, _Props(props), bool(getattr(opts, "protect", False)),
                               str(getattr(opts, "parent", "") or ""))
    if session is not None:
        session.resources[(phase, urn)] = resource
    return resource


def _stack_resources(resources: list[PolicyResource]) -> list[policy.Resource]:
    return [_resource("outputs", r.resource_type, r.name, r.urn, r.props, r.opts) for r in resources]


@contextlib.contextmanager
def collecting() -> Iterator[list[Finding]]:
    """Every finding the pack's policies make while inside, violations and skipped checks, as the rules made them
    (`gpu-dra check` places them on file lines; the analyzer's response holds only their text). Inside, the
    policies judge one stack: one Configure, each resource analyzed once, one AnalyzeStack."""
    session = _Session()
    token = _collected.set(session)
    try:
        yield session.found
    finally:
        _collected.reset(token)


def violation_message(finding: Finding) -> str:
    """The text `pulumi preview` shows beside the resource: where in its props, which check of the rule (if it wraps
    others), what is wrong, what to do."""
    text = f"[{finding.check}] {finding.message}" if finding.check else finding.message
    text = f"{finding.path}: {text}" if finding.path else text
    return f"{text.rstrip('.')}. Fix: {finding.fix}" if finding.fix else text


def _skipped_reason(skipped: list[Finding]) -> str:
    return "; ".join(f"{f.object.rsplit('::', 1)[-1]}: {f.message}" if f.object else f.message for f in skipped)


def _report(found: list[Finding], report: ReportViolation, not_applicable: Callable[[str], None]) -> None:
    session = _collected.get()
    if session is not None:
        session.found.extend(found)
    for finding in found:
        if finding.severity != NOT_JUDGED:
            report(violation_message(finding), finding.object or None)
    skipped = [f for f in found if f.severity == NOT_JUDGED]
    if skipped:
        not_applicable(_skipped_reason(skipped))  # raises: after the violations, which are already reported


def _context(rule: policy.Rule, config: Mapping[str, Any] | None) -> policy.Context:
    session = _collected.get()
    if session is not None and rule.name in session.contexts:
        return session.contexts[rule.name]
    context = policy.context_from(plain(config or {}))
    if session is not None:
        session.contexts[rule.name] = context
    return context


def _resource_validator(rule: policy.Rule) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        resource = _resource("inputs", args.resource_type, args.name, args.urn, args.props, args.opts)
        _report(rule.check(resource, _context(rule, args.get_config())), report, args.not_applicable)
    return validate


def _stack_validator(rule: policy.Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        found = rule.check(_stack_resources(args.resources), _context(rule, args.get_config()))
        _report(found, report, args.not_applicable)
    return validate


def policies(environment: str = "prod") -> list[Policy]:
    """One policy per rule; static enforcement is the environment's default (pack config may override it)."""
    out: list[Policy] = []
    for rule in policy.RULES:
        level = LEVELS[policy.default_enforcement(rule, environment)]
        if rule.stack:
            out.append(StackValidationPolicy(name=rule.name, description=rule.description,
                                             validate=_stack_validator(rule), enforcement_level=level,
                                             config_schema=CONTEXT_SCHEMA))
        else:
            out.append(ResourceValidationPolicy(name=rule.name, description=rule.description,
                                                validate=_resource_validator(rule), enforcement_level=level,
                                                config_schema=CONTEXT_SCHEMA))
    return out

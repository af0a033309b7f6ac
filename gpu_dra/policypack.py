"""The CrossGuard shell: every rule of `gpu_dra.core.policy` as a pulumi_policy StackValidationPolicy.

Stack policies, because every rule's context (Kubernetes version, platform, environment, chart) comes from the
stack's own resources. Constructing these objects starts nothing; only `PolicyPack(...)` in policies/__main__.py
does. `gpu-dra check` runs the same `findings` offline and renders them itself (file and line, JSON, SARIF).
"""

from __future__ import annotations

from collections.abc import Callable

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from gpu_dra.core import policy
from gpu_dra.core.data import plain
from gpu_dra.core.findings import Finding

CONTEXT_SCHEMA = PolicyConfigSchema(properties={
    "kubernetesVersion": {"type": "string", "description": "Used when no EKS cluster resource says it"},
    "platform": {"type": "string", "enum": ["eks", "existing"]},
    "featureGates": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "environment": {"type": "string", "enum": ["dev", "staging", "prod"]},
    "chart": {"type": "string"},
    "chartVersion": {"type": "string"},
    "today": {"type": "string", "description": "ISO date, for support-window checks (default: today)"},
})
LEVELS = {policy.ADVISORY: EnforcementLevel.ADVISORY, policy.MANDATORY: EnforcementLevel.MANDATORY,
          "disabled": EnforcementLevel.DISABLED}


def resources_of(resources: list[PolicyResource]) -> list[policy.Resource]:
    return [policy.Resource(r.resource_type, r.name, r.urn, plain(r.props), bool(getattr(r.opts, "protect", False)))
            for r in resources]


class _LastStack:
    """The resources of the stack last converted, so that each is converted (and its claim parsed) once per stack,
    not once per rule: `gpu-dra check` hands every rule's args the same list. The engine builds a fresh list for each
    policy (pulumi_policy's AnalyzeStack), so there each policy converts its own. The list is held, not keyed by
    id(): while it is compared against it cannot be freed and its id reused."""

    def __init__(self) -> None:
        self._source: list[PolicyResource] | None = None
        self._converted: list[policy.Resource] = []

    def resources(self, args: StackValidationArgs) -> list[policy.Resource]:
        if args.resources is not self._source:
            self._source, self._converted = args.resources, resources_of(args.resources)
        return self._converted


_last_stack = _LastStack()


def findings(rule: policy.Rule, args: StackValidationArgs) -> list[Finding]:
    """What the rule finds in the stack the engine hands over, with the policy's config."""
    resources = _last_stack.resources(args)
    return rule.run(resources, policy.context_from(resources, plain(args.get_config() or {})))


def violation_message(finding: Finding) -> str:
    """The text `pulumi preview` shows beside the resource: where in its props, which check of the rule (if it wraps
    others), what is wrong, what to do."""
    text = f"[{finding.check}] {finding.message}" if finding.check else finding.message
    text = f"{finding.path}: {text}" if finding.path else text
    return f"{text.rstrip('.')}. Fix: {finding.fix}" if finding.fix else text


def _validator(rule: policy.Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for finding in findings(rule, args):
            report(violation_message(finding), finding.object or None)
    return validate


def policies(environment: str = "dev") -> list[StackValidationPolicy]:
    """One policy per rule; static enforcement is the environment's default (pack config may override it)."""
    return [StackValidationPolicy(name=rule.name, description=rule.description, validate=_validator(rule),
                                  enforcement_level=LEVELS[policy.default_enforcement(rule, environment)],
                                  config_schema=CONTEXT_SCHEMA)
            for rule in policy.RULES]

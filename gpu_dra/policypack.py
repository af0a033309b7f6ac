"""The CrossGuard shell: every rule of `gpu_dra.core.policy` as a pulumi_policy StackValidationPolicy.

Stack policies, because every rule's context (Kubernetes version, platform, environment, chart) comes from the
stack's own resources. Constructing these objects starts nothing; only `PolicyPack(...)` in policies/__main__.py
does. `gpu-dra check` runs the very same objects offline.
"""

from __future__ import annotations

from collections.abc import Callable

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from gpu_dra.core import policy
from gpu_dra.core.data import plain

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


def resources_of(args: StackValidationArgs) -> list[policy.Resource]:
    return [policy.Resource(r.resource_type, r.name, r.urn, plain(r.props), bool(getattr(r.opts, "protect", False)))
            for r in args.resources]


def _validator(rule: policy.Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = resources_of(args)
        context = policy.context_from(resources, plain(args.get_config() or {}))
        if rule.stack:
            for message, urn in rule.check(resources, context):
                report(message, urn or None)
        else:
            for resource in resources:
                for message in rule.check(resource, context):
                    report(message, resource.urn)
    return validate


def policies(environment: str = "dev") -> list[StackValidationPolicy]:
    """One policy per rule; static enforcement is the environment's default (pack config may override it)."""
    return [StackValidationPolicy(name=rule.name, description=rule.description, validate=_validator(rule),
                                  enforcement_level=LEVELS[policy.default_enforcement(rule, environment)],
                                  config_schema=CONTEXT_SCHEMA)
            for rule in policy.RULES]

"""`gpu-dra check`: the policy pack offline. Runs the program under mocks and passes every resource through the
same CrossGuard policy objects `pulumi preview --policy-pack policies` uses; SARIF points at the stack or team file
line that caused each violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions, StackValidationArgs

from gpu_dra.core import policy
from gpu_dra.core.config.loader import build_stack, stack_file, stack_values, team_file
from gpu_dra.core.config.models import Platform, Stack
from gpu_dra.core.yamlsource import Located, read_yaml
from gpu_dra.policypack import policies

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Finding:
    """A violation and the stack or team file line it traces back to."""

    stack: str
    violation: policy.Violation
    file: str
    line: int


def pack_config(stack: Stack) -> dict[str, Any]:
    """Per-policy config for `--policy-pack-config`: the stack's context and each rule's enforcement."""
    config = stack.config
    context: dict[str, Any] = {
        "kubernetesVersion": config.cluster.kubernetes_version,
        "platform": config.cluster.platform.value,
        "environment": config.environment.value,
        "chart": config.dra_driver.chart.value,
        "chartVersion": config.dra_driver.version,
    }
    if config.cluster.platform is Platform.existing and config.cluster.feature_gates:
        context["featureGates"] = dict(config.cluster.feature_gates)
    return {rule.name: {"enforcementLevel": policy.default_enforcement(rule, config.environment.value), **context}
            for rule in policy.RULES}


def _policy_resources(run: Any) -> list[PolicyResource]:
    """The mock run's registrations as the engine hands resources to a stack policy."""
    return [PolicyResource(r.type, r.inputs, r.urn, r.name,
                           PolicyResourceOptions(r.protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [],
                                                 r.parent or None),
                           None, None, [], {}) for r in run.resources]


def check_stack(root: Path, name: str, extra_config: dict[str, Any] | None = None) -> list[Finding]:
    from gpu_dra.cli.offline import run_program

    values, located = stack_values(root, name)
    stack = build_stack(root, name, values, located)
    run = run_program(root, name, values, stack)
    resources = _policy_resources(run)
    config = pack_config(stack)
    for rule_name, overrides in (extra_config or {}).items():
        config.setdefault(rule_name, {}).update(overrides)
    violations = []
    for pack_policy in policies(stack.config.environment.value):
        rule = policy.RULES_BY_NAME[pack_policy.name]
        rule_config = config.get(rule.name, {})
        level = policy.enforcement(rule, stack.config.environment.value, config)
        if level == "disabled":
            continue
        reported: list[tuple[str, str | None]] = []

        def report(message: str, urn: str | None = None, sink: list[tuple[str, str | None]] = reported) -> None:
            sink.append((message, urn))
        pack_policy.validate(StackValidationArgs(resources, rule_config), report)
        violations += [policy.Violation(rule.name, level, urn or "", message) for message, urn in reported]
    locator = _Locator(root, stack, located)
    return [Finding(name, v, *locator.where(v.resource)) for v in violations]


class _Locator:
    """Map a resource URN back to the stack or team file line that declared it."""

    def __init__(self, root: Path, stack: Stack, located: Located):
        self.root = root
        self.stack = stack
        self.stack_file = str(stack_file(root, stack.name).relative_to(root))
        self.located = located
        self.teams: dict[str, tuple[str, Located]] = {}
        for team in stack.teams:
            path = team_file(root, team.name)
            self.teams[team.name] = (str(path.relative_to(root)), read_yaml(path, str(path)))

    def _stack_line(self, key: str, *loc: str | int) -> tuple[str, int]:
        line = self.located.line(("config", f"gpu-dra:{key}", *loc)) or self.located.line(("config",)) or 1
        return self.stack_file, line

    def where(self, urn: str) -> tuple[str, int]:
        if not urn:
            return self._stack_line("environment")
        type_, name = urn.split("::")[-2].split("$")[-1], urn.split("::")[-1]
        config = self.stack.config
        if type_.endswith(":ResourceClaimTemplate") and "." in name:
            team, template = name.split(".", 1)
            if team in self.teams:
                file, located = self.teams[team]
                index = next((i for i, t in enumerate(self._team(team).claim_templates) if t.name == template), None)
                return file, located.line(("claimTemplates", index) if index is not None else ()) or 1
        for suffix, key in (("-namespace", "namespace"), ("-quota", "quota")):
            team = name.removesuffix(suffix)
            if name.endswith(suffix) and team in self.teams:
                file, located = self.teams[team]
                return file, located.line((key,)) or 1
        if type_.endswith(":DeviceClass"):
            names = [c.name for c in config.device_classes]
            class_name = name.removeprefix("deviceclass-")
            if class_name in names:
                return self._stack_line("deviceClasses", names.index(class_name))
        groups = [f"{config.cluster.name}-{g.name}" for g in config.node_groups]
        if name in groups:
            return self._stack_line("nodeGroups", groups.index(name))
        if type_ == "kubernetes:helm.sh/v4:Chart":
            return self._stack_line("draDriver")
        return self._stack_line("cluster")

    def _team(self, name: str) -> Any:
        return next(t for t in self.stack.teams if t.name == name)


def as_json(stacks: list[str], found: list[Finding]) -> dict[str, Any]:
    return {"stacks": [{"stack": stack, "violations": [
        {"policy": f.violation.policy, "enforcement": f.violation.enforcement, "resource": f.violation.resource,
         "message": f.violation.message, "file": f.file, "line": f.line}
        for f in found if f.stack == stack]} for stack in stacks]}


def as_sarif(found: list[Finding], version: str) -> dict[str, Any]:
    rules = [{"id": rule.name, "shortDescription": {"text": rule.description},
              "defaultConfiguration": {"level": "error" if rule.everywhere else "warning"}} for rule in policy.RULES]
    results = []
    for item in found:
        violation = item.violation
        results.append({
            "ruleId": violation.policy,
            "level": "error" if violation.enforcement == policy.MANDATORY else "warning",
            "message": {"text": f"[{item.stack}] {violation.message}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": item.file},
                                                "region": {"startLine": item.line}}}],
            "properties": {"stack": item.stack, "resource": violation.resource},
        })
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "gpu-dra", "version": version, "rules": rules}},
        "results": results}]}


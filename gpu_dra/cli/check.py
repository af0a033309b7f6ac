"""`gpu-dra check`: the policy pack offline. Runs the program under mocks and passes every resource to the rules as
`pulumi preview --policy-pack policies` does (`gpu_dra.policypack.findings`, with each policy's config); each
finding is placed on the stack or team file line that caused it, for the text, JSON and SARIF outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions, StackValidationArgs

from gpu_dra.core import policy
from gpu_dra.core.config.loader import build_stack, stack_file, stack_values, team_file
from gpu_dra.core.config.models import Platform, Stack
from gpu_dra.core.findings import Finding
from gpu_dra.core.render import names
from gpu_dra.core.yamlsource import Located, read_yaml
from gpu_dra.policypack import findings, violation_message

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Verdict:
    """A finding of one stack's check (with `file` and `line` set) and how it is enforced there.

    Stack and enforcement are facts of the run, not of the rule, so they sit beside the Finding rather than in it.
    """

    stack: str
    enforcement: str  # policy.MANDATORY or policy.ADVISORY
    finding: Finding


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


def check_stack(root: Path, name: str, extra_config: dict[str, Any] | None = None) -> list[Verdict]:
    from gpu_dra.cli.offline import run_program

    values, located = stack_values(root, name)
    stack = build_stack(root, name, values, located)
    run = run_program(root, name, values, stack)
    resources = _policy_resources(run)
    config = pack_config(stack)
    for rule_name, overrides in (extra_config or {}).items():
        config.setdefault(rule_name, {}).update(overrides)
    locator = _Locator(root, stack, located)
    verdicts = []
    for rule in policy.RULES:
        level = policy.enforcement(rule, stack.config.environment.value, config)
        if level == "disabled":
            continue
        for finding in findings(rule, StackValidationArgs(resources, config.get(rule.name, {}))):
            file, line = locator.where(finding)
            verdicts.append(Verdict(name, level, finding.at(file=file, line=line)))
    return verdicts


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

    def where(self, finding: Finding) -> tuple[str, int]:
        urn = finding.object
        if not urn:
            return self._stack_line("environment")
        type_, name = urn.split("::")[-2].split("$")[-1], urn.split("::")[-1]
        config = self.stack.config
        classes = [c.name for c in config.device_classes]
        groups = [g.name for g in config.node_groups]
        declared = names.declared_by(type_, name, set(self.teams), set(classes), config.cluster.name, set(groups))
        if declared is not None and declared.team:
            file, located = self.teams[declared.team]
            if declared.kind == "template":
                index = next((i for i, t in enumerate(self._team(declared.team).claim_templates)
                              if t.name == declared.name), None)
                return file, located.line(("claimTemplates", index) if index is not None else ()) or 1
            return file, located.line((declared.kind,)) or 1
        if declared is not None and declared.kind == "device-class":
            return self._stack_line("deviceClasses", classes.index(declared.name))
        if declared is not None and declared.kind == "node-group":
            return self._stack_line("nodeGroups", groups.index(declared.name))
        if type_ == "kubernetes:helm.sh/v4:Chart":
            return self._driver_line(finding.path)
        return self._stack_line("cluster")

    def _driver_line(self, path: str) -> tuple[str, int]:
        """The draDriver key a chart finding's path names (its version or a feature gate), else draDriver."""
        gates = "values.featureGates."
        loc = (("version",) if path == "version" else ("featureGates", path.removeprefix(gates))
               if path.startswith(gates) else None)
        line = self.located.line(("config", "gpu-dra:draDriver", *loc)) if loc else None
        return (self.stack_file, line) if line else self._stack_line("draDriver")

    def _team(self, name: str) -> Any:
        return next(t for t in self.stack.teams if t.name == name)


def as_json(stacks: list[str], found: list[Verdict]) -> dict[str, Any]:
    return {"stacks": [{"stack": stack, "violations": [
        {"policy": v.finding.rule, "check": v.finding.check, "enforcement": v.enforcement,
         "resource": v.finding.object, "path": v.finding.path, "message": v.finding.message, "fix": v.finding.fix,
         "file": v.finding.file, "line": v.finding.line}
        for v in found if v.stack == stack]} for stack in stacks]}


def as_sarif(found: list[Verdict], version: str) -> dict[str, Any]:
    rules = [{"id": rule.name, "shortDescription": {"text": rule.description},
              "defaultConfiguration": {"level": "error" if rule.everywhere else "warning"}} for rule in policy.RULES]
    results = []
    for verdict in found:
        finding = verdict.finding
        results.append({
            "ruleId": finding.rule,
            "level": "error" if verdict.enforcement == policy.MANDATORY else "warning",
            "message": {"text": f"[{verdict.stack}] {violation_message(finding)}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": finding.file},
                                                "region": {"startLine": finding.line}}}],
            "properties": {"stack": verdict.stack, "resource": finding.object, "check": finding.check},
        })
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "gpu-dra", "version": version, "rules": rules}},
        "results": results}]}


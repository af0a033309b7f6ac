"""The policy pack's rules as plain functions, one module per domain: resources (as the engine sends them) and the
pack config in, findings out. `gpu_dra.policypack` wraps them in CrossGuard policies; `gpu-dra check` runs that pack
through pulumi-policy's own analyzer service offline.

Two kinds of rule, as CrossGuard runs them:
- a **resource** rule judges one resource's own configuration: its inputs, before it is created or changed, in
  preview and in up (Analyze). Stack facts no resource carries come from the pack config (`Context`);
- a **stack** rule needs several resources together (node groups with claims, namespaces with quotas): their outputs,
  after the preview or update (AnalyzeStack).

Every rule returns `list[Finding]` (gpu_dra.core.findings), filled the same way by all of them:
- `rule` is the policy id (`Rule.name`); `severity` is `error` for a violation (whether it blocks, mandatory, or only
  warns, advisory, is the pack's and `gpu-dra check`'s business: `enforcement`) or `not-judged` for a check skipped
  because a value it needs is unknown in this preview;
- `object` is the URN of the resource at fault ("" only where no resource is); `path` is where inside its props, as
  `yamlsource.format_path` writes it, "" where no prop is at fault; `fix` says what to do;
- dra-cel-lint wraps the selector lint rules: the inner rule's id is `check`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.eks import eks_hardening, kubernetes_version_supported
from gpu_dra.core.policy.features import dra_feature_gates, no_alpha_in_production, nvidia_driver_gates
from gpu_dra.core.policy.migration import legacy_workloads_placed
from gpu_dra.core.policy.namespaces import team_namespace_kept
from gpu_dra.core.policy.platform import (
    admin_access_restricted,
    dra_driver_chart_pinned,
    dra_group_has_capacity,
    extended_resource_unique,
    no_device_plugin_on_dra_nodes,
    team_file_platform_keys,
    team_quota_required,
)
from gpu_dra.core.policy.provisioning import dra_claim_provisionable
from gpu_dra.core.policy.queues import (
    kueue_devices_exist,
    kueue_mappings_changed,
    kueue_template_replaced,
    kueue_workloads_admissible,
)
from gpu_dra.core.policy.resources import Context, Resource, context_from
from gpu_dra.core.policy.selectors import (
    dra_cel_compiles,
    dra_cel_lint,
    dra_claim_satisfiable,
    dra_device_class_exists,
    dra_mig_class_servable,
    dra_selector_safe_on_fleet,
)
from gpu_dra.core.policy.upgrades import upgrade_reported, upgrade_safe

ADVISORY, MANDATORY = "advisory", "mandatory"


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    check: Callable[..., list[Finding]]
    stack: bool  # checks the stack's resources together (outputs), else each resource on its own (inputs)
    everywhere: bool = False  # mandatory in every environment (the API server would reject or drop it)
    always_advisory: bool = False


RULES = (
    Rule("dra-cel-compiles", "Every DRA selector compiles within the API server's limits", dra_cel_compiles, False,
         everywhere=True),
    Rule("dra-cel-lint", "DRA selectors avoid what compiles but never matches or aborts claims", dra_cel_lint, False),
    Rule("dra-device-class-exists", "Every request's device class is declared by the stack or the chart",
         dra_device_class_exists, False, everywhere=True),
    Rule("dra-claim-satisfiable", "Each claim template can be allocated on some GPU node group of the stack",
         dra_claim_satisfiable, True),
    Rule("dra-claim-provisionable", "A claim template that fits only nodes Karpenter would launch is one Karpenter "
                                    "would launch a node for, judged from its release's DRA metadata",
         dra_claim_provisionable, True),
    Rule("dra-selector-safe-on-fleet", "No selector raises a CEL runtime error on the stack's devices",
         dra_selector_safe_on_fleet, True),
    Rule("dra-mig-class-servable", "A DeviceClass for MIG devices only where the stack's GPU node groups publish "
                                   "MIG devices", dra_mig_class_servable, True),
    Rule("dra-feature-gates", "Fields guarded by a DRA feature gate are used only where the gate is on",
         dra_feature_gates, False, everywhere=True),
    Rule("no-alpha-in-production", "Production uses no alpha Kubernetes or NVIDIA driver feature",
         no_alpha_in_production, False),
    Rule("nvidia-driver-gates", "The NVIDIA driver's gates are consistent and enable the sharing templates use",
         nvidia_driver_gates, False),
    Rule("extended-resource-unique", "No two DeviceClasses map one extended resource", extended_resource_unique,
         True, everywhere=True),
    Rule("no-device-plugin-on-dra-nodes", "NVIDIA's device plugin and the DRA kubelet plugin never share a node",
         no_device_plugin_on_dra_nodes, True, everywhere=True),
    Rule("dra-driver-chart-pinned", "The DRA driver chart is pinned and configured for EKS nodes",
         dra_driver_chart_pinned, False),
    Rule("admin-access-restricted", "adminAccess only in the namespaces of teams the stack grants it",
         admin_access_restricted, True, everywhere=True),
    Rule("team-file-platform-keys", "A team file sets nothing only the platform may decide (admin access, reserved "
                                    "namespace labels)", team_file_platform_keys, True, everywhere=True),
    Rule("team-quota-required", "Every team namespace with templates has a quota covering each class it uses, "
                                "at least one claim's worth", team_quota_required, True),
    Rule("team-namespace-kept", "A change that renames a team's namespace or drops a team says what the stack "
                                "would stop managing (with `gpu-dra check --base`)", team_namespace_kept, True),
    Rule("legacy-workloads-placed", "Every workload a team names that needs NVIDIA's device plugin has room on the "
                                    "stack's device-plugin node groups", legacy_workloads_placed, True),
    Rule("dra-group-has-capacity", "A DRA node group at desired size 0 is a capacity block's (nothing else gives it "
                                   "a node)", dra_group_has_capacity, False),
    Rule("eks-hardening", "Production clusters: private or CIDR-limited endpoint, encrypted secrets, IMDSv2, "
                          "protected cluster and GPU node groups", eks_hardening, False),
    Rule("kubernetes-version-supported", "Kubernetes version within EKS standard support",
         kubernetes_version_supported, False, always_advisory=True),
    Rule("kueue-template-replaced", "A queued team's claim template is not changed under its own name, which Kueue "
                                    "would undercharge (with `gpu-dra check --base`)", kueue_template_replaced, True),
    Rule("kueue-devices-exist", "A template a team queues in Kueue has devices on nodes that run: Kueue admits only "
                                "while matching devices exist", kueue_devices_exist, True),
    Rule("kueue-workloads-admissible", "A workload a team names that queues in Kueue can be admitted from the team's "
                                       "queue (a LocalQueue that exists, resources it covers, no more than it holds)",
         kueue_workloads_admissible, True),
    Rule("kueue-mappings-changed", "A change of the classes Kueue maps says what it does to the controller and its "
                                   "workloads (with `gpu-dra check --base`)", kueue_mappings_changed, True,
         always_advisory=True),
    Rule("upgrade-safe", "A change of the Kubernetes version, driver chart or Karpenter release leaves no template "
                         "or legacy workload without a place and no manifest on an API the target drops (with "
                         "`gpu-dra check --base`)", upgrade_safe, True),
    Rule("upgrade-reported", "A change of the Kubernetes version, driver chart or Karpenter release says what it "
                             "changes for the teams (with `gpu-dra check --base`)", upgrade_reported, True,
         always_advisory=True),
)
RULES_BY_NAME = {rule.name: rule for rule in RULES}


def default_enforcement(rule: Rule, environment: str) -> str:
    if rule.always_advisory:
        return ADVISORY
    return MANDATORY if rule.everywhere or environment == "prod" else ADVISORY


def enforcement(rule: Rule, environment: str, config: Mapping[str, Any]) -> str:
    """Pack config (as `--policy-pack-config` gives it) overrides the default: {"all": level} or
    {"<rule>": level | {"enforcementLevel": level}}."""
    level = default_enforcement(rule, environment)
    if isinstance(config.get("all"), str):
        level = config["all"]
    own = config.get(rule.name)
    if isinstance(own, str):
        level = own
    elif isinstance(own, Mapping) and own.get("enforcementLevel"):
        level = str(own["enforcementLevel"])
    return level


__all__ = ["ADVISORY", "MANDATORY", "RULES", "RULES_BY_NAME", "Context", "Resource", "Rule", "context_from",
           "default_enforcement", "enforcement"]

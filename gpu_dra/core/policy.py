"""The policy pack's rules as plain functions: resource props (camelCase, numbers as floats, as the Pulumi engine
sends them) and context in, findings out. `gpu_dra.policypack` wraps them in CrossGuard policies.

Every rule returns `list[Finding]` (gpu_dra.core.findings), filled the same way by all 15:
- `rule` is the policy id (`Rule.name`), so which rule fired is a field; `severity` is always `error`: whether a
  finding blocks (mandatory) or only warns (advisory) is the pack's and `gpu-dra check`'s business (`enforcement`);
- `object` is the URN of the resource at fault, the one the pack reports the violation on ("" only where no
  resource is: a claim the stack's resources do not name);
- `path` is where inside that resource's props, as `yamlsource.format_path` writes it (a selector, a gated field,
  `values.featureGates.<gate>` of the chart, `spec.hard[...]` of a quota, `encryptionConfigKeyArn` of a cluster),
  "" where no prop is at fault (the `protect` resource option, a whole node group, a whole claim);
- `fix` says what to do, where there is one thing to do; the shells append it to the message.
A rule that checks several things tells them apart by `path` (eks-hardening, team-quota-required,
dra-driver-chart-pinned). dra-cel-lint wraps the selector lint rules: the inner rule's id is `check`
(`unguarded-lookup`, `cel-unsupported`, ...), its fix is `fix`, and the shells render the id beside the message. The
gate rules (dra-feature-gates: the Kubernetes gates; nvidia-driver-gates: the driver gates) name the gate in the
message; the field it concerns is `path`.

Claims and classes are read through their typed form (`Resource.dra_object`, gpu_dra.core.dra.objects), parsed
once per resource, with the path of every element as written; the target cluster is `Context.target`, the same
`Target` lint judges by.

Each rule understands the resources of an offline run under mocks (component inputs such as
`eks:index:ManagedNodeGroup`) and those of a real preview (`aws:eks/nodeGroup:NodeGroup`, `aws:eks/cluster:Cluster`,
chart-rendered DaemonSets): pulumi-eks components are remote, with children only in a real preview
(pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts, nodejs/eks/cluster/cluster.ts; docs/sources.md#pulumi-engine-facts).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from gpu_dra.core.analysis.explain import (
    CEL_COMPILE,
    CEL_RUNTIME,
    MISSING_CLASS,
    ClaimReport,
    Explainer,
    claims_from_objects,
    classes_from_objects,
)
from gpu_dra.core.analysis.inventory import GroupSpec, synthesize_groups
from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.checks.manifest_lint import gate_sites, selector_sites
from gpu_dra.core.checks.target import Target
from gpu_dra.core.config import nvidia_driver
from gpu_dra.core.config.models import (
    DRA_NODE_LABEL,
    ChartName,
    DraDriver,
    SharingStrategy,
)
from gpu_dra.core.dra.cel import CompileError, check_selector
from gpu_dra.core.dra.cel.lexer import tokenize
from gpu_dra.core.dra.objects import DeviceClass, ResourceClaim, parse_object
from gpu_dra.core.facts import gates, nvidia
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION
from gpu_dra.core.findings import ERROR, Finding
from gpu_dra.core.render import charts
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL, CLAIMS_QUOTA, device_quota_name
from gpu_dra.core.render.nodes import EKS_TAINT_EFFECTS, ENVIRONMENT_TAG, NODE_GROUP_LABEL
from gpu_dra.core.yamlsource import format_path

ADVISORY, MANDATORY = "advisory", "mandatory"
RESOURCE_TYPES = {
    "DeviceClass": "kubernetes:resource.k8s.io/v1:DeviceClass",
    "ResourceClaim": "kubernetes:resource.k8s.io/v1:ResourceClaim",
    "ResourceClaimTemplate": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
}
EKS_CLUSTER_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
NODE_GROUP_TYPES = ("eks:index:ManagedNodeGroup", "aws:eks/nodeGroup:NodeGroup")
CHART_TYPE = "kubernetes:helm.sh/v4:Chart"
QUOTA_TYPE = "kubernetes:core/v1:ResourceQuota"
# Where each cluster type takes the KMS key for secrets encryption.
ENCRYPTION_KEY = {"eks:index:Cluster": "encryptionConfigKeyArn", "aws:eks/cluster:Cluster": "encryptionConfig"}
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")  # a chart version naming one release
# End of EKS standard support (awsdocs/amazon-eks-user-guide@01385604:latest/ug/versioning/kubernetes-versions.adoc;
# 1.35 partially verified, docs/sources.md#versions-and-support-calendar).
EKS_STANDARD_SUPPORT_ENDS = {"1.33": datetime.date(2026, 7, 29), "1.34": datetime.date(2026, 12, 2),
                             "1.35": datetime.date(2027, 3, 27)}


@dataclass(frozen=True)
class Resource:
    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    protect: bool = False

    @cached_property
    def dra_object(self) -> DeviceClass | ResourceClaim | None:
        """The DeviceClass, claim or template these props declare, typed once for every rule; None for other types."""
        return parse_object(self.props) if self.type in RESOURCE_TYPES.values() else None


@dataclass(frozen=True)
class Context:
    """The target cluster and the pack's own facts: from the stack's own resources when present, else from pack
    config."""

    target: Target = Target()
    environment: str = "dev"
    chart: ChartName = ChartName.dra_driver_nvidia_gpu
    chart_version: str = DEFAULT_CHART_VERSION
    driver_gates: dict[str, bool] = field(default_factory=dict)
    class_selectors: dict[str, list[str]] = field(default_factory=dict)  # of the stack's DeviceClasses
    today: datetime.date = field(default_factory=datetime.date.today)

    @property
    def pinned(self) -> bool:
        """Whether the chart names one release; dra-driver-chart-pinned reports it when not."""
        return _pinned(self.chart_version)


def _pinned(chart_version: str) -> bool:
    return bool(EXACT_VERSION.match(chart_version))


def _minor(version: Any) -> str:
    parts = str(version).split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else str(version)


def context_from(resources: Iterable[Resource], config: Mapping[str, Any]) -> Context:
    kubernetes_version = str(config.get("kubernetesVersion", DEFAULT_KUBERNETES_VERSION))
    platform = str(config.get("platform", "eks"))
    environment = str(config.get("environment", "dev"))
    chart = ChartName(config.get("chart", ChartName.dra_driver_nvidia_gpu.value))
    chart_version = str(config.get("chartVersion", DEFAULT_CHART_VERSION))
    driver_gates: dict[str, bool] = {}
    resources = list(resources)
    for resource in resources:
        props = resource.props
        if resource.type in EKS_CLUSTER_TYPES:
            platform = "eks"
            if props.get("version"):
                kubernetes_version = _minor(props["version"])
            tags = props.get("tags") or {}
            if tags.get(ENVIRONMENT_TAG):
                environment = str(tags[ENVIRONMENT_TAG])
    dra_chart = _dra_chart(resources)
    if dra_chart is not None:
        props = dra_chart.props
        chart_name = str(props.get("chart", "")).rstrip("/").rsplit("/", 1)[-1]
        if chart_name in {c.value for c in ChartName}:
            chart = ChartName(chart_name)
        if props.get("version"):
            chart_version = str(props["version"])
        driver_gates = {k: bool(v) for k, v in ((props.get("values") or {}).get("featureGates") or {}).items()}
    # An unpinned chart is judged as the default release, what lint assumes.
    level = (nvidia_driver.release_level(DraDriver(chart=chart, version=chart_version)) if _pinned(chart_version)
             else nvidia_driver.DEFAULT_LEVEL)
    target = Target(kubernetes_version, platform,
                    {k: bool(v) for k, v in (config.get("featureGates") or {}).items()}, level)
    classes = {c.name: list(c.selectors) for r in resources if isinstance(c := r.dra_object, DeviceClass)}
    today = datetime.date.fromisoformat(str(config["today"])) if config.get("today") else datetime.date.today()
    return Context(target, environment, chart, chart_version, driver_gates, classes, today)


def _dra_chart(resources: Iterable[Resource]) -> Resource | None:
    """The DRA driver's chart (the last, should a stack declare two)."""
    found = [r for r in resources if r.type == CHART_TYPE and _is_dra_chart(r.props)]
    return found[-1] if found else None


def _is_dra_chart(props: Mapping[str, Any]) -> bool:
    chart = str(props.get("chart", ""))
    return chart.endswith(("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu"))


def _is_device_plugin_chart(props: Mapping[str, Any]) -> bool:
    return str(props.get("chart", "")).endswith("nvidia-device-plugin")


def _dra_objects(resources: Iterable[Resource]) -> list[Resource]:
    return [r for r in resources if r.type in RESOURCE_TYPES.values()]


def _name(resource: Resource) -> str:
    meta = resource.props.get("metadata") or {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{resource.props.get('kind')} {namespace}{meta.get('name', resource.name)}"


# --------------------------------------------------------------------------------------------- selector rules


def _error(rule: str, message: str, resource: Resource | None, path: str = "", fix: str | None = None,
           check: str = "") -> Finding:
    return Finding(rule, ERROR, message, fix, object=resource.urn if resource else "", path=path, check=check)


def dra_cel_compiles(resource: Resource, context: Context) -> list[Finding]:
    consumable = context.target.enabled("DRAConsumableCapacity")
    out = []
    for path, expression, _ in selector_sites(resource.dra_object):
        try:
            check_selector(expression, consumable_capacity=consumable)
        except CompileError as error:
            if error.kind != "unsupported":  # accepted by the API server; dra-cel-lint says it went unchecked
                out.append(_error("dra-cel-compiles", f"the API server would reject this selector: {error.message}",
                                  resource, format_path(path)))
    return out


def _conjunction(expressions: Sequence[str]) -> str:
    return " && ".join(f"({e})" for e in expressions)


def _lint_request(expression: str, class_selectors: Sequence[str], lint_context: SelectorContext) -> list[Finding]:
    """A request's selector sees only the devices its class admits (the class's selectors run first): lint it behind
    them, less what they say on their own, which dra-cel-lint reports on the class."""
    behind = [e for e in class_selectors if tokenize(e) is not None]
    if not behind:
        return lint_selector(expression, lint_context)
    own = set(lint_selector(_conjunction(behind), lint_context))
    return [f for f in lint_selector(_conjunction([*behind, expression]), lint_context) if f not in own]


def dra_cel_lint(resource: Resource, context: Context) -> list[Finding]:
    out = []
    for path, expression, device_class in selector_sites(resource.dra_object):
        where = format_path(path)
        try:
            check_selector(expression, consumable_capacity=True)
        except CompileError as error:
            if error.kind == "unsupported":
                out.append(_error("dra-cel-lint", error.message, resource, where, check="cel-unsupported"))
        lint_context = SelectorContext(class_selector=device_class is None, target=context.target)
        if device_class is None:
            lints = lint_selector(expression, lint_context)
        else:
            lints = _lint_request(expression, context.class_selectors.get(device_class)
                                  or nvidia.CHART_CLASS_SELECTORS.get(device_class, []), lint_context)
        out += [_error("dra-cel-lint", lint.message, resource, where, lint.fix, check=lint.rule) for lint in lints]
    return out


def _declared_classes(resources: list[Resource]) -> set[str]:
    declared = {c.name for r in resources if isinstance(c := r.dra_object, DeviceClass)}
    return declared | set(nvidia.CHART_DEVICE_CLASSES)


def _requested_classes(resource: Resource) -> list[tuple[str, str]]:
    """(path, class name) of every request and subrequest of a claim or template that names a class."""
    claim = resource.dra_object
    if not isinstance(claim, ResourceClaim):
        return []
    return [(format_path((*choice.path, "deviceClassName")), choice.device_class)
            for request in claim.requests for choice in request.choices if choice.device_class]


def dra_device_class_exists(resources: list[Resource], context: Context) -> list[Finding]:
    declared = _declared_classes(resources)
    out = []
    for resource in resources:
        if resource.type in (RESOURCE_TYPES["ResourceClaim"], RESOURCE_TYPES["ResourceClaimTemplate"]):
            for path, name in _requested_classes(resource):
                if name not in declared:
                    out.append(_error(
                        "dra-device-class-exists", f"device class {name!r} is neither declared by the stack nor "
                        "installed by the chart; the pod would stay Pending ('device class ... does not exist')",
                        resource, path, "declare it under deviceClasses, or name one of the chart's: "
                        + ", ".join(nvidia.CHART_DEVICE_CLASSES)))
    return out


def _node_groups(resources: list[Resource]) -> list[tuple[Resource, str, list[str], int, dict[str, str],
                                                           list[dict[str, Any]]]]:
    """(resource, name, instance types, max size, labels, taints with Kubernetes effect names) per GPU node group."""
    effects = {v: k for k, v in EKS_TAINT_EFFECTS.items()}
    found = []
    for resource in resources:
        if resource.type not in NODE_GROUP_TYPES:
            continue
        props = resource.props
        labels = {str(k): str(v) for k, v in (props.get("labels") or {}).items()}
        if NODE_GROUP_LABEL not in labels:
            continue  # the system group, or a group gpu-dra does not manage
        scaling = props.get("scalingConfig") or {}
        taints = [{"key": t.get("key"), "value": t.get("value"), "effect": effects.get(t.get("effect"),
                                                                                      t.get("effect"))}
                  for t in props.get("taints") or []]
        found.append((resource, labels[NODE_GROUP_LABEL], list(props.get("instanceTypes") or []),
                      int(scaling.get("maxSize", 0) or 0), labels, taints))
    return found


def _explain_on_fleet(resources: list[Resource], context: Context) -> list[tuple[str, ClaimReport, Resource | None]]:
    """(claim, report, resource) for every claim and template on the fleet synthesized from the node groups."""
    groups = [GroupSpec(name, types[0] if types else "", max_size, labels.get(DRA_NODE_LABEL[0]) == DRA_NODE_LABEL[1])
              for _, name, types, max_size, labels, _ in _node_groups(resources)]
    objects = _dra_objects(resources)
    stack = json.dumps([[dataclasses.asdict(g) for g in groups], [r.props for r in objects],
                        context.target.driver_level, context.target.enabled("DRAConsumableCapacity")])
    by_name = {_name(r).split(" ", 1)[1]: r for r in objects}
    return [(claim, report, by_name.get(claim)) for claim, report in _fleet_reports(stack)]


@lru_cache(maxsize=2)
def _fleet_reports(stack: str) -> tuple[tuple[str, ClaimReport], ...]:
    """Every claim explained on the fleet synthesized from the node groups: the costliest thing the pack does, which
    dra-claim-satisfiable and dra-selector-safe-on-fleet both read. Memoised on everything it depends on, as JSON
    (the groups, the DRA objects, the driver release, the consumable-capacity gate), so that the two share one
    explanation per stack, also under the engine, which hands each policy its own copy of the resources."""
    groups, objects, level, consumable = json.loads(stack)
    fleet = synthesize_groups([GroupSpec(**group) for group in groups], (level[0], level[1]))
    if not fleet.devices:
        return ()
    explainer = Explainer(classes_from_objects(objects), consumable)
    return tuple((claim.name, explainer.explain(claim, fleet)) for claim in claims_from_objects(objects))


def _stack_of(resource: Resource | None) -> str | None:
    """The stack a resource belongs to, from its URN: urn:pulumi:<stack>::<project>::<type>::<name>."""
    head = resource.urn.split("::", 1)[0] if resource else ""
    return head.split(":", 2)[2] if head.startswith("urn:pulumi:") and head.count(":") == 2 else None


def _explain_command(claim: str, resource: Resource | None) -> str:
    return f"`gpu-dra explain --stack {_stack_of(resource) or '<this stack>'} --claim {claim}`"


# What stops a claim before allocation that another rule reports: dra-cel-compiles (or dra-cel-lint, for what the
# evaluator does not support), dra-selector-safe-on-fleet, dra-device-class-exists. An invalid claim (request fields
# where its API version does not take them) only this rule sees, so it still reports that.
_REPORTED_ELSEWHERE = frozenset({CEL_COMPILE, CEL_RUNTIME, MISSING_CLASS})


def dra_claim_satisfiable(resources: list[Resource], context: Context) -> list[Finding]:
    out = []
    for claim, report, resource in _explain_on_fleet(resources, context):
        if report.allocatable or any(e.rule in _REPORTED_ELSEWHERE for e in report.errors):
            continue
        out.append(_error("dra-claim-satisfiable", f"claim template {claim} cannot be allocated on any GPU node group "
                          f"of this stack (at max size): {report.reason}", resource,
                          fix=f"run {_explain_command(claim, resource)} for every device's reason"))
    return out


def dra_selector_safe_on_fleet(resources: list[Resource], context: Context) -> list[Finding]:
    return [_error("dra-selector-safe-on-fleet", f"{error.message}: raised on devices this stack's node groups "
                   "publish; one such error blocks every pod using the claim", resource,
                   fix=f"guard the lookup; run {_explain_command(claim, resource)} for the devices it raises on")
            for claim, report, resource in _explain_on_fleet(resources, context)
            for error in report.errors if error.rule == CEL_RUNTIME]


# --------------------------------------------------------------------------------------------- feature rules


def dra_feature_gates(resource: Resource, context: Context) -> list[Finding]:
    target = context.target
    out = []
    for path, guarded in gate_sites(resource.dra_object):
        if not target.enabled(guarded.gate):
            state = gates.state(guarded.gate, target.kubernetes_version)
            stage = f"{state.stage} and off by default" if state else "not present"
            where = ("EKS runs only upstream defaults" if target.platform == "eks"
                     else "the cluster does not declare it (pack config featureGates)")
            out.append(_error("dra-feature-gates", f"{guarded.what} needs {guarded.gate}, {stage} in Kubernetes "
                              f"{target.kubernetes_version}; {where}", resource, format_path(path)))
    return out


def _driver_gate_path(gate: str) -> str:
    """Where the chart's values set a driver gate."""
    return format_path(("values", "featureGates", gate))


def no_alpha_in_production(resources: list[Resource], context: Context) -> list[Finding]:
    if context.environment != "prod":
        return []
    out = []
    version = context.target.kubernetes_version
    for resource in _dra_objects(resources):
        for path, guarded in gate_sites(resource.dra_object):
            state = gates.state(guarded.gate, version)
            if state is None or state.stage == "alpha":
                out.append(_error("no-alpha-in-production", f"{guarded.what} relies on {guarded.gate}, alpha in "
                                  f"Kubernetes {version}: not in production", resource, format_path(path)))
    chart = _dra_chart(resources)
    for name, enabled in context.driver_gates.items():
        gate = nvidia_driver.DRIVER_GATES.get(name)
        if enabled and gate and gate.stage == "alpha":
            out.append(_error("no-alpha-in-production", f"NVIDIA driver gate {name} is alpha: not in production",
                              chart, _driver_gate_path(name)))
    return out


def _sharing(resources: list[Resource]) -> list[tuple[Resource, str, SharingStrategy]]:
    """(resource, path of the strategy, strategy) of every time-slicing or MPS config of a claim or template."""
    found = []
    for resource in _dra_objects(resources):
        claim = resource.dra_object
        for config in claim.config if isinstance(claim, ResourceClaim) else ():
            sharing = config.parameters.get("sharing")
            strategy = sharing.get("strategy") if isinstance(sharing, Mapping) else None
            if config.parameters.get("kind") == "GpuConfig" and strategy in {s.value for s in SharingStrategy}:
                found.append((resource, format_path((*config.path, "opaque", "parameters", "sharing", "strategy")),
                              SharingStrategy(strategy)))
    return found


def nvidia_driver_gates(resources: list[Resource], context: Context) -> list[Finding]:
    chart = _dra_chart(resources)
    if chart is None or not context.pinned:
        return []  # an unpinned chart has no known gates; dra-driver-chart-pinned reports it

    def conflicts(sharing: list[tuple[str, SharingStrategy]]) -> list[tuple[str | None, str]]:
        return nvidia_driver.gate_conflicts(context.chart, context.chart_version, context.driver_gates,
                                            context.target.enabled("DRAPartitionableDevices"), sharing)

    out = []
    for what, message in conflicts([]):  # without sharing, `what` is "version" or a gate
        out.append(_error("nvidia-driver-gates", message, chart,
                          "version" if what == "version" else _driver_gate_path(what or "")))
    for resource, path, strategy in _sharing(resources):  # one at a time, to tell whose sharing the driver rejects
        out += [_error("nvidia-driver-gates", message, resource, path,
                       f"enable the driver gate {nvidia_driver.SHARING_GATES[strategy]} (draDriver.featureGates)")
                for what, message in conflicts([(_name(resource), strategy)]) if what is None]
    return out


# --------------------------------------------------------------------------------------------- platform rules


def extended_resource_unique(resources: list[Resource], context: Context) -> list[Finding]:
    owners: dict[str, str] = {}
    if _dra_chart(resources) is not None:
        # Charts from 25.12.0 on (all gpu-dra supports) give their gpu.nvidia.com class this name on v1.
        owners["nvidia.com/gpu"] = "DeviceClass gpu.nvidia.com (installed by the chart)"
    out = []
    for resource in resources:
        device_class = resource.dra_object
        name = device_class.extended_resource_name if isinstance(device_class, DeviceClass) else None
        if not name:
            continue
        if name in owners:
            out.append(_error("extended-resource-unique", f"{name} is also {owners[name]}'s; the API server lets the "
                              "later class win, so pods would silently move between classes", resource,
                              "spec.extendedResourceName", "give each class its own extended resource name"))
        owners.setdefault(name, _name(resource))
    return out


def _plugin_placement(resources: list[Resource], dra: bool) -> dict[str, Any] | None:
    """Pod placement of the DRA kubelet plugin (dra=True) or the device plugin, from chart values (offline) or the
    rendered DaemonSet (a real preview)."""
    for resource in resources:
        props = resource.props
        if resource.type == CHART_TYPE and (_is_dra_chart(props) if dra else _is_device_plugin_chart(props)):
            values = props.get("values") or {}
            return dict(values.get("kubeletPlugin") or {}) if dra else dict(values)
        if resource.type == "kubernetes:apps/v1:DaemonSet":
            name = str((props.get("metadata") or {}).get("name", ""))
            if (dra and "kubelet-plugin" in name) or (not dra and "device-plugin" in name):
                pod = ((props.get("spec") or {}).get("template") or {}).get("spec") or {}
                return {key: pod[key] for key in ("nodeSelector", "affinity", "tolerations") if key in pod}
    return None


def no_device_plugin_on_dra_nodes(resources: list[Resource], context: Context) -> list[Finding]:
    groups = _node_groups(resources)
    views = [charts.NodeGroupView(name, labels, taints) for _, name, _, _, labels, taints in groups]
    shared = charts.shared_gpu_nodes(views, _plugin_placement(resources, dra=True),
                                     _plugin_placement(resources, dra=False))
    by_name = {name: resource for resource, name, *_ in groups}
    return [_error("no-device-plugin-on-dra-nodes", f"node group {name}: both NVIDIA's device plugin and the DRA "
                   "kubelet plugin would run there; each advertises every GPU, so pods would silently share them",
                   by_name[name], fix="keep each plugin's nodeSelector, affinity and tolerations to its own groups")
            for name in shared]


def dra_driver_chart_pinned(resource: Resource, context: Context) -> list[Finding]:
    if resource.type != CHART_TYPE or not _is_dra_chart(resource.props):
        return []
    props = resource.props
    out = []
    version = str(props.get("version") or "")
    if not EXACT_VERSION.match(version):
        out.append(_error("dra-driver-chart-pinned", f"the DRA driver chart needs an exact version (got "
                          f"{version or 'none'}); an unpinned chart changes what is deployed without a config change",
                          resource, "version", f"pin one release, e.g. {DEFAULT_CHART_VERSION}"))
    values = props.get("values") or {}
    if values.get("gpuResourcesEnabledOverride") is not True:
        out.append(_error("dra-driver-chart-pinned", "must be true with resources.gpus.enabled (the chart refuses to "
                          "render otherwise)", resource, "values.gpuResourcesEnabledOverride"))
    root = values.get("nvidiaDriverRoot", "/")
    if root not in charts.DRIVER_ROOTS.values():
        out.append(_error("dra-driver-chart-pinned", f"{root!r} is neither '/' (EKS NVIDIA AMIs) nor "
                          "'/run/nvidia/driver' (GPU Operator)", resource, "values.nvidiaDriverRoot"))
    return out


def admin_access_restricted(resources: list[Resource], context: Context) -> list[Finding]:
    admin_namespaces = {str((r.props.get("metadata") or {}).get("name")) for r in resources
                        if r.type == "kubernetes:core/v1:Namespace"
                        and ((r.props.get("metadata") or {}).get("labels") or {}).get(ADMIN_ACCESS_LABEL) == "true"}
    out = []
    for resource in _dra_objects(resources):
        claim = resource.dra_object
        namespace = (resource.props.get("metadata") or {}).get("namespace")
        if not isinstance(claim, ResourceClaim) or namespace in admin_namespaces:
            continue
        out += [_error("admin-access-restricted", f"request {request.name}"
                       f"{'/' + choice.subrequest if choice.subrequest else ''} uses adminAccess, but namespace "
                       f"{namespace} lacks {ADMIN_ACCESS_LABEL}=true (only admin teams get it)", resource,
                       format_path((*choice.path, "adminAccess")))
                for request in claim.requests for choice in request.choices if choice.admin_access]
    return out


def team_quota_required(resources: list[Resource], context: Context) -> list[Finding]:
    quotas: dict[str, set[str]] = {}
    quota_of: dict[str, Resource] = {}
    for resource in resources:
        if resource.type == QUOTA_TYPE:
            namespace = str((resource.props.get("metadata") or {}).get("namespace"))
            hard = ((resource.props.get("spec") or {}).get("hard") or {})
            quotas.setdefault(namespace, set()).update(hard)
            quota_of.setdefault(namespace, resource)
    out = []
    uncapped_claims: set[str] = set()
    for resource in resources:
        if resource.type != RESOURCE_TYPES["ResourceClaimTemplate"]:
            continue
        namespace = str((resource.props.get("metadata") or {}).get("namespace"))
        hard = quotas.get(namespace)
        if hard is None:
            out.append(_error("team-quota-required", f"namespace {namespace} has claim templates but no "
                              "ResourceQuota", resource, "metadata.namespace", "set quota in the team's file"))
            continue
        out += [_error("team-quota-required", f"the quota of {namespace} does not cap class {name}", resource, path,
                       f"add a quota.devices entry for {name}")
                for path, name in _requested_classes(resource) if device_quota_name(name) not in hard]
        if CLAIMS_QUOTA not in hard and namespace not in uncapped_claims:  # the namespace's quota, once
            uncapped_claims.add(namespace)
            out.append(_error("team-quota-required", f"the quota of {namespace} does not cap claims",
                              quota_of[namespace], format_path(("spec", "hard", CLAIMS_QUOTA)),
                              "set quota.claims in the team's file"))
    return out


def eks_hardening(resources: list[Resource], context: Context) -> list[Finding]:
    if context.environment != "prod":
        return []
    protect_it = "set the resource option protect"
    out = []
    for resource in resources:
        props = resource.props
        if resource.type in EKS_CLUSTER_TYPES:
            vpc = props.get("vpcConfig") or {}
            public = props.get("endpointPublicAccess", vpc.get("endpointPublicAccess"))
            cidrs = props.get("publicAccessCidrs", vpc.get("publicAccessCidrs")) or []
            if public and (not cidrs or "0.0.0.0/0" in cidrs):
                out.append(_error("eks-hardening", "the API endpoint is open to the world (0.0.0.0/0)", resource,
                                  "endpointPublicAccess" if "endpointPublicAccess" in props
                                  else "vpcConfig.endpointPublicAccess",
                                  "make it private, or limit publicAccessCidrs"))
            if not any(props.get(key) for key in ENCRYPTION_KEY.values()):
                out.append(_error("eks-hardening", "secrets envelope encryption with a KMS key is off", resource,
                                  ENCRYPTION_KEY[resource.type]))
            if not resource.protect:
                out.append(_error("eks-hardening", "the cluster is not protected against deletion", resource,
                                  fix=protect_it))
        elif (resource.type == "aws:ec2/launchTemplate:LaunchTemplate"
              and (props.get("metadataOptions") or {}).get("httpTokens") != "required"):
            out.append(_error("eks-hardening", f"launch template {resource.name} allows IMDSv1", resource,
                              "metadataOptions.httpTokens", "require IMDSv2 (httpTokens: required)"))
    for resource, name, *_ in _node_groups(resources):
        if not resource.protect:
            out.append(_error("eks-hardening", f"GPU node group {name} is not protected against deletion", resource,
                              fix=protect_it))
    return out


def kubernetes_version_supported(resource: Resource, context: Context) -> list[Finding]:
    if resource.type not in EKS_CLUSTER_TYPES:
        return []
    version = context.target.kubernetes_version
    end = EKS_STANDARD_SUPPORT_ENDS.get(version)
    if end is None:
        return []
    days = (end - context.today).days
    if days > 90:
        return []
    if days < 0:
        message = f"EKS standard support for Kubernetes {version} ended on {end} (extended support costs more)"
    else:
        when = f"today ({end})" if days == 0 else f"on {end}, in {days} day{'' if days == 1 else 's'}"
        message = f"EKS standard support for Kubernetes {version} ends {when}"
    return [_error("kubernetes-version-supported", message, resource, "version", "plan the upgrade")]


# --------------------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    check: Callable[..., list[Finding]]
    stack: bool  # checks the stack's resources together (else each resource on its own)
    everywhere: bool = False  # mandatory in every environment (the API server would reject or drop it)
    always_advisory: bool = False

    def run(self, resources: Sequence[Resource], context: Context) -> list[Finding]:
        """The rule on a stack's resources, as the pack and `gpu-dra check` run it."""
        if self.stack:
            return self.check(list(resources), context)
        return [finding for resource in resources for finding in self.check(resource, context)]


RULES = (
    Rule("dra-cel-compiles", "Every DRA selector compiles within the API server's limits", dra_cel_compiles, False,
         everywhere=True),
    Rule("dra-cel-lint", "DRA selectors avoid what compiles but never matches or aborts claims", dra_cel_lint, False),
    Rule("dra-device-class-exists", "Every request's device class is declared by the stack or the chart",
         dra_device_class_exists, True, everywhere=True),
    Rule("dra-claim-satisfiable", "Each claim template can be allocated on some GPU node group of the stack",
         dra_claim_satisfiable, True),
    Rule("dra-selector-safe-on-fleet", "No selector raises a CEL runtime error on the stack's devices",
         dra_selector_safe_on_fleet, True),
    Rule("dra-feature-gates", "Fields guarded by a DRA feature gate are used only where the gate is on",
         dra_feature_gates, False, everywhere=True),
    Rule("no-alpha-in-production", "Production uses no alpha Kubernetes or NVIDIA driver feature",
         no_alpha_in_production, True),
    Rule("nvidia-driver-gates", "The NVIDIA driver's gates are consistent and enable the sharing templates use",
         nvidia_driver_gates, True),
    Rule("extended-resource-unique", "No two DeviceClasses map one extended resource", extended_resource_unique,
         True, everywhere=True),
    Rule("no-device-plugin-on-dra-nodes", "NVIDIA's device plugin and the DRA kubelet plugin never share a node",
         no_device_plugin_on_dra_nodes, True, everywhere=True),
    Rule("dra-driver-chart-pinned", "The DRA driver chart is pinned and configured for EKS nodes",
         dra_driver_chart_pinned, False),
    Rule("admin-access-restricted", "adminAccess only in namespaces labelled for it", admin_access_restricted, True),
    Rule("team-quota-required", "Every team namespace with templates has a quota covering each class it uses",
         team_quota_required, True),
    Rule("eks-hardening", "Production clusters: private or CIDR-limited endpoint, encrypted secrets, IMDSv2, "
                          "protected cluster and GPU node groups", eks_hardening, True),
    Rule("kubernetes-version-supported", "Kubernetes version within EKS standard support",
         kubernetes_version_supported, False, always_advisory=True),
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


__all__ = ["RULES", "RULES_BY_NAME", "Context", "Resource", "Rule", "context_from", "enforcement"]

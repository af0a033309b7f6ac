"""What the rules read: one resource as the Pulumi engine sends it, and the stack's facts from the pack config.

The engine sends a resource policy a resource's **inputs** (Analyze, before the resource is created or changed) and a
stack policy every resource's **outputs** (AnalyzeStack, after the preview or update): pulumi/pulumi@1b5949891b
pkg/resource/deploy/step_generator.go:3465 and :3518. Remote components (pulumi-eks `eks:index:Cluster` and
`eks:index:ManagedNodeGroup`, pulumi-kubernetes `kubernetes:helm.sh/v4:Chart`) carry no inputs there and none of
their configuration in their outputs; their children carry it (`aws:eks/cluster:Cluster`, `aws:eks/nodeGroup:NodeGroup`,
the chart's rendered objects). So the rules read those children, and take what no resource carries (Kubernetes
version, platform, environment, the DRA driver chart's line, version, values and gates, the stack's DeviceClasses)
from the pack config that `gpu-dra check --stack S --pack-config` writes (docs/sources.md#pulumi-engine-facts).

A value the engine cannot know yet arrives as `UNKNOWN` (gpu_dra.core.data): a rule skips what needs it with a
NOT_JUDGED finding and judges the rest.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from gpu_dra.core.analysis.inventory import GroupSpec
from gpu_dra.core.analysis.provisioning import LaunchedPool
from gpu_dra.core.data import UNKNOWN, plain, unknown_paths
from gpu_dra.core.dra.claims import DeviceClass, ResourceClaim, parse_object
from gpu_dra.core.facts import eks
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.facts.labels import ENVIRONMENT_TAG, NODE_GROUP_LABEL
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION, DEFAULT_LEVEL, release_level_of
from gpu_dra.core.facts.nvidia_driver import ChartName
from gpu_dra.core.facts.pulumi_types import CHART, LAUNCH_TEMPLATE, NODE_GROUP, is_kubernetes_object
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import ERROR, NOT_JUDGED, Finding
from gpu_dra.core.render import charts, names
from gpu_dra.core.render.nodes import EKS_TAINT_EFFECTS
from gpu_dra.core.yamlsource import format_path

RESOURCE_TYPES = {
    "DeviceClass": charts.DEVICE_CLASS_TYPE,
    "ResourceClaim": "kubernetes:resource.k8s.io/v1:ResourceClaim",
    "ResourceClaimTemplate": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
}
DAEMON_SET_TYPE = "kubernetes:apps/v1:DaemonSet"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
QUOTA_TYPE = "kubernetes:core/v1:ResourceQuota"
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")  # a chart version naming one release


@dataclass(frozen=True)
class Resource:
    """One resource as a policy receives it: `props` are inputs (resource rules) or outputs (stack rules); any value
    in them may be UNKNOWN."""

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    protect: bool = False
    parent: str = ""

    @cached_property
    def kubernetes_object(self) -> bool:
        return is_kubernetes_object(self.type)

    @cached_property
    def unknown(self) -> tuple[str, ...]:
        """Where its props hold unknowns, as paths; ("",) for a Kubernetes object whose state is empty (a preview
        whose Kubernetes provider is not configured yet returns no outputs: pulumi/pulumi@1b5949891b
        pkg/resource/plugin/provider_plugin.go:1425-1443)."""
        if self.kubernetes_object and not self.props:
            return ("",)
        return tuple(format_path(path) for path in unknown_paths(self.props))

    @cached_property
    def dra_object(self) -> DeviceClass | ResourceClaim | None:
        """The DeviceClass, claim or template these props declare, typed once for every rule; None for other types
        and for an object not wholly known (rules report those as not judged)."""
        if self.type not in RESOURCE_TYPES.values() or self.unknown:
            return None
        return parse_object(plain(self.props))

    @property
    def metadata(self) -> Mapping[str, Any]:
        meta = self.props.get("metadata")
        return meta if isinstance(meta, Mapping) else {}

    @property
    def label(self) -> str:
        """`DeviceClass gpu-l40s`, `ResourceClaimTemplate ml/pair`: how messages name a Kubernetes object."""
        namespace = self.metadata.get("namespace")
        prefix = f"{namespace}/" if isinstance(namespace, str) and namespace else ""
        return f"{self.props.get('kind', self.type.rsplit(':', 1)[-1])} {prefix}{self.metadata.get('name', self.name)}"

    @property
    def rendered_by_chart(self) -> bool:
        return rendered_by_chart(self.urn)

    @property
    def is_dra_chart(self) -> bool:
        return self.type == CHART and self.name == names.DRA_DRIVER_CHART

    @property
    def is_device_plugin_chart(self) -> bool:
        return self.type == CHART and self.name == names.DEVICE_PLUGIN_CHART


@dataclass(frozen=True)
class Context:
    """The target cluster and the stack's facts, from the pack config."""

    target: Target = Target()
    environment: str | None = None  # the pack config's; None: the pack runs without one (see environment_of)
    chart: ChartName = ChartName.dra_driver_nvidia_gpu
    chart_version: str = DEFAULT_CHART_VERSION
    driver_gates: dict[str, bool] = field(default_factory=dict)
    chart_values: dict[str, Any] = field(default_factory=dict)  # the DRA chart values the rules judge
    # The stack's DeviceClasses and their selectors; None when the pack config does not say (then rules that need
    # them report NOT_JUDGED rather than guess).
    device_classes: dict[str, list[str]] | None = None
    today: datetime.date = field(default_factory=eks.today)
    # An existing cluster's GPU node pools (no resource carries them: gpu-dra creates no nodes there), each as
    # pack_config writes it: GroupSpec's fields in camelCase, and the labels and taints its nodes carry.
    node_pools: list[Mapping[str, Any]] = field(default_factory=list)
    # The workloads the teams name that need the device plugin, as pack_config writes them (policy/migration.py).
    workloads: list[Mapping[str, Any]] = field(default_factory=list)
    # The namespaces of the teams the stack grants admin access (gpu-dra:teams.<team>.admin); None when the pack
    # config does not say.
    admin_namespaces: frozenset[str] | None = None
    # Keys only the platform may set, found in the hosted teams' files, as pack_config writes them.
    platform_keys: list[Mapping[str, Any]] = field(default_factory=list)
    # The hosted teams' namespaces at the base of the change ({team, namespace, templates, quota}), as
    # `gpu-dra check --base` writes them; None when no base was given. And whether the stack protects them.
    namespaces_before: list[Mapping[str, Any]] | None = None
    protect_team_namespaces: bool = False
    # The GPU node groups whose protection the stack lifts for the up that replaces or removes them
    # (nodeGroups[].allowReplacement), as pack_config writes them.
    replaceable_node_groups: frozenset[str] = frozenset()
    # The stack's Karpenter and Auto Mode GPU NodePools (gpu-dra:karpenter, gpu-dra:autoMode), as pack_config writes
    # them: the fleet rules count their nodes, and dra-claim-provisionable asks whether one would ever be launched
    # for a claim.
    launched_pools: tuple[LaunchedPool, ...] = ()
    # What moving the stack's versions since the base of the change does ({change, command, rule, severity, message,
    # fix, file, line, object}), as `gpu-dra check --base` writes them (policy/upgrades.py); empty without a base.
    upgrade_findings: list[Mapping[str, Any]] = field(default_factory=list)
    # The queued teams' templates changed under their names since the base of the change ({team, template,
    # teamFile, line}), as `gpu-dra check --base` writes them (policy/queues.py); empty without a base.
    replaced_templates: list[Mapping[str, Any]] = field(default_factory=list)
    # The classes Kueue's configuration maps that the change adds and removes ({added, removed}), as `gpu-dra check
    # --base` writes them (policy/queues.py); None without a base or a change.
    mapping_change: Mapping[str, Any] | None = None
    # The claim templates (namespace/name) of the teams that queue in Kueue whose requests have selectors, as
    # pack_config writes them (policy/queues.py).
    queued_templates: list[str] = field(default_factory=list)
    # The workloads the teams name that queue in Kueue and that Kueue would never admit ({workload, team, queue,
    # file, line, problems}), as pack_config writes them (policy/queues.py).
    queued_workloads: list[Mapping[str, Any]] = field(default_factory=list)

    def pool_specs(self) -> list[GroupSpec]:
        return [GroupSpec(str(p["name"]), str(p.get("instanceType") or ""), int(p.get("maxNodes") or 0),
                          bool(p.get("dra")), str(p.get("gpuModel") or ""), int(p.get("gpus") or 0))
                for p in self.node_pools]

    def launched_specs(self) -> list[GroupSpec]:
        """The nodes the Karpenter and Auto Mode NodePools may launch (LaunchedPool.fleet)."""
        return [spec for pool in self.launched_pools for spec in pool.fleet()]

    @property
    def pinned(self) -> bool:
        """Whether the chart names one release; dra-driver-chart-pinned reports it when not."""
        return pinned(self.chart_version)


def rendered_by_chart(urn: str) -> bool:
    """Whether a URN names an object a helm.v4.Chart rendered: its type chain runs through the Chart
    (urn:pulumi:<stack>::<project>::<type chain>::<name>)."""
    return urn.count("::") >= 3 and f"{CHART}$" in urn.split("::")[2]


def pinned(chart_version: str) -> bool:
    return EXACT_VERSION.match(chart_version) is not None


def minor(version: Any) -> str:
    parts = str(version).split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else str(version)


ENVIRONMENTS = ("dev", "staging", "prod")


def environment_of(context: Context, resource: Resource | None = None) -> str:
    """The stack's environment: the pack config's. A pack run without `--policy-pack-config` fails closed: the
    environment the cluster's gpu-dra.io/environment tag names where `resource` carries it (the EKS cluster), else
    prod, so that a prod cluster's violations are not waved through as dev's."""
    if context.environment is not None:
        return context.environment
    tags = resource.props.get("tags") if resource is not None else None
    tagged = tags.get(ENVIRONMENT_TAG) if isinstance(tags, Mapping) else None
    return tagged if tagged in ENVIRONMENTS else "prod"


def context_from(config: Mapping[str, Any]) -> Context:
    """The stack facts of one policy's config section (see gpu_dra.cli.check.pack_config for what it holds)."""
    chart = ChartName(config.get("chart", ChartName.dra_driver_nvidia_gpu.value))
    chart_version = str(config.get("chartVersion", DEFAULT_CHART_VERSION))
    # An unpinned chart is judged as the default release, what lint assumes.
    level = release_level_of(chart_version) if pinned(chart_version) else DEFAULT_LEVEL
    target = Target(str(config.get("kubernetesVersion", DEFAULT_KUBERNETES_VERSION)),
                    Platform(config.get("platform", Platform.eks)),
                    {str(k): bool(v) for k, v in (config.get("featureGates") or {}).items()}, level)
    classes = config.get("deviceClasses")
    today = datetime.date.fromisoformat(str(config["today"])) if config.get("today") else eks.today()
    environment = config.get("environment")
    return Context(target, str(environment) if environment is not None else None, chart, chart_version,
                   {str(k): bool(v) for k, v in (config.get("driverGates") or {}).items()},
                   dict(config.get("chartValues") or {}),
                   {str(k): [str(e) for e in v] for k, v in classes.items()} if isinstance(classes, Mapping) else None,
                   today, [p for p in config.get("nodePools") or [] if isinstance(p, Mapping) and "name" in p],
                   [w for w in config.get("legacyWorkloads") or [] if isinstance(w, Mapping) and "workload" in w],
                   frozenset(str(n) for n in admin) if isinstance(admin := config.get("adminNamespaces"), list)
                   else None,
                   [k for k in config.get("platformKeys") or [] if isinstance(k, Mapping) and "key" in k],
                   [n for n in before if isinstance(n, Mapping) and "team" in n and "namespace" in n]
                   if isinstance(before := config.get("namespacesBefore"), list) else None,
                   bool(config.get("protectTeamNamespaces")),
                   frozenset(str(g) for g in groups) if isinstance(groups := config.get("allowReplacement"), list)
                   else frozenset(),
                   _launched_pools(config.get("karpenter"), config.get("autoMode")),
                   [f for f in config.get("upgradeFindings") or [] if isinstance(f, Mapping) and "rule" in f],
                   [t for t in config.get("replacedTemplates") or [] if isinstance(t, Mapping) and "template" in t],
                   change if isinstance(change := config.get("mappingChange"), Mapping) else None,
                   [str(t) for t in config.get("queuedTemplates") or []],
                   [w for w in config.get("queuedWorkloads") or [] if isinstance(w, Mapping) and "workload" in w])


def _launched_pools(karpenter: Any, auto_mode: Any) -> tuple[LaunchedPool, ...]:
    """karpenter: {version, nodePools: [{name, instanceTypes, dra, maxNodes}]} and autoMode: {nodePools: [{name,
    instanceTypes, maxNodes}]}, as pack_config writes them."""
    pools: list[LaunchedPool] = []
    for config, auto in ((karpenter, False), (auto_mode, True)):
        if not isinstance(config, Mapping) or not isinstance(config.get("nodePools"), list):
            continue
        version = "" if auto else str(config.get("version") or "unknown")
        pools += [LaunchedPool(str(p["name"]), tuple(str(t) for t in p.get("instanceTypes") or ()),
                               auto or bool(p.get("dra")), version, int(p.get("maxNodes") or 1))
                  for p in config["nodePools"] if isinstance(p, Mapping) and "name" in p]
    return tuple(pools)


def error(rule: str, message: str, resource: Resource | None, path: str = "", fix: str | None = None,
          check: str = "") -> Finding:
    return Finding(rule, ERROR, message, fix, object=resource.urn if resource else "", path=path, check=check)


def not_judged(rule: str, resource: Resource | None, what: str, paths: Iterable[str] = ()) -> Finding:
    """A check skipped because what it needs is unknown in this preview, naming the values."""
    where = ", ".join(p for p in paths if p)
    message = f"not judged in this preview: {what}" + (f" ({where} unknown)" if where else "")
    return Finding(rule, NOT_JUDGED, message, object=resource.urn if resource else "")


def dra_objects(resources: Iterable[Resource]) -> list[Resource]:
    return [r for r in resources if r.type in RESOURCE_TYPES.values()]


def unknown_objects(rule: str, resources: Sequence[Resource], what: str) -> list[Finding]:
    """One NOT_JUDGED finding for the Kubernetes objects a stack rule needs whose state is unknown: per object, or
    once when none is known (a new cluster's first preview)."""
    unknown = [r for r in resources if r.unknown]
    if not unknown:
        return []
    if len(unknown) == len(resources):
        return [not_judged(rule, None, f"{what}: the state of its {len(unknown)} object(s) is unknown until the "
                                       "cluster and its Kubernetes provider exist")]
    return [not_judged(rule, r, f"{what}: {r.label}", r.unknown) for r in unknown]


@dataclass(frozen=True)
class EngineNodeGroup:
    """A GPU node group gpu-dra manages, read from the `aws:eks/nodeGroup:NodeGroup` that pulumi-eks's
    ManagedNodeGroup registers (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/nodegroup.ts:2090-2117)."""

    resource: Resource
    name: str
    instance_types: list[str]
    max_size: int
    labels: dict[str, str]
    taints: list[dict[str, Any]]  # {key, value, effect} with Kubernetes effect names


def _template_instance_types(reference: Any, templates: Mapping[Any, Mapping[str, Any]]) -> Any:
    """The instance type of a node group's launch template, as a list; UNKNOWN while the reference or the type is.

    A Capacity Block group names its one type in its launch template only, never on the node group
    (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html). The NodeGroup refers to the template
    by the LaunchTemplate's `id` (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/nodes/nodegroup.ts:2110-2117 passes the
    program's `launchTemplate` through; components/cluster.py sets it to the template's id), unknown in a first
    preview, where the template is new."""
    template_id = reference.get("id") if isinstance(reference, Mapping) else reference
    if template_id is UNKNOWN:
        return UNKNOWN
    template = templates.get(template_id) if isinstance(template_id, str) else None
    instance_type = template.get("instanceType") if template else None
    if instance_type is UNKNOWN:
        return UNKNOWN
    return [instance_type] if instance_type else []


def node_groups(resources: Iterable[Resource]) -> tuple[list[EngineNodeGroup], list[Resource]]:
    """The GPU node groups (those carrying gpu-dra's group label), and the node groups whose labels, instance types
    (their own, else their launch template's), size or taints are unknown."""
    effects = {v: k for k, v in EKS_TAINT_EFFECTS.items()}
    resources = list(resources)
    templates = {r.props["id"]: r.props for r in resources
                 if r.type == LAUNCH_TEMPLATE and isinstance(r.props.get("id"), str)}
    found, unknown = [], []
    for resource in resources:
        if resource.type != NODE_GROUP:
            continue
        props = resource.props
        labels, scaling = props.get("labels") or {}, props.get("scalingConfig") or {}
        types = props.get("instanceTypes") or _template_instance_types(props.get("launchTemplate"), templates)
        taints = props.get("taints") or []
        if UNKNOWN in (labels, scaling, types, taints) or (
                isinstance(labels, Mapping) and NODE_GROUP_LABEL in labels
                and unknown_paths([labels, scaling.get("maxSize"), types, taints])):
            unknown.append(resource)
            continue
        if NODE_GROUP_LABEL not in labels:
            continue  # the system group, or a group gpu-dra does not manage
        found.append(EngineNodeGroup(resource, str(labels[NODE_GROUP_LABEL]), [str(t) for t in types],
                                     int(scaling.get("maxSize", 0) or 0), {str(k): str(v) for k, v in labels.items()},
                               [{"key": t.get("key"), "value": t.get("value"),
                                 "effect": effects.get(t.get("effect"), t.get("effect"))} for t in taints]))
    return found, unknown


def dra_object_of(rule: str, resource: Resource) -> tuple[DeviceClass | ResourceClaim | None, list[Finding]]:
    """The typed DRA object a rule judges, or the NOT_JUDGED finding of one not wholly known."""
    if resource.type not in RESOURCE_TYPES.values():
        return None, []
    if resource.unknown:
        return None, [not_judged(rule, resource, resource.label, resource.unknown)]
    return resource.dra_object, []


def stack_of(resource: Resource | None) -> str | None:
    """The stack a resource belongs to, from its URN: urn:pulumi:<stack>::<project>::<type>::<name>."""
    head = resource.urn.split("::", 1)[0] if resource else ""
    return head.split(":", 2)[2] if head.startswith("urn:pulumi:") and head.count(":") == 2 else None

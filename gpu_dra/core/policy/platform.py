"""Rules on how the platform fits together: one class per extended resource, each NVIDIA plugin on its own nodes,
the DRA driver chart pinned and set up for EKS nodes, admin access and quotas per team namespace, and DRA node groups
that can get nodes."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpu_dra.core.analysis.allocator import MAX_RESULTS
from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.dra.claims import DeviceClass, RequestChoice, ResourceClaim, device_quota_name
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.facts.labels import ALLOCATION_LABEL, NODE_GROUP_LABEL
from gpu_dra.core.facts.nvidia import DEFAULT_CHART_VERSION
from gpu_dra.core.facts.pulumi_types import KARPENTER_NODE_POOL, NODE_GROUP
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import (
    DAEMON_SET_TYPE,
    NAMESPACE_TYPE,
    QUOTA_TYPE,
    RESOURCE_TYPES,
    Context,
    Resource,
    dra_objects,
    error,
    node_groups,
    not_judged,
    unknown_objects,
)
from gpu_dra.core.render import charts
from gpu_dra.core.render.manifests import ADMIN_ACCESS_LABEL, CLAIMS_QUOTA
from gpu_dra.core.yamlsource import Loc, format_path


def extended_resource_unique(resources: list[Resource], context: Context) -> list[Finding]:
    """Reads every DeviceClass in the stack, the chart's own among them (it gives gpu.nvidia.com
    `extendedResourceName: nvidia.com/gpu` from 25.12.0 on): the chart's first, so that a clash is reported on the
    class the stack declares, the one a user can change."""
    classes = sorted((r for r in resources if r.type == RESOURCE_TYPES["DeviceClass"]),
                     key=lambda r: not r.rendered_by_chart)
    out = unknown_objects("extended-resource-unique", classes, "DeviceClasses")
    owners: dict[str, str] = {}
    for resource in classes:
        device_class = resource.dra_object
        name = device_class.extended_resource_name if isinstance(device_class, DeviceClass) else None
        if not name:
            continue
        if name in owners:
            out.append(error("extended-resource-unique", f"{name} is also {owners[name]}'s; the API server lets the "
                             "later class win, so pods would silently move between classes", resource,
                             "spec.extendedResourceName", "give each class its own extended resource name"))
        owners.setdefault(name, resource.label)
    return out


def _pod_placement(daemon_set: Resource) -> dict[str, Any]:
    spec = daemon_set.props.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    return {key: pod[key] for key in ("nodeSelector", "affinity", "tolerations") if key in pod}


def _plugin_placements(rule: str, resources: list[Resource], dra: bool
                       ) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Pod placement of every DaemonSet of the DRA kubelet plugin (dra=True) or of the device plugin (its MPS
    control daemon's too), by name, whatever order the engine sends them in (AnalyzeStack's is unspecified); none
    when that chart is not in the stack."""
    chart = next((r for r in resources if (r.is_dra_chart if dra else r.is_device_plugin_chart)), None)
    marker = "kubelet-plugin" if dra else "device-plugin"
    daemon_sets = sorted((r for r in resources if r.type == DAEMON_SET_TYPE
                          and marker in str(r.metadata.get("name", r.name))), key=lambda r: r.urn)
    unknown = [not_judged(rule, r, f"the {marker} DaemonSet", r.unknown) for r in daemon_sets if r.unknown]
    if unknown:
        return [], unknown
    if daemon_sets or chart is None:
        return [_pod_placement(r) for r in daemon_sets], []
    return [], [not_judged(rule, chart, f"the chart's {marker} DaemonSet is not rendered in this preview (its "
                                        "Kubernetes provider is not configured yet)")]


def no_device_plugin_on_dra_nodes(resources: list[Resource], context: Context) -> list[Finding]:
    rule = "no-device-plugin-on-dra-nodes"
    groups, unknown_groups = node_groups(resources)
    dra_plugins, skipped = _plugin_placements(rule, resources, dra=True)
    device_plugins, more = _plugin_placements(rule, resources, dra=False)
    out = skipped + more + [not_judged(rule, r, "node group labels or taints", r.unknown) for r in unknown_groups]
    views = [charts.NodeGroupView(g.name, g.labels, g.taints) for g in groups]
    by_name: dict[str, Resource | None] = {g.name: g.resource for g in groups}
    kind = "node group"
    if not groups and not unknown_groups:  # an existing cluster: its declared pools, labelled as documented
        views = [charts.NodeGroupView(str(p["name"]), {str(k): str(v) for k, v in (p.get("labels") or {}).items()},
                                      list(p.get("taints") or [])) for p in context.node_pools]
        by_name, kind = {view.name: None for view in views}, "node pool"
    kinds = dict.fromkeys(by_name, kind)
    for pool in (r for r in resources if r.type == KARPENTER_NODE_POOL):
        if pool.unknown:  # its state, until the cluster exists
            out.append(not_judged(rule, pool, "the NodePool's labels and taints", pool.unknown))
            continue
        view = _node_pool_view(pool)
        views.append(view)
        by_name[view.name], kinds[view.name] = pool, "Karpenter NodePool"
    shared = {name for dra in dra_plugins for plugin in device_plugins
              for name in charts.shared_gpu_nodes(views, dra, plugin)}
    return out + [error(rule, f"{kinds[name]} {name}: both NVIDIA's device plugin and the DRA kubelet plugin would "
                        "run there; each advertises every GPU, so pods would silently share them", by_name[name],
                        fix="keep each plugin's nodeSelector, affinity and tolerations to its own groups")
                  for name in sorted(shared, key=[v.name for v in views].index)]


def _node_pool_view(pool: Resource) -> charts.NodeGroupView:
    """The labels and taints a Karpenter NodePool's nodes carry: its template's (karpenter.sh/v1 NodePool
    spec.template.metadata.labels and spec.template.spec.taints), and the karpenter.sh/nodepool label Karpenter
    adds."""
    spec = pool.props.get("spec") or {}
    template = spec.get("template") or {}
    name = str((pool.props.get("metadata") or {}).get("name") or pool.name)
    labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    taints = [dict(t) for t in (template.get("spec") or {}).get("taints") or []]
    return charts.NodeGroupView(name, {**labels, "karpenter.sh/nodepool": name}, taints)


def dra_driver_chart_pinned(resource: Resource, context: Context) -> list[Finding]:
    """The chart's version and values as the stack renders them (pack config): the Chart component carries none."""
    if not resource.is_dra_chart:
        return []
    rule = "dra-driver-chart-pinned"
    out = []
    version = context.chart_version
    if not context.pinned:
        out.append(error(rule, f"the DRA driver chart needs an exact version (got {version or 'none'}); an unpinned "
                         "chart changes what is deployed without a config change", resource, "version",
                         f"pin one release, e.g. {DEFAULT_CHART_VERSION}"))
    values = context.chart_values
    if not values:
        return out + [not_judged(rule, resource, "the pack config holds no chartValues (write it with `gpu-dra check "
                                                 "--stack S --pack-config`)")]
    if values.get("gpuResourcesEnabledOverride") is not True:
        out.append(error(rule, "must be true with resources.gpus.enabled (the chart refuses to render otherwise)",
                         resource, "values.gpuResourcesEnabledOverride"))
    root = values.get("nvidiaDriverRoot", "/")
    if root not in charts.DRIVER_ROOTS.values():
        out.append(error(rule, f"{root!r} is neither '/' (EKS NVIDIA AMIs) nor '/run/nvidia/driver' (GPU Operator)",
                         resource, "values.nvidiaDriverRoot"))
    return out


def admin_access_restricted(resources: list[Resource], context: Context) -> list[Finding]:
    """Admin access is the platform's to grant, in the stack file (gpu-dra:teams.<team>.admin), which the pack
    config carries as `adminNamespaces`: a namespace's label says only what was rendered, and a team could have
    written it. A claim using adminAccess elsewhere, or a namespace labelled for it that the stack does not grant,
    is a violation."""
    rule = "admin-access-restricted"
    namespaces = [r for r in resources if r.type == NAMESPACE_TYPE]
    objects = dra_objects(resources)
    out = unknown_objects(rule, namespaces + objects, "namespaces and claims")
    granted = context.admin_namespaces
    labelled = set()
    for resource in namespaces:
        labels = resource.metadata.get("labels")
        name = resource.metadata.get("name")
        if not (isinstance(labels, Mapping) and labels.get(ADMIN_ACCESS_LABEL) == "true"):
            continue
        labelled.add(name)
        if granted is not None and name not in granted:
            out.append(error(rule, f"namespace {name} is labelled {ADMIN_ACCESS_LABEL}=true, but the stack grants "
                                   "no team admin access there", resource,
                             format_path(("metadata", "labels", ADMIN_ACCESS_LABEL)),
                             "only the stack file grants it: gpu-dra:teams.<team>.admin: true"))
    for resource in objects:
        claim = resource.dra_object
        namespace = resource.metadata.get("namespace")
        uses = [(request, choice) for request in claim.requests for choice in request.choices
                if choice.admin_access] if isinstance(claim, ResourceClaim) else []
        if not uses:
            continue
        if granted is None:
            out.append(not_judged(rule, resource, "the namespaces the stack grants admin access (the pack config "
                                                  "has no adminNamespaces: regenerate it with `gpu-dra check "
                                                  "--pack-config`)"))
            continue
        if namespace not in granted:
            why = f"the stack grants no admin access in namespace {namespace}"
        elif namespace not in labelled:  # the API server refuses adminAccess there
            why = f"namespace {namespace} lacks {ADMIN_ACCESS_LABEL}=true"
        else:
            continue
        out += [error(rule, f"request {request.name}{'/' + choice.subrequest if choice.subrequest else ''} uses "
                      f"adminAccess, but {why}", resource, format_path((*choice.path, "adminAccess")),
                      "remove adminAccess, or ask the platform team to grant it in the stack file: "
                      "gpu-dra:teams.<team>.admin: true")
                for request, choice in uses]
    return out


def team_file_platform_keys(resources: list[Resource], context: Context) -> list[Finding]:
    """A team file that sets what only the platform decides (admin access, namespace labels under Kubernetes'
    reserved prefixes): gpu-dra ignores the key, and the change fails, since CODEOWNERS lets a team approve its own
    file and this gate is the only check."""
    rule = "team-file-platform-keys"
    out = []
    for claim in context.platform_keys:
        key, team = str(claim["key"]), str(claim.get("team") or "")
        grant = (f"admin access is granted by the platform in the stack file, gpu-dra:teams.{team}.admin"
                 if key == "admin" else "labels under kubernetes.io, k8s.io and gpu-dra.io are set by the platform "
                                        "and by Kubernetes, not by a team")
        found = error(rule, f"{claim.get('teamFile')} sets {key}: {grant}; gpu-dra ignores it", None, "",
                      fix=f"remove {key} from the team file; ask the platform team if the team needs it")
        line = claim.get("line")  # a float once the pack config has been a protobuf Struct, as in the engine
        out.append(found.at(file=str(claim.get("teamFile") or ""), line=int(line) if line else None))
    return out


def _charge(choice: RequestChoice) -> tuple[int, Loc]:
    """The devices quota admission charges one request alternative, and where that number is written: its count
    (ExactCount; 1 when not written, as the API server defaults it), or AllocationResultsMaxSize (32) for `All`, the
    most one allocation can hold; an unknown mode is charged nothing."""
    if choice.allocation_mode == "All":
        return MAX_RESULTS, (*choice.path, "allocationMode")
    if choice.allocation_mode == "ExactCount":
        return choice.count, (*choice.path, "count" if choice.written_count is not None else "deviceClassName")
    return 0, (*choice.path, "allocationMode")


def claim_charges(claim: ResourceClaim) -> dict[str, tuple[int, Loc]]:
    """Devices one claim is charged per class, as `<class>.deviceclass.resource.k8s.io/devices` counts them, and
    where the largest share is written. The ResourceQuota evaluator (kubernetes/kubernetes@95f08499
    pkg/quota/v1/evaluator/core/resource_claims.go `Usage`, with its resource_claims_test.go) sums the requests;
    a `firstAvailable` request is charged, for each class its alternatives name, the largest alternative of that
    class: every class at once, though only one alternative is ever allocated. Admin access is not exempt."""
    total: dict[str, int] = {}
    largest: dict[str, tuple[int, Loc]] = {}
    for request in claim.requests:
        worst: dict[str, tuple[int, Loc]] = {}
        for choice in request.choices:
            devices, where = _charge(choice)
            if choice.device_class and devices > worst.get(choice.device_class, (-1, ()))[0]:
                worst[choice.device_class] = (devices, where)
        for name, (devices, where) in worst.items():
            total[name] = total.get(name, 0) + devices
            if devices > largest.get(name, (-1, ()))[0]:
                largest[name] = (devices, where)
    return {name: (devices, largest[name][1]) for name, devices in total.items()}


def _quota_limits(quota: Resource) -> dict[str, Decimal]:
    """A ResourceQuota's spec.hard as numbers; values that are not quantities (the API server refuses them) are
    left out."""
    limits = {}
    for key, value in ((quota.props.get("spec") or {}).get("hard") or {}).items():
        try:
            limits[str(key)] = parse_quantity(str(value))
        except QuantityError:
            continue
    return limits


def _number(value: Decimal) -> str:
    return str(int(value)) if value == value.to_integral_value() else str(value)


def team_quota_required(resources: list[Resource], context: Context) -> list[Finding]:
    """Each team namespace with templates has a quota capping claims and each class its templates use, at least as
    large as one claim's charge for that class: a quota below it refuses every claim made from the template
    (quota admission runs when the resourceclaim controller creates the pod's claim), so its pods stay Pending.
    https://kubernetes.io/docs/concepts/policy/resource-quotas/ (DRA: `<class>.deviceclass.resource.k8s.io/devices`)
    and `claim_charges` for how a claim is charged."""
    rule = "team-quota-required"
    quotas = [r for r in resources if r.type == QUOTA_TYPE]
    templates = [r for r in resources if r.type == RESOURCE_TYPES["ResourceClaimTemplate"]]
    out = unknown_objects(rule, quotas + templates, "quotas and claim templates")
    hard_of: dict[str, dict[str, Decimal]] = {}
    quota_of: dict[str, Resource] = {}
    for resource in quotas:
        if resource.unknown:
            continue
        namespace = str(resource.metadata.get("namespace"))
        hard = hard_of.setdefault(namespace, {})
        for key, limit in _quota_limits(resource).items():  # every quota of a namespace applies: the lowest binds
            hard[key] = min(limit, hard.get(key, limit))
        quota_of.setdefault(namespace, resource)
    uncapped_claims: set[str] = set()
    for resource in templates:
        claim = resource.dra_object
        if not isinstance(claim, ResourceClaim):
            continue
        namespace = str(resource.metadata.get("namespace"))
        limits = hard_of.get(namespace)
        if limits is None:
            out.append(error(rule, f"namespace {namespace} has claim templates but no ResourceQuota", resource,
                             "metadata.namespace", "set quota in the team's file"))
            continue
        out += [error(rule, f"the quota of {namespace} does not cap class {choice.device_class}", resource,
                      format_path((*choice.path, "deviceClassName")), f"add a quota.devices entry for "
                      f"{choice.device_class}")
                for request in claim.requests for choice in request.choices
                if choice.device_class and device_quota_name(choice.device_class) not in limits]
        for name, (devices, where) in claim_charges(claim).items():
            allowed = limits.get(device_quota_name(name))
            if allowed is None or devices <= allowed:
                continue
            how = (f" (allocationMode All is charged {MAX_RESULTS}, the most one allocation holds)"
                   if where[-1] == "allocationMode" else
                   " (firstAvailable is charged its largest alternative of each class it names, all at once)"
                   if "firstAvailable" in where else "")
            out.append(error(
                rule, f"one claim from this template is charged {devices} {name} device(s){how}, but the quota of "
                f"{namespace} allows {_number(allowed)}: quota admission refuses every such claim, so its pods stay "
                "Pending", resource, format_path(where),
                f"raise quota.devices[{name}] to at least {devices} (the team's file, or the stack's teams "
                "override), or request fewer devices"))
        if CLAIMS_QUOTA not in limits and namespace not in uncapped_claims:  # the namespace's quota, once
            uncapped_claims.add(namespace)
            out.append(error(rule, f"the quota of {namespace} does not cap claims", quota_of[namespace],
                             format_path(("spec", "hard", CLAIMS_QUOTA)), "set quota.claims in the team's file"))
    return out


def group_scaling(resource: Resource) -> tuple[Any, Any]:
    """(desired size, capacity type) of an `aws:eks/nodeGroup:NodeGroup` as the engine sends it: the inputs pulumi-eks
    gives the aws NodeGroup always carry scalingConfig (nodegroup.ts:2098-2108); capacityType only when set (EKS
    then launches ON_DEMAND). Either may be UNKNOWN. Read here rather than in resources.node_groups, which holds
    what every fleet rule needs."""
    scaling = resource.props.get("scalingConfig")
    desired = scaling.get("desiredSize") if isinstance(scaling, Mapping) else scaling
    return desired, resource.props.get("capacityType", "ON_DEMAND")


def dra_group_has_capacity(resource: Resource, context: Context) -> list[Finding]:
    """A DRA node group at desired size 0 gets no node, whatever runs in the cluster, unless it is a capacity block:

    - EKS keeps a managed node group at its desired size; it does not scale one for pending pods;
    - Cluster Autoscaler scales an empty group from the template its cloud provider builds, and for DRA that
      template would need the ResourceSlices a new node would publish; the AWS provider builds none (it hands the
      template no slices, as modelplaneai/modelplane#345 reads it), so a pod with a claim never triggers a scale-up
      from zero (kubernetes/autoscaler#7799, open). From one node up it copies a live node's slices: 1 to N works;
    - Karpenter (>= 1.15, `settings.enableDRA`, alpha: https://karpenter.sh/docs/tasks/dra/) launches its own nodes
      from NodePools; it never scales a managed node group;
    - a capacity block's group (capacityType CAPACITY_BLOCK) has instances only within the block's window, and its
      size follows that window outside `pulumi up`; the stack keeps desired 0, which EKS requires to upgrade such
      a group (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html). Not a violation.

    So it is a resource rule on the group's own inputs: nothing else in the stack changes the verdict, and it stops
    `pulumi up` (mandatory in prod) before the group is created or changed."""
    if resource.type != NODE_GROUP:
        return []
    rule = "dra-group-has-capacity"
    labels = resource.props.get("labels")
    if labels is UNKNOWN:
        return [not_judged(rule, resource, "whether it is a DRA group", ["labels"])]
    if not isinstance(labels, Mapping) or labels.get(ALLOCATION_LABEL) != "dra":
        return []
    desired, capacity_type = group_scaling(resource)
    if desired is UNKNOWN:
        return [not_judged(rule, resource, "its desired size", ["scalingConfig.desiredSize"])]
    if not isinstance(desired, int | float) or desired >= 1:
        return []
    if capacity_type is UNKNOWN:
        return [not_judged(rule, resource, "its capacity type", ["capacityType"])]
    if capacity_type == "CAPACITY_BLOCK":
        return []
    name = labels.get(NODE_GROUP_LABEL, resource.name)
    return [error(rule, f"DRA node group {name} is at desired size 0 and nothing gives it a node: EKS keeps a managed "
                  "node group at its desired size, Cluster Autoscaler cannot scale a DRA group from zero (its "
                  "template for an empty group publishes no ResourceSlices: kubernetes/autoscaler#7799) and "
                  "Karpenter never scales managed node groups", resource, "scalingConfig.desiredSize",
                  "set scaling.desired (and min) to 1 or more where claims must be served, and raise it by hand for "
                  "a group kept at 0; or serve this hardware from a Karpenter NodePool instead (gpu-dra:karpenter."
                  "nodePools: gpu-dra installs Karpenter with its NVIDIA DRA gate, and dra-claim-provisionable says "
                  "which templates it would launch a node for; docs/deploying.md, \"Karpenter\"), or run the stack "
                  "on EKS Auto Mode (gpu-dra:autoMode, Kubernetes 1.36+; docs/deploying.md, \"EKS Auto Mode\")")]

"""What the Pulumi engine sends a CrossGuard policy pack for this program, modelled from the mock run.

Under Pulumi's mocks a remote (multi-language) component is one opaque registration: no children, and inputs and
outputs that are not what the engine has. A real engine hands the pack something else (pulumi/pulumi@1b5949891b
pkg/resource/deploy/step_generator.go:3465 for Analyze, :3518 for AnalyzeStack):

- `inputs` (AnalyzeRequest.properties): a custom resource's inputs after its provider's Check; a component's are what
  its SDK registered, which for the remote components here is nothing;
- `outputs` (AnalyzeStackRequest properties): a custom resource's state outputs; a component's registered outputs;
- the children a remote component's provider registers during Construct, ordinary resources parented to it.

`engine_view` turns the mock run's registrations into those resources, so the offline gate can drive pulumi-policy's
analyzer with the shapes a real `pulumi preview --policy-pack` would send. `first_preview=True` models the first
preview of a new stack, where every resource is new: values computed by a create are unknown, the Kubernetes
provider of a new EKS cluster has an unknown kubeconfig, and so it is never configured.

URNs are rebuilt the engine's way (the mock monitor keeps only the last parent type and prefixes root children
with the stack's type; see `_EngineUrns`), and string values that were a mock URN are rewritten to match.

Versions read (see each comment): pulumi/pulumi@1b5949891b (engine), pulumi/pulumi-eks@7bf0c1b1 (v4.3.0 + 9 commits;
the installed pulumi_eks is 4.4.0, for which no tag was available: its generated SDK has the same outputs),
pulumi/pulumi-kubernetes@94977969d (4.32.0+; installed 4.34.2), the DRA driver charts at
kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 (commit 764900e7) and @v25.12.0 (commit 0882da87; the repository was
NVIDIA/k8s-dra-driver-gpu then, same history), NVIDIA/k8s-device-plugin@v0.18.2 (commit fb1242ad).
Pure: plain dicts in, plain dicts out; values the model invents (ids, ARNs, timestamps) are derived from names so a
view is the same on every run. Numbers are left as they come (pulumi-policy's JSON round trip makes them floats).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.data import helm_merge
from gpu_dra.core.facts.nvidia import CHART_CLASS_SELECTORS, DEVICE_PLUGIN_CHART_DEFAULTS, DRA_CHART_DEFAULTS

# The engine's unknown-string sentinel (pulumi/pulumi@1b5949891b sdk/go/common/resource/plugin/rpc.go:73). The engine
# has typed sentinels too (rpc.go:290-325), but SDKs and the terraform bridge send every unknown as this string,
# whether it stands for a string, a list or an object, so a whole object (encryptionConfig) can be this one string.
# (gpu_dra.core.data.UNKNOWN is the rules' own placeholder, which the policy shell puts in place of this string.)
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass(frozen=True)
class Registered:
    """One registration of the mock run, as the shell hands it over."""

    type: str
    name: str
    urn: str
    parent: str
    protect: bool
    inputs: Mapping[str, Any]  # camelCase, as the SDK registered them
    outputs: Mapping[str, Any]  # the mock's outputs (custom resources); a local component's registered outputs


@dataclass(frozen=True)
class EngineResource:
    """What the engine sends a policy pack for one resource."""

    type: str
    name: str
    urn: str
    parent: str
    protect: bool
    inputs: Mapping[str, Any]  # AnalyzeRequest.properties (after the provider's Check)
    outputs: Mapping[str, Any]  # AnalyzeStackRequest resource properties (state outputs)


EKS_CLUSTER = "eks:index:Cluster"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
VPC_CNI_ADDON = "eks:index:VpcCniAddon"
CHART = "kubernetes:helm.sh/v4:Chart"
K8S_PROVIDER = "pulumi:providers:kubernetes"
AWS_PROVIDER = "pulumi:providers:aws"
ROOT_STACK = "pulumi:pulumi:Stack"
# Remote components: registered by their provider inside Construct, not by the program.
REMOTE_COMPONENTS = (EKS_CLUSTER, MANAGED_NODE_GROUP, CHART)

# Invented, fixed values: the model's "now" and the account of the mock run's ARNs when none can be read from them.
CREATED_AT = "2026-01-01T00:00:00Z"
DEFAULT_ACCOUNT = "123456789012"

# ------------------------------------------------------------------------------------------------------ helpers
def _digest(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def _uuid(seed: str) -> str:
    h = _digest(seed)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _qualified_type(urn: str) -> str:
    parts = urn.split("::")
    return parts[2] if len(parts) >= 4 else ""


def _urn(stack_project: str, chain: str, name: str) -> str:
    return f"{stack_project}::{chain}::{name}"


def _helm_name(name: str) -> str:
    """`trunc 63 | trimSuffix "-"`, as every name helper of the three charts ends."""
    return name[:63].removesuffix("-")


def _k8s_type(api_version: str, kind: str) -> str:
    """The SDK token of a Kubernetes kind: core kinds under `core/` (pulumi-kubernetes@94977969d provider/pkg/gen/
    _go-templates/yaml/v2/kinds.tmpl; unknown kinds become kubernetes:<apiVersion>:<Kind> the same way)."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _replace_strings(value: Any, table: Mapping[str, Any]) -> Any:
    """`value` with every string that is a key of `table` replaced by its entry."""
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, Mapping):
        return {k: _replace_strings(v, table) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_strings(v, table) for v in value]
    return value


def _contains(value: Any, strings: set[str]) -> bool:
    if isinstance(value, str):
        return value in strings
    if isinstance(value, Mapping):
        return any(_contains(v, strings) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_contains(v, strings) for v in value)
    return False


# Kinds whose API server sets metadata.generation (their types' docs: "Changing the spec automatically increments the
# metadata.generation number", kubernetes/api@10b39a39b resource/v1/types.go:2248 for DeviceClass; the observed
# generation of apps/v1/types.go:530 Deployment and :754 DaemonSet).
_GENERATION_KINDS = {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "DeviceClass"}


def _live(obj: Mapping[str, Any], seed: str, dry_run: bool = False) -> dict[str, Any]:
    """A Kubernetes object as the provider stores it after a create: the live object from the API server
    (pulumi-kubernetes@94977969d provider/pkg/provider/provider.go:1852-1893, checkpointObject at 3087-3123), i.e. the
    object plus the metadata the server adds. `dry_run`: a preview's server-side dry-run create, which returns no
    status (provider.go:1850-1854) and, from general API-server behaviour (not verified), no resourceVersion.
    managedFields and server-defaulted spec fields are left out to keep the model small."""
    live = copy.deepcopy(dict(obj))
    meta = dict(_mapping(live.get("metadata")))
    kind = str(live.get("kind", ""))
    meta["uid"] = _uuid(f"uid:{seed}")
    meta["creationTimestamp"] = CREATED_AT
    if not dry_run:
        meta["resourceVersion"] = str(100000 + int(_digest(f"rv:{seed}")[:8], 16) % 900000)
    if kind in _GENERATION_KINDS:
        meta["generation"] = 1
    if kind == "Namespace":
        # Every namespace carries its name as a label (kubernetes/api@10b39a39b core/v1/well_known_labels.go:73).
        meta["labels"] = {**_mapping(meta.get("labels")), "kubernetes.io/metadata.name": meta.get("name", "")}
        live["spec"] = {"finalizers": ["kubernetes"], **_mapping(live.get("spec"))}
        if not dry_run:
            live["status"] = {"phase": "Active"}
    if kind == "ResourceQuota" and not dry_run:
        hard = dict(_mapping(_mapping(live.get("spec")).get("hard")))
        live["status"] = {"hard": hard, "used": {key: "0" for key in hard}}
    live["metadata"] = meta
    return live


# ------------------------------------------------------------------------------------------------------ the model
class _EngineUrns:
    """URNs as the engine builds them: the parent's whole qualified type, `$`, the type; nothing for the root stack
    (pulumi/pulumi@1b5949891b pkg/resource/deploy/deployment.go:796-805 generateURN; sdk/go/common/resource/urn/
    urn.go:80-93). The mock monitor joins only the parent type's last element instead (pulumi/runtime/mocks.py
    make_urn), and gives root children a `pulumi:pulumi:Stack$` prefix."""

    def __init__(self, registered: Sequence[Registered]):
        self._by_urn = {r.urn: r for r in registered}
        self._done: dict[str, str] = {}

    def of(self, mock_urn: str) -> str:
        """The engine URN of a registered resource; anything else (the root stack, "") unchanged."""
        if mock_urn in self._done:
            return self._done[mock_urn]
        r = self._by_urn.get(mock_urn)
        if r is None:
            return mock_urn
        stack_project = r.urn.rsplit("::", 2)[0]
        parent = self.of(r.parent) if r.parent else ""
        parent_type = _qualified_type(parent)
        chain = r.type if not parent_type or parent_type == ROOT_STACK else f"{parent_type}${r.type}"
        self._done[mock_urn] = _urn(stack_project, chain, r.name)
        return self._done[mock_urn]

    @property
    def table(self) -> dict[str, str]:
        return {urn: self.of(urn) for urn in self._by_urn if self.of(urn) != urn}


def _child_urn(parent_urn: str, type_: str, name: str) -> str:
    return _urn(parent_urn.rsplit("::", 2)[0], f"{_qualified_type(parent_urn)}${type_}", name)


def _is_kubernetes_object(type_: str) -> bool:
    return type_.startswith("kubernetes:") and not type_.startswith(("kubernetes:helm.sh/", "kubernetes:yaml/"))


def _is_component(type_: str) -> bool:
    """Components: the remote ones and pulumi-eks's, plus this project's own (package gpu-dra)."""
    return type_.startswith(("eks:index:", "gpu-dra:")) or type_ == CHART


def _mock_id(r: Registered) -> str:
    """The ID the mock run gave a custom resource: `<name>-id` (gpu_dra/cli/offline.py `_Mocks.new_resource`), which
    is also what other resources' inputs carry where the program passed the resource itself."""
    return str(r.outputs.get("id") or f"{r.name}-id")


class _Model:
    def __init__(self, registered: Sequence[Registered], first_preview: bool):
        self.registered = list(registered)
        self.first = first_preview
        self.urns = _EngineUrns(self.registered)
        self.by_urn = {r.urn: r for r in self.registered}
        self.by_id = {_mock_id(r): r for r in self.registered if not _is_component(r.type)}
        # Values a create computes, as the mock run shows them (ids, ARNs): in a first preview every resource is new,
        # so an input carrying one of them is unknown.
        self.computed: set[str] = set(self.by_id)
        for r in self.registered:
            arn = r.outputs.get("arn")
            if isinstance(arn, str) and not _is_component(r.type):
                self.computed.add(arn)
        self.account = next((str(r.outputs["arn"]).split(":")[4] for r in self.registered
                             if str(r.outputs.get("arn", "")).count(":") >= 5
                             and str(r.outputs["arn"]).split(":")[4]), DEFAULT_ACCOUNT)
        # A new EKS cluster's kubeconfig is an output of the cluster (components/cluster.py cluster_access): unknown
        # in a first preview, so the engine never configures that Kubernetes provider (pulumi/pulumi@1b5949891b
        # pkg/resource/plugin/provider_plugin.go:1064-1080).
        self.k8s_unconfigured = first_preview and any(r.type == EKS_CLUSTER for r in self.registered)

    # -------------------------------------------------------------------------------------------- the whole view
    def view(self) -> list[EngineResource]:
        out: list[EngineResource] = []
        for r in self.registered:
            out.append(self.resource(r))
            if r.type == EKS_CLUSTER:
                out += self.eks_cluster_children(r)
            elif r.type == MANAGED_NODE_GROUP:
                out.append(self.node_group_child(r))
            elif r.type == CHART:
                out += self.chart_children(r)
        return out

    def _rewrite(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """Mock URNs as engine URNs; in a first preview, computed values as UNKNOWN."""
        table: dict[str, Any] = dict(self.urns.table)
        if self.first:
            table.update(dict.fromkeys(self.computed, UNKNOWN))
        result = _replace_strings(value, table)
        return dict(result) if isinstance(result, Mapping) else {}

    def _unknown_if_new(self, value: Any) -> Any:
        """A value the provider's code builds with `apply` over others: wholly unknown in a first preview when any
        part of it is computed by a create."""
        return UNKNOWN if self.first and _contains(value, self.computed) else value

    def _known(self, value: Any) -> Any:
        """A computed value: UNKNOWN in a first preview."""
        return UNKNOWN if self.first else value

    def resource(self, r: Registered) -> EngineResource:
        inputs, outputs = self._rewrite(r.inputs), self._rewrite(r.outputs)
        if r.type == EKS_CLUSTER:
            inputs, outputs = {}, self.eks_cluster_outputs(r)
        elif r.type == MANAGED_NODE_GROUP:
            inputs, outputs = {}, self.node_group_outputs(r)
        elif r.type == CHART:
            # chart.go:158 registers the component with no props, and Construct's outputs reach only the caller,
            # never the state (pulumi-kubernetes@94977969d provider/pkg/provider/helm/v4/chart.go:316-319).
            inputs, outputs = {}, {}
        elif _is_kubernetes_object(r.type):
            outputs = self.kubernetes_outputs(inputs, r.urn)
        elif r.type == K8S_PROVIDER and self.k8s_unconfigured:
            inputs = {**inputs, "kubeconfig": UNKNOWN}
            outputs = {**outputs, "kubeconfig": UNKNOWN}
        elif r.type.startswith("aws:"):
            outputs = {"id": _mock_id(r), **outputs}
            if self.first:
                # Computed by the create: the ARN and ID of every resource, and a launch template's versions.
                outputs.update(id=UNKNOWN, arn=UNKNOWN)
                if r.type == "aws:ec2/launchTemplate:LaunchTemplate":
                    outputs.update(latestVersion=UNKNOWN, defaultVersion=UNKNOWN)
        return EngineResource(r.type, r.name, self.urns.of(r.urn), self.urns.of(r.parent), r.protect, inputs,
                              outputs)

    def kubernetes_outputs(self, inputs: Mapping[str, Any], seed: str) -> dict[str, Any]:
        """A Kubernetes object's state outputs: the live object; in a first preview nothing when the provider is not
        configured (provider_plugin.go:1425-1443 returns no properties), else the server dry-run."""
        if self.k8s_unconfigured:
            return {}
        return _live(inputs, seed, dry_run=self.first)

    # ------------------------------------------------------------------------------------------- lookups
    def region(self, r: Registered) -> str | None:
        """The region of the aws provider a remote component's children use: the program's explicit provider, which
        the Python SDK hands a remote component of another package as its `providers` map, so children inherit it
        (site-packages/pulumi/runtime/resource.py:255-275). Found as the aws provider registered next to the
        component or next to one of its ancestors; else the run's only aws provider. The Check of pulumi-aws then
        copies it onto every resource (pulumi/pulumi-aws@72bd5227 provider/region.go:43 applyRegion)."""
        providers = [p for p in self.registered if p.type == AWS_PROVIDER]
        parent = r.parent
        while parent:
            for p in providers:
                if p.parent == parent and p.inputs.get("region"):
                    return str(p.inputs["region"])
            parent = self.by_urn[parent].parent if parent in self.by_urn else ""
        if len(providers) == 1 and providers[0].inputs.get("region"):
            return str(providers[0].inputs["region"])
        return None

    def cluster_of(self, node_group: Registered) -> Registered | None:
        ref = node_group.inputs.get("cluster")
        if isinstance(ref, str) and ref in self.by_urn:
            return self.by_urn[ref]
        clusters = [r for r in self.registered if r.type == EKS_CLUSTER]
        return clusters[0] if len(clusters) == 1 else None

    @staticmethod
    def cluster_name(cluster: Registered) -> str:
        """The EKS cluster's name: the component's `name` input; without one pulumi-aws autonames the
        `<component>-eksCluster` resource (Pulumi's random 7-character suffix; invented here)."""
        name = cluster.inputs.get("name")
        if isinstance(name, str) and name:
            return name
        return f"{cluster.name}-eksCluster-{_digest(cluster.urn)[:7]}"

    def arn(self, service: str, region: str | None, rest: str) -> str:
        return f"arn:aws:{service}:{region or ''}:{self.account}:{rest}"

    @staticmethod
    def _tags_all(tags: Any) -> Any:
        """Check's `tagsAll`: the provider's defaultTags (none here) merged with `tags`; `{}` when both are empty,
        unknown when the tags hold an unknown (pulumi/pulumi-aws@1128bcae provider/tags.go:25-44 applyTags, 50-53)."""
        if _contains(tags, {UNKNOWN}):
            return UNKNOWN
        return dict(tags) if isinstance(tags, Mapping) else {}

    # ------------------------------------------------------------------------------------------- eks:index:Cluster
    def _cluster_facts(self, r: Registered) -> dict[str, Any]:
        """Values of the eks Cluster that its children and outputs share, invented deterministically from names."""
        name = self.cluster_name(r)
        region = self.region(r)
        h = _digest(self.urns.of(r.urn))
        return {
            "name": name, "region": region,
            "endpoint": f"https://{h[:32].upper()}.gr7.{region or 'us-east-1'}.eks.amazonaws.com",
            "oidc": f"https://oidc.eks.{region or 'us-east-1'}.amazonaws.com/id/{h[32:64].upper()}",
            "clusterSg": f"sg-{h[:17]}", "nodeSg": f"sg-{h[17:34]}", "eksSg": f"sg-{h[34:51]}",
            "ingressRuleId": f"sgr-{h[8:25]}", "ingressRule": f"sgrule-{int(h[:8], 16)}",
            "roleName": f"{r.name}-eksRole-role-{h[51:58]}",
        }

    def _cluster_subnets(self, inputs: Mapping[str, Any]) -> list[Any]:
        """`subnetIds`, else public followed by private (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/cluster/cluster.ts:
        503-511). Without any, pulumi-eks looks up the default VPC's subnets (488-498): not modelled, []."""
        if inputs.get("subnetIds") is not None:
            return list(inputs["subnetIds"])
        return [*(inputs.get("publicSubnetIds") or []), *(inputs.get("privateSubnetIds") or [])]

    def eks_cluster_children(self, r: Registered) -> list[EngineResource]:
        """The children pulumi-eks's Cluster registers that the pack reads: the `aws:eks/cluster:Cluster`, and the
        VPC CNI add-on. Not modelled: the ServiceRole and its role and attachment, the cluster and node security
        groups and their rules, the `<name>-eks-k8s` Kubernetes provider, access entries and their policy
        associations (cluster.ts:529-583, 914-921, 1028-1058)."""
        engine_urn = self.urns.of(r.urn)
        children = [self.aws_eks_cluster(r, engine_urn)]
        if self._vpc_cni_enabled(r):
            children += self.vpc_cni(r, engine_urn)
        return children

    @staticmethod
    def _vpc_cni_enabled(r: Registered) -> bool:
        """cluster.ts:1091-1093: the add-on is created unless useDefaultVpcCni is set, defaulting to "not auto mode"
        (the program sets it: its own `aws.eks.Addon` is the one vpc-cni)."""
        if r.inputs.get("useDefaultVpcCni") is not None:
            return not r.inputs["useDefaultVpcCni"]
        return not _mapping(r.inputs.get("autoMode")).get("enabled")

    def aws_eks_cluster(self, r: Registered, parent: str) -> EngineResource:
        """pulumi-eks's `aws.eks.Cluster("<name>-eksCluster", ...)` (cluster.ts:687-761) after pulumi-aws's Check."""
        inputs, facts = self._rewrite(r.inputs), self._cluster_facts(r)
        auto_mode = bool(_mapping(inputs.get("autoMode")).get("enabled"))
        vpc: dict[str, Any] = {}
        # cluster.ts:551-570: pulumi-eks's own cluster security group unless one is given or defaults are skipped.
        if inputs.get("clusterSecurityGroup"):
            vpc["securityGroupIds"] = [inputs["clusterSecurityGroup"]]
        elif not inputs.get("skipDefaultSecurityGroups", auto_mode):
            vpc["securityGroupIds"] = [self._known(facts["clusterSg"])]
        vpc["subnetIds"] = self._unknown_if_new(self._cluster_subnets(r.inputs))
        for key in ("endpointPrivateAccess", "endpointPublicAccess", "publicAccessCidrs"):  # cluster.ts:701-722
            if inputs.get(key) is not None:
                vpc[key] = inputs[key]
        # cluster.ts:724-731, the component's resource name, not the cluster name.
        tags = {"Name": f"{r.name}-eksCluster", **_mapping(inputs.get("clusterTags")), **_mapping(inputs.get("tags"))}
        args: dict[str, Any] = {
            "name": facts["name"],
            "roleArn": self._known(self.arn("iam", "", f"role/{facts['roleName']}")),
            # cluster.ts:698-700
            "bootstrapSelfManagedAddons": False if auto_mode else inputs.get("bootstrapSelfManagedAddons", True),
            "vpcConfig": vpc,
            "tags": tags,
        }
        for key in ("version", "enabledClusterLogTypes", "upgradePolicy", "deletionProtection"):
            if inputs.get(key) is not None:
                args[key] = inputs[key]
        key_arn = r.inputs.get("encryptionConfigKeyArn")
        if key_arn:
            # cluster.ts:586-606 (the branch at 593): an apply over the key ARN, so wholly unknown while the key is new.
            args["encryptionConfig"] = self._unknown_if_new(
                {"provider": {"keyArn": key_arn}, "resources": ["secrets"]})
        if inputs.get("authenticationMode"):  # cluster.ts:733-741
            args["accessConfig"] = {"authenticationMode": inputs["authenticationMode"],
                                    "bootstrapClusterCreatorAdminPermissions": True}
        if facts["region"]:
            args["region"] = facts["region"]
        args["tagsAll"] = self._tags_all(tags)

        outputs = copy.deepcopy(args)
        region = facts["region"]
        outputs.update(
            # The ID of aws_eks_cluster is its name (hashicorp/terraform-provider-aws@e33a89d0 internal/service/eks/
            # cluster.go resourceClusterCreate, d.SetId(cluster name)); the rest is invented in the API's shapes.
            arn=self._known(self.arn("eks", region, f"cluster/{facts['name']}")),
            id=self._known(facts["name"]),
            endpoint=self._known(facts["endpoint"]),
            status=self._known("ACTIVE"),
            platformVersion=self._known("eks.5"),
            certificateAuthority=self._known({"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}),
            identities=self._known([{"oidcs": [{"issuer": facts["oidc"]}]}]),
        )
        out_vpc = outputs["vpcConfig"]
        out_vpc["clusterSecurityGroupId"] = self._known(facts["eksSg"])
        out_vpc["vpcId"] = self._known(inputs.get("vpcId", ""))
        if "publicAccessCidrs" not in out_vpc:
            # AWS's default: "The default value is 0.0.0.0/0" (https://docs.aws.amazon.com/eks/latest/APIReference/
            # API_VpcConfigRequest.html, publicAccessCidrs; the excerpt read was cut just before the value). That the
            # API reports it with public access disabled too is not verified.
            out_vpc["publicAccessCidrs"] = self._known(["0.0.0.0/0"])
        name = f"{r.name}-eksCluster"
        # protect and the provider are inherited from the component (pulumi/pulumi@1b5949891b pkg/resource/deploy/
        # source_eval.go:2004-2010 inheritFromParent).
        return EngineResource("aws:eks/cluster:Cluster", name, _child_urn(parent, "aws:eks/cluster:Cluster", name),
                              parent, r.protect, args, outputs)

    def vpc_cni(self, r: Registered, parent: str) -> list[EngineResource]:
        """`VpcCniAddon("<name>-vpc-cni")` and its `aws.eks.Addon` of the same name (pulumi/pulumi-eks@7bf0c1b1
        nodejs/eks/addons/cni-addon.ts:250-321; created at cluster.ts:1094-1112)."""
        inputs, facts = self._rewrite(r.inputs), self._cluster_facts(r)
        options = _mapping(inputs.get("vpcCniOptions"))
        name = f"{r.name}-vpc-cni"
        component_urn = _child_urn(parent, VPC_CNI_ADDON, name)
        args: dict[str, Any] = {
            "addonName": "vpc-cni",
            # The newest vpc-cni for the cluster's version (aws.eks.getAddonVersion, mostRecent: cni-addon.ts:273-281):
            # known in a preview (the version is a plain input), but its value is invented here.
            "addonVersion": options.get("addonVersion", "v1.20.0-eksbuild.1"),
            "clusterName": facts["name"],
            "preserve": True,
            "resolveConflictsOnCreate": options.get("resolveConflictsOnCreate", "OVERWRITE"),
            "resolveConflictsOnUpdate": options.get("resolveConflictsOnUpdate", "OVERWRITE"),
            # configurationValues (a JSON string of the CNI's environment, cni-addon.ts:290-295) is not modelled.
        }
        if options.get("serviceAccountRoleArn"):
            args["serviceAccountRoleArn"] = options["serviceAccountRoleArn"]
        if inputs.get("tags"):
            args["tags"] = dict(inputs["tags"])
        if facts["region"]:
            args["region"] = facts["region"]
        args["tagsAll"] = self._tags_all(args.get("tags"))
        # The ID of aws_eks_addon is "<cluster>:<addon>" (hashicorp/terraform-provider-aws@152868a8 internal/service/
        # eks/id.go:11-18 AddonCreateResourceID).
        addon_id = f"{facts['name']}:vpc-cni"
        addon_outputs = {**copy.deepcopy(args), "id": self._known(addon_id), "arn": self._known(self.arn(
            "eks", facts["region"], f"addon/{facts['name']}/vpc-cni/{_uuid(name)}"))}
        return [
            # A Node.js component inside the provider sends no props (pulumi/pulumi@v3.173.0 sdk/nodejs/resource.ts:
            # 1219-1231, the version pulumi-eks bundles: nodejs/eks/yarn.lock:1794-1796); registerOutputs({addon})
            # at cni-addon.ts:320 stores the custom resource's reference, which reaches a policy as its ID.
            EngineResource(VPC_CNI_ADDON, name, component_urn, parent, r.protect, {},
                           {"addon": self._known(addon_id)}),
            EngineResource("aws:eks/addon:Addon", name, _child_urn(component_urn, "aws:eks/addon:Addon", name),
                           component_urn, r.protect, args, addon_outputs),
        ]

    def eks_cluster_outputs(self, r: Registered) -> dict[str, Any]:
        """The 19 outputs pulumi-eks registers (cluster.ts:2301-2321, values from 2183-2212), minus defaultNodeGroup,
        which is undefined (so omitted) with skipDefaultNodeGroup; a default node group is not modelled. Resource
        outputs arrive as the resource's ID (custom) or URN (component). In a first preview the values computed by
        creates are unknown; `core` is one object lifted over them, so wholly unknown."""
        inputs, facts = self._rewrite(r.inputs), self._cluster_facts(r)
        kubeconfig = self._kubeconfig(facts)
        oidc_provider_arn = ""
        if inputs.get("createOidcProvider"):
            oidc_provider_arn = self._known(self.arn("iam", "", f"oidc-provider/{facts['oidc'][8:]}"))
        core: dict[str, Any] = {  # cluster.ts:1266-1290; undefined members omitted
            "vpcId": inputs.get("vpcId", ""),
            "subnetIds": self._cluster_subnets(inputs),
            "clusterSecurityGroup": facts["clusterSg"],
            "cluster": facts["name"],
            "endpoint": facts["endpoint"],
            "nodeGroupOptions": {**{k: inputs[k] for k in ("nodeAssociatePublicIpAddress", "version") if k in inputs},
                                 "nodeSecurityGroup": facts["nodeSg"], "clusterIngressRule": facts["ingressRule"]},
            "kubeconfig": kubeconfig,
            "provider": _uuid(f"provider:{r.urn}"),
            "instanceRoles": [],
            "storageClasses": {},
            "clusterIamRole": facts["roleName"],
            "autoModeNodeRoleName": "",
        }
        for key in ("privateSubnetIds", "publicSubnetIds", "tags", "nodeSecurityGroupTags"):
            if inputs.get(key) is not None:
                core[key] = inputs[key]
        if self._vpc_cni_enabled(r):  # the VpcCniAddon component, by URN
            core["vpcCni"] = _child_urn(self.urns.of(r.urn), VPC_CNI_ADDON, f"{r.name}-vpc-cni")
        if inputs.get("encryptionConfigKeyArn"):
            core["encryptionConfig"] = {"provider": {"keyArn": inputs["encryptionConfigKeyArn"]},
                                        "resources": ["secrets"]}
        if inputs.get("accessEntries"):
            core["accessEntries"] = list(_mapping(inputs["accessEntries"]).values())
        return {
            "autoModeNodeRoleName": "",
            "clusterIngressRuleId": self._known(facts["ingressRuleId"]),
            "clusterSecurityGroup": self._known(facts["clusterSg"]),
            "clusterSecurityGroupId": self._known(facts["clusterSg"]),
            "core": self._known(core),
            "defaultNodeGroupAsgName": "",
            "eksCluster": self._known(facts["name"]),  # the aws:eks/cluster:Cluster's ID: its name
            "eksClusterIngressRule": self._known(facts["ingressRule"]),
            "fargateProfileId": "",
            "fargateProfileStatus": "",
            "instanceRoles": [],  # no instance role is created with skipDefaultNodeGroup and none given
            "kubeconfig": self._known(kubeconfig),
            "kubeconfigJson": self._known(json.dumps(kubeconfig)),
            "nodeSecurityGroup": self._known(facts["nodeSg"]),
            "nodeSecurityGroupId": self._known(facts["nodeSg"]),
            "oidcIssuer": self._known(facts["oidc"].removeprefix("https://")),
            "oidcProviderArn": oidc_provider_arn,
            "oidcProviderUrl": self._known(facts["oidc"]),
        }

    @staticmethod
    def _kubeconfig(facts: Mapping[str, Any]) -> dict[str, Any]:
        """pulumi-eks's kubeconfig for `aws eks get-token` (cluster.ts:203-280 generateKubeconfig)."""
        return {
            "apiVersion": "v1",
            "clusters": [{"cluster": {"server": facts["endpoint"],
                                      "certificate-authority-data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
                          "name": "kubernetes"}],
            "contexts": [{"context": {"cluster": "kubernetes", "user": "aws"}, "name": "aws"}],
            "current-context": "aws",
            "kind": "Config",
            "users": [{"name": "aws", "user": {"exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
                "args": ["--region", facts["region"] or "", "eks", "get-token", "--cluster-name", facts["name"],
                         "--output", "json"],
                "env": [{"name": "KUBERNETES_EXEC_INFO",
                         "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}'}]}}}],
        }

    # ------------------------------------------------------------------------------- eks:index:ManagedNodeGroup
    # Arguments that make pulumi-eks build its own launch template (nodegroup.ts:2128-2138, 2180-2185), and the
    # custom-user-data ones among them that drop amiType and version (2068-2072).
    _CUSTOM_USER_DATA = ("kubeletExtraArgs", "bootstrapExtraArgs", "bottlerocketSettings", "nodeadmExtraOptions")
    _CUSTOM_LAUNCH_TEMPLATE = (*_CUSTOM_USER_DATA, "enableIMDSv2", "userData", "amiId", "enableEfaSupport")
    # The args the aws NodeGroup constructor keeps from pulumi-eks's spread of the component's args, each only when
    # given. A Capacity Block group names no instanceTypes (its launch template carries the type), so its NodeGroup
    # has none in inputs or in state: EKS reports instanceTypes null for a group deployed with a launch template
    # (https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html, instanceTypes). That the API still
    # reports the types a node group named itself, as the model keeps them for the other groups, is not verified.
    _NODE_GROUP_ARGS = ("amiType", "capacityType", "diskSize", "forceUpdateVersion", "instanceTypes", "labels",
                        "nodeGroupName", "nodeGroupNamePrefix", "nodeRepairConfig", "releaseVersion", "remoteAccess",
                        "taints", "updateConfig", "version", "tags")

    def _node_group(self, r: Registered) -> tuple[dict[str, Any], dict[str, Any], str | None]:
        """The NodeGroup's inputs after Check, its outputs, and its ID."""
        inputs = self._rewrite(r.inputs)
        cluster = self.cluster_of(r)
        cluster_name = inputs.get("clusterName") or (self.cluster_name(cluster) if cluster else "")
        region = self.region(r)
        args = {k: copy.deepcopy(inputs[k]) for k in self._NODE_GROUP_ARGS if inputs.get(k) is not None}
        # nodegroup.ts:1886-1891: the cluster's version only when neither a version nor a launch template is given.
        if "version" not in args and not inputs.get("launchTemplate") and cluster:
            cluster_version = cluster.inputs.get("version")
            if cluster_version is not None:
                args["version"] = cluster_version
        custom_template = any(inputs.get(k) is not None for k in self._CUSTOM_LAUNCH_TEMPLATE)
        if custom_template:
            args.pop("diskSize", None)  # nodegroup.ts:2060, it moves into pulumi-eks's launch template
        if any(inputs.get(k) is not None for k in (*self._CUSTOM_USER_DATA, "userData", "amiId")):
            for key in ("version", "releaseVersion", "amiType"):
                args.pop(key, None)
        # nodegroup.ts:1915-1920: nodeRoleArn as given, else the nodeRole's ARN (the mock run hands the role over as
        # its ID).
        role_arn: Any = inputs.get("nodeRoleArn")
        if role_arn is None and r.inputs.get("nodeRole") is not None:
            role = self.by_id.get(str(r.inputs["nodeRole"]))
            fallback = self.arn("iam", "", f"role/{r.inputs['nodeRole']}")
            role_arn = self._known(role.outputs.get("arn", fallback) if role else fallback)
        scaling = _mapping(inputs.get("scalingConfig"))
        template: Any = inputs.get("launchTemplate")
        if custom_template:  # pulumi-eks's own LaunchTemplate, not modelled beyond its reference
            template = {"id": self._known(f"lt-{_digest(r.urn)[:17]}"), "version": self._known("1")}
        elif isinstance(template, Mapping) and self.first and _contains(r.inputs.get("launchTemplate"),
                                                                        self.computed):
            template = {**template, "id": UNKNOWN, "version": UNKNOWN}  # the new template's id and latestVersion
        args.update(
            clusterName=cluster_name,  # nodegroup.ts:2097
            nodeRoleArn=role_arn,
            # nodegroup.ts:2098-2108: always present, pulumi-eks's defaults 2/1/2.
            scalingConfig={"desiredSize": scaling.get("desiredSize", 2), "minSize": scaling.get("minSize", 1),
                           "maxSize": scaling.get("maxSize", 2)},
            # nodegroup.ts:1957-1972 (the component's subnetIds, else the cluster's); an Output over the list, so
            # wholly unknown when any subnet is new.
            subnetIds=self._unknown_if_new(list(r.inputs["subnetIds"])) if r.inputs.get("subnetIds") is not None
            else self._unknown_if_new(self._cluster_subnets(cluster.inputs) if cluster else []),
        )
        if template is not None:
            args["launchTemplate"] = template
        if region:
            args["region"] = region
        args["tagsAll"] = self._tags_all(args.get("tags"))
        args = {k: args[k] for k in sorted(args)}

        h = _digest(self.urns.of(r.urn))
        # A name from the prefix, as terraform's id.PrefixedUniqueId makes it: a 26-character timestamp and counter
        # (hashicorp/terraform-plugin-sdk@7a74af25 helper/id/id.go:27, 37-47); invented from the URN here.
        prefix = args.get("nodeGroupNamePrefix")
        node_group_name = args.get("nodeGroupName") or (f"{prefix}202601010000000000{h[:8]}" if prefix
                                                        else f"{r.name}-{h[:7]}")
        # The ID of aws_eks_node_group is "<cluster>:<node group>" (hashicorp/terraform-provider-aws@152868a8
        # internal/service/eks/id.go:68-75 NodeGroupCreateResourceID).
        node_group_id = f"{cluster_name}:{node_group_name}"
        outputs = copy.deepcopy(args)
        outputs.update(
            arn=self._known(self.arn("eks", region, f"nodegroup/{cluster_name}/{node_group_name}/{_uuid(r.urn)}")),
            id=self._known(node_group_id),
            nodeGroupName=self._known(node_group_name),
            status=self._known("ACTIVE"),
            resources=self._known([{"autoscalingGroups": [{"name": f"eks-{node_group_name}-{_uuid(r.urn)}"}],
                                    "remoteAccessSecurityGroupId": ""}]),
        )
        if isinstance(template, Mapping):
            outputs["launchTemplate"] = {**template, "name": self._launch_template_name(template)}
        return args, outputs, None if self.first else node_group_id

    def _launch_template_name(self, template: Mapping[str, Any]) -> Any:
        if self.first:
            return UNKNOWN
        source = self.by_id.get(str(template.get("id")))
        return source.outputs.get("name", source.name) if source else template.get("name", "")

    def node_group_outputs(self, r: Registered) -> dict[str, Any]:
        """ManagedNodeGroup's registered outputs (pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/nodegroup.ts:1856-1859):
        the NodeGroup as its ID, and the placement group's name, "" without EFA."""
        _, _, node_group_id = self._node_group(r)
        return {"nodeGroup": node_group_id if node_group_id is not None else UNKNOWN, "placementGroupName": ""}

    def node_group_child(self, r: Registered) -> EngineResource:
        """The one `aws:eks/nodeGroup:NodeGroup`, named like the component (nodegroup.ts:2092-2120)."""
        args, outputs, _ = self._node_group(r)
        parent = self.urns.of(r.urn)
        return EngineResource("aws:eks/nodeGroup:NodeGroup", r.name,
                              _child_urn(parent, "aws:eks/nodeGroup:NodeGroup", r.name), parent, r.protect, args,
                              outputs)

    # ------------------------------------------------------------------------------------- helm.sh/v4:Chart
    def chart_children(self, r: Registered) -> list[EngineResource]:
        """The rendered objects the pack reads, registered by the Chart's Construct (pulumi-kubernetes@94977969d
        provider/pkg/provider/helm/v4/chart.go:151-319). None when the engine never calls Construct (the provider's
        kubeconfig is unknown: provider_plugin.go:2011-2037) or the chart's inputs hold unknowns (chart.go:171-177).
        Objects the pack does not read (RBAC, service accounts, webhooks, CRDs) are not modelled."""
        if self.k8s_unconfigured or (self.first and _contains(r.inputs, self.computed)):
            return []
        chart = str(r.inputs.get("chart", ""))
        chart_name = chart.rstrip("/").rsplit("/", 1)[-1]
        values = _mapping(r.inputs.get("values"))
        release = str(r.inputs.get("name") or r.name)  # chart.go:180-182
        prefix = str(r.inputs.get("resourcePrefix") or r.name)  # chart.go:183-187
        # chart.go:231-232, 287-289: the chart's namespace, else the provider's default one.
        namespace = str(r.inputs.get("namespace") or "default")
        version = str(r.inputs.get("version", ""))
        if chart_name in DRA_CHART_DEFAULTS:
            objects = dra_chart_objects(chart_name, version, helm_merge(DRA_CHART_DEFAULTS[chart_name], values),
                                         release, namespace)
        elif chart_name == "nvidia-device-plugin":
            objects = _device_plugin_objects(version, helm_merge(DEVICE_PLUGIN_CHART_DEFAULTS, values), release,
                                             namespace)
        else:
            return []
        parent = self.urns.of(r.urn)
        children = []
        for obj in objects:
            meta = _mapping(obj.get("metadata"))
            # yaml/v2/yaml.go:344-352: "<prefix>:<namespace>/<name>", or "<prefix>:<name>" for cluster-scoped kinds.
            scoped = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])
            name = f"{prefix}:{scoped}"
            type_ = _k8s_type(str(obj["apiVersion"]), str(obj["kind"]))
            urn = _child_urn(parent, type_, name)
            children.append(EngineResource(type_, name, urn, parent, r.protect, obj,
                                           self.kubernetes_outputs(obj, urn)))
        return children


def _version_at_least(version: str, floor: tuple[int, int]) -> bool:
    """Whether a chart version is `floor` (major, minor) or later; a version that does not parse counts as later."""
    found = re.match(r"^v?(\d+)\.(\d+)", version)
    return found is None or (int(found[1]), int(found[2])) >= floor


def _placement(section: Mapping[str, Any]) -> dict[str, Any]:
    """nodeSelector, affinity and tolerations as the three charts' templates write them: each under `{{- with }}`, so
    left out when empty."""
    return {key: copy.deepcopy(section[key]) for key in ("nodeSelector", "affinity", "tolerations") if section.get(key)}


def dra_chart_objects(chart_name: str, version: str, values: Mapping[str, Any], release: str,
                       namespace: str) -> list[dict[str, Any]]:
    """NVIDIA's DRA driver chart: the kubelet plugin DaemonSet, the controller Deployment, the DeviceClasses.

    Templates at kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/templates/ and
    @v25.12.0 deployments/helm/nvidia-dra-driver-gpu/templates/ (same helpers and structure, names aside):
    _helpers.tpl:4-35 (name, fullname, namespace), :51-89 (labels), :102-109 (serviceAccountName), :187-198 at
    v0.4.1 (resourceApiVersion); kubeletplugin.yaml:15-49 and 372-383 at v0.4.1 (337-348 at v25.12.0) for its placement;
    controller.yaml:15-48 and 117-128 at v0.4.1 (90-101 at v25.12.0); deviceclass-*.yaml.
    """
    name = _helm_name(str(values.get("nameOverride") or chart_name))
    base_name = str(values.get("nameOverride") or chart_name)  # selectorLabels use it untruncated
    if values.get("fullnameOverride"):
        fullname = _helm_name(str(values["fullnameOverride"]))
    else:
        fullname = _helm_name(release if base_name in release else f"{release}-{base_name}")
    ns = str(values.get("namespaceOverride") or namespace)
    account = _mapping(values.get("serviceAccount"))
    service_account = (str(account.get("name") or f"{fullname}-service-account") if account.get("create", True)
                       else str(account.get("name") or "default"))
    template_labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}
    # The charts' appVersion equals their version at both tags read (Chart.yaml).
    labels = {"helm.sh/chart": _helm_name(f"{base_name}-{version}".replace("+", "_")),
              "app.kubernetes.io/version": version, "app.kubernetes.io/managed-by": "Helm", **template_labels}
    resources = _mapping(values.get("resources"))
    gpus = bool(_mapping(resources.get("gpus")).get("enabled"))
    compute_domains = bool(_mapping(resources.get("computeDomains")).get("enabled"))
    # A set resourceApiVersion wins; else the newest the cluster serves: v1 on every Kubernetes gpu-dra targets.
    api_version = str(values.get("resourceApiVersion") or "resource.k8s.io/v1")
    # The 25.x line gained the vfio class and the gpu class's extendedResourceName at 25.12.0 (absent from
    # deviceclass-*.yaml at v25.8.0); the 0.4.x line has both.
    current = chart_name == "dra-driver-nvidia-gpu" or _version_at_least(version, (25, 12))

    def workload(kind: str, component: str, section: Mapping[str, Any], account_suffix: str) -> dict[str, Any]:
        selector = {f"{base_name}-component": component}
        spec: dict[str, Any] = {}
        if section.get("priorityClassName"):
            spec["priorityClassName"] = section["priorityClassName"]
        spec["serviceAccountName"] = f"{service_account}-{account_suffix}"
        spec.update(_placement(section))
        body: dict[str, Any] = {"selector": {"matchLabels": selector},
                                "template": {"metadata": {"labels": {**template_labels, **selector}}, "spec": spec}}
        if kind == "Deployment":
            # controller.yaml:25, .Values.controller.replicas at v0.4.1; a literal 1 at v25.12.0.
            body = {"replicas": section.get("replicas", 1), **body}
        return {"apiVersion": "apps/v1", "kind": kind,
                "metadata": {"name": f"{name}-{component}", "namespace": ns, "labels": dict(labels)}, "spec": body}

    objects: list[dict[str, Any]] = []
    if gpus or compute_domains:  # kubeletplugin.yaml:15
        objects.append(workload("DaemonSet", "kubelet-plugin", _mapping(values.get("kubeletPlugin")), "kubeletplugin"))
    if compute_domains:  # controller.yaml:15: the controller serves ComputeDomains only
        objects.append(workload("Deployment", "controller", _mapping(values.get("controller")), "controller"))
    classes = []
    if gpus:
        classes += ["gpu.nvidia.com", "mig.nvidia.com", *(["vfio.gpu.nvidia.com"] if current else [])]
    if compute_domains:
        classes += ["compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"]
    for device_class in classes:
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in CHART_CLASS_SELECTORS[device_class]]}
        if device_class == "gpu.nvidia.com" and current and api_version == "resource.k8s.io/v1":
            spec["extendedResourceName"] = "nvidia.com/gpu"  # deviceclass-gpu.yaml:12-14
        objects.append({"apiVersion": api_version, "kind": "DeviceClass", "metadata": {"name": device_class},
                        "spec": spec})
    return objects


def _device_plugin_objects(version: str, values: Mapping[str, Any], release: str,
                           namespace: str) -> list[dict[str, Any]]:
    """NVIDIA's device plugin chart: its DaemonSet (NVIDIA/k8s-device-plugin@v0.18.2 deployments/helm/
    nvidia-device-plugin/templates/daemonset-device-plugin.yml:15-45 and 262-273 for placement; _helpers.tpl:5-78 for
    names and labels) and the MPS control daemon's, rendered with it whenever the plugin is
    (daemonset-mps-control-daemon.yml:14-22 and 206-219: its own name, nodeSelector nvidia.com/mps.capable=true
    before the chart's, the same affinity and tolerations). gpu-feature-discovery is off by default and not
    modelled."""
    if not _mapping(values.get("devicePlugin")).get("enabled", True):
        return []
    chart_name = "nvidia-device-plugin"
    base_name = str(values.get("nameOverride") or chart_name)
    if values.get("fullnameOverride"):
        fullname = _helm_name(str(values["fullnameOverride"]))
    else:
        fullname = _helm_name(release if base_name in release else f"{release}-{base_name}")
    template_labels = {"app.kubernetes.io/name": _helm_name(base_name), "app.kubernetes.io/instance": release}
    labels = {"helm.sh/chart": _helm_name(f"{base_name}-{version}".replace("+", "_")), **template_labels,
              "app.kubernetes.io/version": version, "app.kubernetes.io/managed-by": "Helm"}
    spec: dict[str, Any] = {}
    if values.get("priorityClassName"):
        spec["priorityClassName"] = values["priorityClassName"]
    mps = {**spec, **_placement(values)}
    mps["nodeSelector"] = {"nvidia.com/mps.capable": "true", **_mapping(values.get("nodeSelector"))}
    spec.update(_placement(values))

    def daemon_set(name: str, pod: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": str(values.get("namespaceOverride") or namespace),
                             "labels": copy.deepcopy(labels)},
                "spec": {"selector": {"matchLabels": dict(template_labels)},
                         "template": {"metadata": {"labels": dict(template_labels)}, "spec": pod}}}
    return [daemon_set(fullname, spec), daemon_set(_helm_name(f"{fullname}-mps-control-daemon"), mps)]


def engine_view(registered: Sequence[Registered], first_preview: bool = False) -> list[EngineResource]:
    """Every resource as the engine would send it: each registration (a remote component with no inputs and only the
    outputs its provider registers), each remote component followed by the children it registers, which carry its
    configuration. `first_preview`: the first preview of a new stack (every resource new)."""
    return _Model(registered, first_preview).view()

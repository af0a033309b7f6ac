"""Where the DRA objects run: an EKS cluster with system and GPU managed node groups, or an existing cluster.

Either way the result is one Kubernetes provider that every Kubernetes resource of the stack uses.
The VPC is plain pulumi-aws rather than pulumi-awsx: every subnet, route and NAT gateway is then a resource the
policy pack and the offline preview see (a remote awsx component shows as one opaque resource under mocks), and the
project carries one AWS SDK instead of two.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s
from pulumi.runtime.config import is_config_secret

from components import karpenter
from gpu_dra.core.config.models import AccessEntry, Cluster, NodeGroup, Scaling, Stack
from gpu_dra.core.facts import auto_mode, labels
from gpu_dra.core.facts import eks as eks_facts
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.render import names, network, nodes

# EKS access policies by their config name
# (docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
ACCESS_POLICY_ARNS = {
    "cluster-admin": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
    "admin": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAdminPolicy",
    "edit": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy",
    "view": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy",
}
# The managed policies a node needs, and nothing else (docs.aws.amazon.com/eks/latest/userguide/create-node-role.html).
NODE_POLICY_ARNS = {
    "worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "ecr": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
}
# `scheduler` is where kube-scheduler's DRA decisions are logged.
CONTROL_PLANE_LOGS = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


@dataclass
class ClusterAccess:
    # None when this up cannot reach the private endpoint (deployFrom.network: outside): no Kubernetes provider, so
    # nothing on the cluster is declared.
    provider: k8s.Provider | None
    node_groups: list[pulumi.Resource]  # system and GPU groups: what the charts' pods need to land
    karpenter: karpenter.KarpenterCluster | None = None  # with gpu-dra:karpenter only


class Vpc(pulumi.ComponentResource):
    """A VPC across the plan's zones: private subnets for nodes, public ones for NAT and load balancers."""

    def __init__(self, name: str, plan: network.VpcPlan, opts: pulumi.ResourceOptions):
        super().__init__("gpu-dra:cluster:Vpc", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block=plan.cidr, enable_dns_hostnames=True,
                               enable_dns_support=True, tags={"Name": name}, opts=child)
        gateway = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=self.vpc.id, tags={"Name": name}, opts=child)
        public_routes = aws.ec2.RouteTable(f"{name}-public", vpc_id=self.vpc.id, routes=[
            {"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}], tags={"Name": f"{name}-public"}, opts=child)
        self.subnet_ids: dict[network.Subnet, pulumi.Output[str]] = {}
        nat_ids: dict[str, pulumi.Output[str]] = {}
        for zone in plan.zones:
            public = aws.ec2.Subnet(f"{name}-public-{zone.name}", vpc_id=self.vpc.id, availability_zone=zone.name,
                                    cidr_block=zone.public.cidr, map_public_ip_on_launch=False,
                                    tags={"Name": f"{name}-public-{zone.name}", "kubernetes.io/role/elb": "1"},
                                    opts=child)
            aws.ec2.RouteTableAssociation(f"{name}-public-{zone.name}", subnet_id=public.id,
                                          route_table_id=public_routes.id, opts=child)
            self.subnet_ids[zone.public] = public.id
            if zone.nat:
                eip = aws.ec2.Eip(f"{name}-nat-{zone.name}", domain="vpc", tags={"Name": f"{name}-nat-{zone.name}"},
                                  opts=child)
                nat = aws.ec2.NatGateway(f"{name}-nat-{zone.name}", allocation_id=eip.id, subnet_id=public.id,
                                         tags={"Name": f"{name}-nat-{zone.name}"}, opts=child)
                nat_ids[zone.name] = nat.id
            private = aws.ec2.Subnet(f"{name}-private-{zone.name}", vpc_id=self.vpc.id, availability_zone=zone.name,
                                     cidr_block=zone.private.cidr,
                                     tags={"Name": f"{name}-private-{zone.name}",
                                           "kubernetes.io/role/internal-elb": "1"},
                                     opts=child)
            routes = aws.ec2.RouteTable(f"{name}-private-{zone.name}", vpc_id=self.vpc.id, routes=[
                {"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat_ids[zone.egress_zone]}],
                tags={"Name": f"{name}-private-{zone.name}"}, opts=child)
            aws.ec2.RouteTableAssociation(f"{name}-private-{zone.name}", subnet_id=private.id,
                                          route_table_id=routes.id, opts=child)
            self.subnet_ids[zone.private] = private.id
        self.register_outputs({"vpcId": self.vpc.id})


def _access_entry(entry: AccessEntry) -> eks.AccessEntryArgs:
    scope = network.access_scope(entry)
    return eks.AccessEntryArgs(principal_arn=entry.principal_arn, access_policies={
        entry.policy.value: eks.AccessPolicyAssociationArgs(
            policy_arn=ACCESS_POLICY_ARNS[entry.policy.value],
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(
                type=scope.type, namespaces=list(scope.namespaces) or None))})


def _scaling(scaling: Scaling) -> dict[str, int]:
    return {"min_size": scaling.min, "desired_size": scaling.desired, "max_size": scaling.max}


def _launch_template(name: str, group: NodeGroup, settings: nodes.LaunchTemplateSettings,
                     opts: pulumi.ResourceOptions) -> aws.ec2.LaunchTemplate:
    """IMDSv2 only, a gp3 volume for container images, the capacity block with its instance type, and Bottlerocket's
    device plugin off."""
    return aws.ec2.LaunchTemplate(
        name,
        metadata_options={"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 2},
        block_device_mappings=[{"device_name": settings.image_volume_device, "ebs": {
            "volume_size": group.disk_size, "volume_type": "gp3", "encrypted": "true",
            "delete_on_termination": "true"}}],
        user_data=settings.user_data_base64,
        instance_type=settings.instance_type,
        instance_market_options={"market_type": "capacity-block"} if settings.capacity_block else None,
        capacity_reservation_specification={"capacity_reservation_target": {
            "capacity_reservation_id": group.capacity_reservation_id}} if settings.capacity_block else None,
        tag_specifications=[{"resource_type": "instance", "tags": {labels.NODE_GROUP_LABEL: group.name}}],
        opts=opts)


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster for DRA: API authentication, encrypted secrets, scheduler logs, no default node group."""

    def __init__(self, stack: Stack, opts: pulumi.ResourceOptions | None = None):
        config: Cluster = stack.config.cluster
        name = config.name
        super().__init__("gpu-dra:cluster:EksCluster", name, None, opts)
        protect = stack.config.protect
        self.aws_provider = aws.Provider(f"{name}-aws", region=config.region,
                                         opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=self.aws_provider)
        plan = network.plan_network(stack.config)
        planned: dict[network.Subnet, pulumi.Output[str]] = {}
        vpc_id: pulumi.Input[str] | None = plan.vpc_id
        # The new VPC's id, which the engine knows in a preview once the VPC exists.
        self.new_vpc_id: pulumi.Output[str] | None = None
        if plan.new_vpc:
            vpc = Vpc(name, plan.new_vpc, child)
            vpc_id, planned = vpc.vpc.id, vpc.subnet_ids
            self.new_vpc_id = vpc.vpc.id

        def subnet_ids(refs: tuple[network.SubnetRef, ...]) -> list[pulumi.Input[str]]:
            """Planned subnets by their resource's id; an existing VPC's as they are."""
            return [planned[ref] if isinstance(ref, network.Subnet) else ref for ref in refs]

        private_subnets = subnet_ids(plan.private_subnets)
        self.private_subnet_ids = private_subnets

        protected = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=protect))
        self.secrets_key = aws.kms.Key(f"{name}-secrets", description=f"EKS secrets envelope encryption for {name}",
                                       enable_key_rotation=True, deletion_window_in_days=30, opts=protected)
        auto_mode = stack.config.auto_mode is not None
        # The managed node groups' role. Auto Mode's nodes run as the role pulumi-eks creates with the cluster
        # (autoMode.createNodeRole, true by default: AmazonEKSWorkerNodeMinimalPolicy and
        # AmazonEC2ContainerRegistryPullOnly, pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:626-647), and
        # "EKS automatically creates an Access Entry for the Node IAM Role during cluster creation" (EKS user guide,
        # create-node-class.html): there is no node group here for this one.
        self.node_role: aws.iam.Role | None = None
        if not auto_mode:
            self.node_role = aws.iam.Role(f"{name}-node", assume_role_policy=json.dumps({
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                               "Action": "sts:AssumeRole"}]}), opts=child)
            for key, arn in NODE_POLICY_ARNS.items():
                aws.iam.RolePolicyAttachment(f"{name}-node-{key}", role=self.node_role.name, policy_arn=arn,
                                             opts=child)
        access_entries = {e.name: _access_entry(e) for e in config.access_entries}
        # Karpenter's nodes join as its node role, which needs an access entry of type EC2_LINUX (aws eks
        # create-access-entry --type EC2_LINUX: aws/karpenter-provider-aws@6213161c website/content/en/preview/
        # getting-started/adding-karpenter-to-existing-eks/scripts/step15-access-entry.sh); pulumi-eks adds one only
        # for its own default node group (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:1028-1057).
        self.karpenter_node_role: aws.iam.Role | None = None
        if stack.config.karpenter:
            self.karpenter_node_role = karpenter.node_role(name, child)
            access_entries[karpenter.NODE_ACCESS_ENTRY] = eks.AccessEntryArgs(
                principal_arn=self.karpenter_node_role.arn, type=eks.AccessEntryType.EC2_LINUX)

        self.cluster = eks.Cluster(
            name,
            name=name,
            version=config.kubernetes_version,
            authentication_mode=eks.AuthenticationMode.API,
            access_entries=access_entries,
            skip_default_node_group=True,
            # Auto Mode: pulumi-eks enables compute (with the built-in general-purpose and system NodePools, whose
            # default NodeClass the GPU NodePools use), block storage and load balancing together, gives the cluster
            # role the Auto Mode policies and sts:TagSession, and creates the cluster without the self-managed
            # add-ons (cluster.ts:513-545, 612-700), as EKS requires (https://docs.aws.amazon.com/eks/latest/
            # userguide/create-cluster-auto.html; "The compute, block storage, and load balancing capabilities must
            # all be enabled or disabled in the same request").
            auto_mode=eks.AutoModeOptionsArgs(enabled=True) if auto_mode else None,
            # pulumi-eks's own cluster and node security groups serve only its self-managed node groups: managed
            # node groups, with no security group in their launch template, get EKS's cluster security group
            # (https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html). Skipped, pulumi-eks reports
            # EKS's group as clusterSecurityGroupId (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:
            # 548-570, 2120-2121, 2196-2198). On a cluster created with them, the change is an in-place update of its
            # security groups (UpdateClusterConfig; terraform-provider-aws 5.25.0 made vpc_config.security_group_ids
            # updatable).
            skip_default_security_groups=True,
            vpc_id=vpc_id,
            private_subnet_ids=private_subnets,
            public_subnet_ids=subnet_ids(plan.public_subnets) or None,
            node_associate_public_ip_address=False,
            endpoint_private_access=config.endpoint.private_access,
            endpoint_public_access=config.endpoint.public_access,
            public_access_cidrs=list(config.endpoint.public_access_cidrs) or None,
            encryption_config_key_arn=self.secrets_key.arn,
            enabled_cluster_log_types=CONTROL_PLANE_LOGS,
            create_oidc_provider=False,
            # pulumi-eks would add a kube-proxy add-on of its own (on unless Auto Mode, its version the newest for the
            # cluster's: cluster.ts:764-796) and a coredns one only with its default node group (1175-1185). Both off:
            # every EKS add-on is declared once, below, with one conflict policy and one version rule (_addons).
            coredns_addon_options={"enabled": False},
            kube_proxy_addon_options={"enabled": False},
            # One vpc-cni add-on, declared with the other EKS add-ons below (one conflict policy, one place to
            # configure them). Unset, pulumi-eks creates its own VpcCniAddon with an `aws.eks.Addon` "vpc-cni" and a
            # second CreateAddon fails with "Addon already exists". useDefaultVpcCni does nothing but skip that
            # add-on (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/cluster/cluster.ts:1089-1112, its only reader); the CNI
            # itself stays: EKS installs it self-managed at creation (bootstrapSelfManagedAddons, true by default at
            # cluster.ts:698-700) and the add-on below adopts it.
            use_default_vpc_cni=True,
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=config.upgrade_policy.value),
            tags={labels.STACK_TAG: stack.name, labels.ENVIRONMENT_TAG: stack.config.environment.value},
            opts=protected)

        # EKS's cluster security group admits only its own members, the control plane's interfaces and the managed
        # nodes (sec-group-reqs.html, "Default cluster security group"), and a private endpoint takes a client only
        # if a group admits it (EKS user guide, clusters/cluster-endpoint.adoc, "Accessing a private only API
        # server"). The nodes share the group, so they are open on 443 to these CIDRs too.
        self.deployer_rule: aws.ec2.SecurityGroupRule | None = None
        if config.deployer_cidrs:
            self.deployer_rule = aws.ec2.SecurityGroupRule(
                f"{name}-deployer-https", type="ingress", protocol="tcp", from_port=443, to_port=443,
                cidr_blocks=list(config.deployer_cidrs), security_group_id=self.cluster.cluster_security_group_id,
                description="pulumi up and kubectl inside the VPC (gpu-dra:cluster.deployFrom)", opts=child)

        self.system_node_group: pulumi.Resource | None = None
        self.gpu_node_groups: list[pulumi.Resource] = []
        if self.node_role is None:  # Auto Mode: its built-in NodePools and the GPU NodePools (components/auto_mode)
            self._addons(config, None, child)
        else:
            self._node_groups(stack, self.node_role, plan, subnet_ids, child)

        # Its credentials reach the cluster as admin: a secret wherever it flows (state, outputs, the provider).
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(self.cluster.kubeconfig_json)
        self.register_outputs({"kubeconfig": self.kubeconfig})

    @property
    def node_groups(self) -> list[pulumi.Resource]:
        """The system and GPU node groups: what the charts' pods need to land (none on Auto Mode)."""
        return [group for group in [self.system_node_group, *self.gpu_node_groups] if group is not None]

    def _node_groups(self, stack: Stack, node_role: aws.iam.Role, plan: network.NetworkPlan,
                     subnet_ids: Callable[[tuple[network.SubnetRef, ...]], list[pulumi.Input[str]]],
                     child: pulumi.ResourceOptions) -> None:
        """The system node group, the add-ons (coredns lands on it), and the GPU node groups."""
        config, name, protect = stack.config.cluster, stack.config.cluster.name, stack.config.protect
        private_subnets = self.private_subnet_ids
        system = config.system_node_group
        system_group = eks.ManagedNodeGroup(
            f"{name}-system", cluster=self.cluster, node_role=node_role,
            node_group_name_prefix=f"{name}-system-", instance_types=list(system.instance_types),
            ami_type=system.ami_type, subnet_ids=private_subnets,
            scaling_config=_scaling(system.scaling),
            labels=dict([labels.SYSTEM_NODE_LABEL]), disk_size=system.disk_size, opts=child)
        self._addons(config, system_group, child)

        self.system_node_group = system_group
        for group in stack.config.node_groups:
            group_name = names.node_group(name, group.name)
            settings = nodes.launch_template_settings(group)
            template = _launch_template(group_name, group, settings, child)
            # Protected as the stack is, save for the up that replaces or removes the group (allowReplacement):
            # the engine refuses to replace a resource protected before and after, and allows unprotecting and
            # replacing in one update (pulumi/pulumi pkg/resource/deploy/step_generator.go, "we do allow
            # unprotecting and replacing to happen in a single update cycle": `new.Protect && old.Protect`).
            group_protected = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(protect=protect and not group.allow_replacement))
            self.gpu_node_groups.append(eks.ManagedNodeGroup(
                # A name prefix (EKS adds a suffix) lets a replacement group be created before the old one goes;
                # the version is explicit because pulumi-eks copies it only when no launch template is given.
                group_name, cluster=self.cluster, node_role=node_role, node_group_name_prefix=f"{group_name}-",
                version=config.kubernetes_version,
                instance_types=None if settings.instance_type else list(group.instance_types),
                ami_type=group.ami_type.value,
                capacity_type=group.capacity_type.value,
                subnet_ids=subnet_ids(plan.node_group_subnets(group)),
                scaling_config=_scaling(group.scaling),
                # EKS scales a Capacity Block group to 0 before the block ends and wants desired 0 for an upgrade
                # (https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html), so `up` must not set
                # the desired size back: pulumi-eks then ignores scalingConfig.desiredSize on the NodeGroup
                # (pulumi/pulumi-eks@7bf0c1b1:nodejs/eks/nodes/nodegroup.ts:2085-2087, 2119).
                ignore_scaling_changes=True if settings.capacity_block else None,
                labels=nodes.node_labels(group),
                taints=[{"key": t.key, "value": t.value, "effect": nodes.EKS_TAINT_EFFECTS[t.effect.value]}
                        for t in nodes.node_taints(group)],
                launch_template={"id": template.id, "version": template.latest_version.apply(str)},
                opts=group_protected))

    def _addons(self, config: Cluster, system_group: pulumi.Resource | None, opts: pulumi.ResourceOptions) -> None:
        """The usual EKS add-ons, adopting the self-managed copies EKS installs at creation (OVERWRITE), each at its
        pinned version or EKS's default one for the stack's kubernetesVersion: EKS updates no add-on with the
        cluster, so a version bump updates them here, after the control plane they depend on.

        coredns waits for the system node group: its pods need a node to become healthy. On Auto Mode (no system
        node group) only the add-ons Auto Mode does not run itself (facts/auto_mode.ADDONS).
        """
        self.addons: dict[str, aws.eks.Addon] = {}
        for addon in eks_facts.EKS_ADDONS if system_group is not None else auto_mode.ADDONS:
            after: list[pulumi.Resource] = ([self.cluster, system_group] if addon == "coredns" and system_group
                                            else [self.cluster])
            version: pulumi.Input[str] = config.addon_versions.get(addon) or aws.eks.get_addon_version_output(
                addon_name=addon, kubernetes_version=config.kubernetes_version, most_recent=False,
                opts=pulumi.InvokeOutputOptions(provider=self.aws_provider)).version
            self.addons[addon] = aws.eks.Addon(
                f"{config.name}-{addon}", cluster_name=config.name, addon_name=addon, addon_version=version,
                resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="PRESERVE",
                opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=after)))


KUBECONFIG_KEY = "gpu-dra:kubeconfig"


def _once_the_vpc_exists(stack: Stack, cluster: EksCluster) -> pulumi.Output[str]:
    """The cluster's kubeconfig for the Kubernetes provider, refusing the run that creates the VPC of a private-only
    endpoint from inside it: nothing runs inside a VPC that does not exist yet, so the provider would find the new
    cluster unreachable and fail every object and chart (gpu_dra/core/policy/engine/first_up.py). The engine's
    preview, before anything is created, knows the VPC's id only once the VPC exists (an id is unknown while a create
    is pending: pulumi 3.272.0 pulumi/runtime/resource.py:1382-1386); the provider's registration waits on this
    value, so the refusal stops the preview, or the preview of `pulumi up`. `pulumi up --skip-preview` has no such
    stage and is not stopped."""
    config = stack.config.cluster
    if cluster.new_vpc_id is None or config.endpoint.public_access:
        return cluster.kubeconfig

    def refuse_a_new_vpc(vpc_id: object) -> None:
        if not isinstance(vpc_id, str):
            raise pulumi.RunError(
                f"stacks/Pulumi.{stack.name}.yaml: gpu-dra:cluster.deployFrom: network: vpc, but this up creates the "
                "stack's VPC and the API endpoint is private only: nothing runs inside a VPC before it exists, so "
                "once the cluster exists the Kubernetes provider cannot reach it and the DRA driver, the DeviceClasses "
                "and the teams' objects fail. Run this first up with deployFrom: {network: outside} (the AWS layer "
                "only), then put network: vpc back and run the next up inside the VPC (docs/deploying.md, \"The "
                "first `pulumi up`\")")

    return pulumi.Output.all(cluster.kubeconfig, cluster.new_vpc_id.apply(refuse_a_new_vpc, run_with_unknowns=True)
                             ).apply(lambda values: str(values[0]))


def cluster_access(stack: Stack) -> tuple[ClusterAccess, dict[str, pulumi.Input]]:
    """The Kubernetes provider of the stack's cluster, and the stack outputs describing it."""
    config = stack.config.cluster
    if config.platform is Platform.existing:
        kubeconfig: pulumi.Input[str] | None = None
        if stack.config.kubeconfig:
            if not is_config_secret(KUBECONFIG_KEY):  # the engine marks the values kept under `secure:`
                pulumi.log.warn(f"stacks/Pulumi.{stack.name}.yaml: {KUBECONFIG_KEY} is stored in plain text, with "
                                "the credentials it holds: encrypt it with `pulumi config set --secret "
                                f"{KUBECONFIG_KEY} < kubeconfig`")
            kubeconfig = pulumi.Output.secret(stack.config.kubeconfig)
        elif config.kubeconfig and config.kubeconfig.path:
            kubeconfig = config.kubeconfig.path
        provider = k8s.Provider("cluster", kubeconfig=kubeconfig,
                                context=config.kubeconfig.context if config.kubeconfig else None,
                                # the provider's copy of its kubeconfig is stored encrypted too
                                opts=pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]))
        return ClusterAccess(provider, []), {"clusterName": config.name}
    cluster = EksCluster(stack)
    on_karpenter = None
    if cluster.karpenter_node_role is not None and cluster.system_node_group is not None:  # never with Auto Mode
        on_karpenter = karpenter.KarpenterCluster(
            name=config.name, region=str(config.region), aws_provider=cluster.aws_provider, cluster=cluster.cluster,
            node_role=cluster.karpenter_node_role, subnet_ids=cluster.private_subnet_ids,
            security_group_id=cluster.cluster.cluster_security_group_id, system_node_group=cluster.system_node_group,
            pod_identity_agent=cluster.addons["eks-pod-identity-agent"])
    outputs: dict[str, pulumi.Input] = {
        "clusterName": config.name,
        "endpoint": cluster.cluster.core.apply(lambda core: core.endpoint),
        "kubeconfig": cluster.kubeconfig,
        "gpuNodeGroups": nodes.gpu_summary(stack.config),
    }
    if not config.deploys_in_cluster_layer:
        return ClusterAccess(None, cluster.node_groups, on_karpenter), outputs
    # The cluster's name identifies it: with clusterIdentifier set and unchanged, a kubeconfig that changes or is
    # computed (any update of the EKS cluster makes it unknown in preview) updates the provider instead of replacing
    # it and every Kubernetes object with it (https://www.pulumi.com/registry/packages/kubernetes/api-docs/provider/,
    # clusterIdentifier; pulumi/pulumi-kubernetes@94977969d:provider/pkg/provider/provider.go:486-516).
    # The provider reads the cluster when it is configured, so it is registered only once the rule admitting the
    # runner exists, even where the kubeconfig is already known (the up after an `outside` one): the SDK awaits each
    # dependency's URN, which the engine returns when that resource's step is done (pulumi 3.272.0
    # pulumi/runtime/resource.py:212-217, pulumi/runtime/rpc.py:334-337).
    provider = k8s.Provider("cluster", kubeconfig=_once_the_vpc_exists(stack, cluster), cluster_identifier=config.name,
                            opts=pulumi.ResourceOptions(parent=cluster, additional_secret_outputs=["kubeconfig"],
                                                        depends_on=[r for r in [cluster.deployer_rule] if r]))
    return ClusterAccess(provider, cluster.node_groups, on_karpenter), outputs

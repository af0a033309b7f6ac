"""DRA objects as typed Kubernetes resources: platform DeviceClasses and, per team, namespace, quota, templates.

Thin by design: the core builds every object as a dict; this module only hands them to typed resource classes.
Resource names derive from the class, team and template names, so adding or reordering entries replaces nothing else.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpu_dra.core.config.models import Stack, Team
from gpu_dra.core.render import manifests, names


def _spec_and_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in obj.items() if key in ("metadata", "spec")}


class DeviceClasses(pulumi.ComponentResource):
    """The platform's DeviceClasses, legacy mappings (extendedResourceName) included."""

    def __init__(self, stack: Stack, opts: pulumi.ResourceOptions):
        super().__init__("gpu-dra:dra:DeviceClasses", "platform", None, opts)
        child = pulumi.ResourceOptions(parent=self)
        for obj in manifests.stack_device_classes(stack):
            k8s.resource.v1.DeviceClass(names.device_class(obj["metadata"]["name"]), **_spec_and_meta(obj), opts=child)
        self.register_outputs({})


class TeamResources(pulumi.ComponentResource):
    """One team's namespace, ResourceQuota and ResourceClaimTemplates, from the team's own file. The namespace
    outlives the stack's hold on it: Kubernetes deletes everything in a deleted namespace, and a team file's rename
    (a replacement) or a team dropped from the stack would delete it, so Pulumi leaves it in the cluster
    (retainOnDelete) and, with `protect`, refuses to delete or replace it at all (the policy team-namespace-kept says
    what such a change stops managing)."""

    def __init__(self, team: Team, opts: pulumi.ResourceOptions, protect: bool = False):
        # Registered as gpu-dra:dra:Team before its type named the class. The alias keeps the deployed team and,
        # through it, every child (the engine derives their old URNs from the parent's) instead of replacing them.
        super().__init__("gpu-dra:dra:TeamResources", team.name, None, pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_="gpu-dra:dra:Team")])))
        child = pulumi.ResourceOptions(parent=self)
        namespace = k8s.core.v1.Namespace(names.namespace(team.name), **_spec_and_meta(manifests.namespace(team)),
                                          opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                                              retain_on_delete=True, protect=protect)))
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=[namespace])
        # A template's spec is immutable in Kubernetes: a change replaces it (pods keep the claims they have).
        replaced_on_change = pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(
            replace_on_changes=["spec"], delete_before_replace=True))
        quota = manifests.resource_quota(team)
        if quota is not None:
            k8s.core.v1.ResourceQuota(names.quota(team.name), **_spec_and_meta(quota), opts=in_namespace)
        for template in team.claim_templates:
            obj = manifests.claim_template(team, template)
            k8s.resource.v1.ResourceClaimTemplate(names.claim_template(team.name, template.name), **_spec_and_meta(obj),
                                                  opts=replaced_on_change)
        self.register_outputs({"namespace": team.namespace_name})

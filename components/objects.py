"""What the components share: a custom resource (a CRD's object) declared from its document as the core renders it."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

_OBJECT_KEYS = {"apiVersion", "kind", "metadata", "spec"}


def custom_resource(resource_name: str, obj: dict[str, Any],
                    opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The object as pulumi-kubernetes' CustomResource. Its Python class takes no field beside `spec`
    (pulumi/pulumi-kubernetes#2363, open), while some kinds keep theirs at the top (Kueue's WorkloadPriorityClass:
    `value`): those are declared as the Node.js SDK declares every custom resource, the whole object as the inputs of
    a `kubernetes:<apiVersion>:<kind>` resource of the provider release this program pins
    (pulumi/pulumi-kubernetes:sdk/nodejs/apiextensions/customResource.ts)."""
    if set(obj) <= _OBJECT_KEYS:
        return k8s.apiextensions.CustomResource(resource_name, api_version=obj["apiVersion"], kind=obj["kind"],
                                                metadata=obj["metadata"], spec=obj.get("spec"), opts=opts)
    pinned = pulumi.ResourceOptions(version=version("pulumi_kubernetes"))
    return pulumi.CustomResource(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", resource_name, dict(obj),
                                 pulumi.ResourceOptions.merge(pinned, opts))

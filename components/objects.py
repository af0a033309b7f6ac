"""What the components share: a custom resource (a CRD's object) declared from its document as the core renders it."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def custom_resource(resource_name: str, obj: dict[str, Any],
                    opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(resource_name, api_version=obj["apiVersion"], kind=obj["kind"],
                                            metadata=obj["metadata"], spec=obj["spec"], opts=opts)

"""Shapes of the resource.k8s.io API that readers of any version need (kubernetes/api@v0.34.0 resource/v1,
v1beta1 and v1beta2 types.go; docs/sources.md#kubernetes-dra-api). Kubernetes' name formats are in `metadata`."""

KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
# The fields v1beta1 puts on a request and v1beta2 and v1 put under `exactly`.
REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def uses_exactly(api_version: str) -> bool:
    """resource.k8s.io/v1 and v1beta2 put request fields under `exactly`; v1beta1 on the request itself."""
    return not api_version.endswith("/v1beta1")


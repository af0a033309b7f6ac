"""Kubernetes semantics gpu-dra computes with: quantities, the CEL environment of DRA selectors, node selection and
tolerations, the API's OpenAPI schemas."""

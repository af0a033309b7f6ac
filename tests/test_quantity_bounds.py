"""Quantities beyond what Kubernetes holds (2^63-1 in magnitude, k8s.io/apimachinery@v0.34.0
pkg/api/resource/quantity.go) are refused where they are parsed, so nothing downstream computes with them: a capacity
request of `1e999999` on a device whose policy rounds up to a step made explain run for minutes."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from gpu_dra.core.dra.quantity import MAX_MAGNITUDE, QuantityError, parse_quantity

SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    attributes:
      type: {string: gpu}
    capacity:
      memory:
        value: 80Gi
        requestPolicy: {default: 10Gi, validRange: {min: 10Gi, max: 80Gi, step: 10Gi}}
"""
CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: huge, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        capacity:
          requests: {memory: '%s'}
"""


@pytest.mark.parametrize("text,value", [
    ("9223372036854775807", MAX_MAGNITUDE), ("-9223372036854775807", -MAX_MAGNITUDE), ("7Ei", Decimal(7 * 2**60)),
    ("0e99999999999", Decimal(0)), ("1e-9", Decimal("1e-9")),
])
def test_quantities_up_to_int64_are_read(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text,message", [
    ("9223372036854775808", "too large"), ("8Ei", "too large"), ("1e999999", "too large"),
    ("1e99999999999999999999", "too large"), ("-1e999999", "too large"), ("1e-99999999999", "below the smallest"),
    ("80Gi\n", "not a Kubernetes quantity"),
])
def test_quantities_beyond_int64_are_refused(text: str, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        parse_quantity(text)


def test_explain_of_a_capacity_request_beyond_int64_ends_at_once(tmp_path: Path) -> None:
    (tmp_path / "slice.yaml").write_text(SLICE)
    (tmp_path / "claim.yaml").write_text(CLAIM % "1e999999")
    result = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", "explain", "--kubernetes-version", "1.36",
                             str(tmp_path / "slice.yaml"), str(tmp_path / "claim.yaml")],
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (1, "")
    assert ("claim ml/huge: NOT allocatable: claim ml/huge, request gpu: capacity request memory: '1e999999' is too "
            "large for a Kubernetes quantity (at most 2^63-1)") in result.stdout

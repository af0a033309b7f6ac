"""Names, labels and annotations as the API server validates them (k8s.io/apimachinery@v0.34.0
pkg/util/validation/validation_test.go and pkg/api/validation/objectmeta_test.go cases), one rule for config, lint and
migrate: a value any of them accepts must be one `kubectl apply` and `pulumi up` get through.

Go matches `^...$` against the whole text; Python's `re.match` with `$` also accepts a final newline, which is how
"gpu\\n" passed every offline check and failed half-way through `pulumi up`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.dra import metadata

from .test_migrate import deployment, gpu_dra, write


@pytest.mark.parametrize("value,valid", [
    ("a", True), ("ab-c", True), ("a" * 63, True), ("0", True),
    ("a" * 64, False), ("A", False), ("-a", False), ("a-", False), ("a.b", False), ("", False),
    ("gpu\n", False), ("gpu\r", False), ("\ngpu", False),
])
def test_dns_label(value: str, valid: bool) -> None:
    assert metadata.is_dns_label(value) is valid
    assert (metadata.dns_label_problem(value) is None) is valid


@pytest.mark.parametrize("value,valid", [
    ("a", True), ("a.b.c", True), ("gpu.nvidia.com", True), ("a" * 253, True),
    ("a" * 254, False), ("a..b", False), (".a", False), ("a_b", False), ("gpu.nvidia.com\n", False),
])
def test_dns_subdomain(value: str, valid: bool) -> None:
    assert metadata.is_dns_subdomain(value) is valid


@pytest.mark.parametrize("key,valid", [
    ("simple", True), ("now-with-dashes", True), ("1-starts-with-num", True), ("1234", True),
    ("simple/simple", True), ("now-with-dashes/simple", True), ("example.com/Upper_case.9", True),
    ("a" * 63, True), ("prefix/" + "a" * 63, True),
    ("nospecialchars%^=@", False), ("cantendwithadash-", False), ("-cantstartwithadash", False),
    ("only/one/slash", False), ("Example.com/abc", False), ("/simple", False), ("simple/", False),
    ("a" * 64, False), ("prefix/" + "a" * 64, False), ("team\n", False), ("example.com\n/team", False),
])
def test_qualified_name(key: str, valid: bool) -> None:
    assert (metadata.qualified_name_problem(key) is None) is valid


@pytest.mark.parametrize("value,valid", [
    ("", True), ("simple", True), ("now-with-dashes", True), ("1.2.3", True), ("a" * 63, True),
    ("a" * 64, False), ("-starts", False), ("ends-", False), ("spa ce", False), ("training\n", False),
])
def test_label_value(value: str, valid: bool) -> None:
    assert (metadata.label_value_problem("team", value) is None) is valid


def test_annotation_keys_are_checked_lowercased_and_their_total_size_bounded() -> None:
    assert metadata.annotation_problems({"Example.com/Key": "x"}) == []  # ValidateAnnotations lowercases the key
    assert [key for key, _ in metadata.annotation_problems({"owner:": "x", "ok": "y"})] == ["owner:"]
    at_limit = {"k": "x" * (metadata.TOTAL_ANNOTATION_SIZE - 1)}
    assert metadata.annotation_problems(at_limit) == []
    over = metadata.annotation_problems({"k": "x" * metadata.TOTAL_ANNOTATION_SIZE})
    assert over == [("", "annotations take 262,145 bytes in all; the API server allows at most 262,144 (256 KiB)")]
    assert metadata.annotation_problems({"k": "é" * (metadata.TOTAL_ANNOTATION_SIZE // 2)})  # bytes, not characters


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com"}}]}}}}


@pytest.mark.parametrize("path,value,at,message", [
    (("metadata", "name"), "one-gpu\n", "metadata.name", "'one-gpu\\n' must be a DNS subdomain"),
    (("metadata", "namespace"), "ml\n", "metadata.namespace", "'ml\\n' must be a DNS label"),
    (("metadata", "labels"), {"team": "ml\n"}, "metadata.labels.team", "team: 'ml\\n' is not a label value"),
    (("metadata", "annotations"), {"owner:": "ml"}, "metadata.annotations['owner:']",
     "'owner:' is not a qualified name"),
    (("spec", "spec", "devices", "requests", 0, "name"), "gpu\n", "spec.spec.devices.requests[0].name",
     "'gpu\\n' must be a DNS label"),
    (("spec", "spec", "devices", "requests", 0, "exactly", "count"), 10**26,
     "spec.spec.devices.requests[0].exactly.count", "must be at most 9223372036854775807 (an int64)"),
])
def test_lint_refuses_what_the_api_server_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  path: tuple[Any, ...], value: Any, at: str, message: str) -> None:
    template: Any = yaml.safe_load(yaml.safe_dump(TEMPLATE))
    parent = template
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    code, out, _ = gpu_dra(capsys, "lint", str(write(tmp_path / "template.yaml", template)))
    assert code == 1
    assert f"error   validation  {at} (line " in out
    assert f"rejected by the API server: {message}" in out


@pytest.mark.parametrize("change,message", [
    (lambda d: d["metadata"].update(name="web\n"), "metadata.name: 'web\\n' must be a DNS subdomain"),
    (lambda d: d["metadata"].update(labels={"app": "web\n"}), "metadata.labels.app: app: 'web\\n' is not a label "
                                                             "value"),
    (lambda d: d["spec"]["template"]["metadata"].update(annotations={"bad key": "x"}),
     "spec.template.metadata.annotations['bad key']: 'bad key' is not a qualified name"),
    (lambda d: d["spec"]["template"]["metadata"].update(labels={"app": "web", "tier\n": "x"}),
     "spec.template.metadata.labels"),
])
def test_migrate_refuses_what_the_api_server_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     change: Any, message: str) -> None:
    workload = deployment("web", "inference", 1)
    change(workload)
    code, _, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(write(tmp_path / "web.yaml", workload)))
    assert code == 2
    assert message in err

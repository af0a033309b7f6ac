"""Selector lint rules and `gpu-dra lint` on manifests: one positive and one negative case per rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.checks.manifest_lint import fixed_object, lint_object, objects_in
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT
from .test_cli import gpu_dra, gpu_dra_process

GPU = SelectorContext(device_types=("gpu",))
D = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"


def rules(expression: str, context: SelectorContext = GPU) -> set[str]:
    return {f.rule for f in lint_selector(expression, context)}


@pytest.mark.parametrize("rule,bad,good,context", [
    ("capacity-as-attribute", f"{D}.memory == 1", f"{C}.memory.compareTo(quantity('1Gi')) >= 0", GPU),
    ("unknown-attribute", f"{D}.index == 0", f"{D}.uuid == 'GPU-1'", GPU),
    ("unknown-attribute", f"{D}.pcieBusID == '0000:53:00.0'",
     "device.attributes['resource.kubernetes.io'].pciBusID == '0000:53:00.0'", GPU),
    ("unknown-capacity", f"{C}.cores.isInteger()", f"{C}.memory.isInteger()", GPU),
    ("unguarded-lookup", f"{D}.profile == '1g.10gb'", f"{D}.type == 'mig' && {D}.profile == '1g.10gb'",
     SelectorContext()),
    ("unguarded-lookup", "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:44'",
     "device.attributes['resource.kubernetes.io'].?pcieRoot.orValue('') == 'pci0000:44'", GPU),
    ("unguarded-lookup", f"{D}.addressingMode == 'HMM'", f"has({D}.addressingMode) && {D}.addressingMode == 'HMM'",
     GPU),
    ("missing-driver-guard", f"{D}.type == 'gpu'", f"device.driver == 'gpu.nvidia.com' && {D}.type == 'gpu'",
     SelectorContext(class_selector=True)),
    ("product-matches-nothing", f"{D}.productName.matches('RTX 9090')", f"{D}.productName.matches('L40S')", GPU),
    ("memory-above-reported", f"{C}.memory.compareTo(quantity('80Gi')) >= 0 && {D}.productName.matches('H100')",
     f"{C}.memory.compareTo(quantity('79Gi')) >= 0 && {D}.productName.matches('H100')", GPU),
    ("memory-above-reported", f"{C}.memory.isGreaterThan(quantity('141Gi'))",
     f"{C}.memory.isGreaterThan(quantity('140Gi'))", GPU),
    ("memory-without-unit", f"{C}.memory.compareTo(quantity('40')) >= 0",
     f"{C}.memory.compareTo(quantity('40Gi')) >= 0", GPU),
])
def test_rule(rule: str, bad: str, good: str, context: SelectorContext) -> None:
    assert rule in rules(bad, context)
    assert rule not in rules(good, context)


def test_index_is_fine_on_the_release_that_published_it() -> None:
    assert "unknown-attribute" not in rules(f"{D}.index == 0", SelectorContext(device_types=("gpu",),
                                                                               target=Target(driver_level=(0, 1))))


def test_a100_80gb_reports_its_full_size() -> None:
    assert "memory-above-reported" not in rules(
        f"{C}.memory.compareTo(quantity('80Gi')) >= 0 && {D}.productName.matches('A100-SXM4-80GB')")


GUIDE = ROOT / "examples" / "guide-gpu-20gb-any.yaml"


EKS_1_34 = Target()


def lint_text(text: str, target: Target = EKS_1_34) -> list:
    return [f for obj in objects_in("x.yaml", parse_documents(text, "x.yaml")) for f in lint_object(obj, target)]


def test_guide_template_findings_and_correction() -> None:
    objects = list(objects_in("guide.yaml", parse_documents(GUIDE.read_text(), "guide.yaml")))
    findings = lint_object(objects[0], Target())
    assert {f.rule for f in findings} == {"request-fields-outside-exactly", "cel-compile", "capacity-as-attribute"}
    compile_error = next(f for f in findings if f.rule == "cel-compile")
    assert "no matching overload for '_>=_'" in compile_error.message and "compareTo" in (compile_error.fix or "")
    fixed = fixed_object(objects[0])
    assert fixed is not None
    assert lint_text(yaml.safe_dump(fixed)) == []  # the corrected template is clean


def test_gpu_dra_lint_guide_exit_code_and_corrected_template() -> None:
    result = gpu_dra("lint", str(GUIDE))
    assert result.returncode == 1
    assert "corrected ResourceClaimTemplate/gpu-20gb-any:" in result.stdout
    assert "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity(\"20Gi\")) >= 0" in result.stdout


def test_json_output_fields() -> None:
    result = gpu_dra("lint", "--format", "json", str(GUIDE))
    findings = json.loads(result.stdout)["findings"]
    assert {"file", "line", "object", "path", "rule", "severity", "message", "fix", "check"} == set(findings[0])
    assert findings[0]["line"] == 12 and findings[0]["object"] == "ResourceClaimTemplate/gpu-20gb-any"


CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig-1g.10gb}
spec:
  extendedResourceName: nvidia.com/mig-1g.10gb
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}
"""
CONSUMABLE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: slice, namespace: inference}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          capacity: {requests: {memory: 10Gi}}
      constraints:
      - distinctAttribute: gpu.nvidia.com/uuid
"""


CAPACITY = "spec.spec.devices.requests[0].exactly.capacity"
DISTINCT = "spec.spec.devices.constraints[0].distinctAttribute"


@pytest.mark.parametrize("text,target,dropped", [
    (CLASS, Target("1.34"), {"spec.extendedResourceName"}),
    (CLASS, Target("1.35"), {"spec.extendedResourceName"}),
    (CLASS, Target("1.36"), set()),
    (CLASS, Target("1.35", Platform.existing, {"DRAExtendedResource": True}), set()),
    (CONSUMABLE, Target("1.34"), {CAPACITY, DISTINCT}),
    (CONSUMABLE, Target("1.36"), set()),
])
def test_feature_gates_per_version_and_platform(text: str, target: Target, dropped: set[str]) -> None:
    """The fields whose gate is off for the target are flagged where they are written."""
    assert {f.path for f in lint_text(text, target) if f.rule == "feature-gate"} == dropped


def test_first_available_needs_its_gate_before_1_34() -> None:
    text = """apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaimTemplate
metadata: {name: alternatives, namespace: inference}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - {name: a, deviceClassName: gpu.nvidia.com}
"""
    messages = {f.message for f in lint_text(text, Target("1.33")) if f.rule == "feature-gate"}
    assert any("firstAvailable needs the gate DRAPrioritizedList, alpha and off" in m for m in messages)
    assert not [f for f in lint_text(text, Target("1.34")) if f.rule == "feature-gate"]


def test_kind_list_and_multi_document_input(tmp_path: Path) -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(CLASS), yaml.safe_load(CONSUMABLE)]}
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(listing) + "---\n" + CLASS)
    result = gpu_dra("lint", "--kubernetes-version", "1.36", str(path))
    assert result.returncode == 0, result.stdout
    assert "3 object(s): 0 error(s)" in result.stdout


def test_unreadable_and_malformed_input_exit_2(tmp_path: Path) -> None:
    missing = gpu_dra("lint", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "nope.yaml: cannot read" in missing.stderr
    (tmp_path / "bad.yaml").write_text("kind: [")
    malformed = gpu_dra("lint", str(tmp_path / "bad.yaml"))
    assert malformed.returncode == 2 and "bad.yaml:2: not valid YAML" in malformed.stderr
    assert "Traceback" not in malformed.stderr


def test_repo_stacks_render_lint_clean(tmp_path: Path) -> None:
    from gpu_dra.cli.manifest_files import kubernetes_objects
    from gpu_dra.core.config.loader import load_stack

    from .test_program import program

    for stack in ("dev", "staging", "prod"):
        version = load_stack(ROOT, stack).config.cluster.kubernetes_version
        text = yaml.safe_dump_all(kubernetes_objects(program(stack)))
        errors = [f for f in lint_text(text, Target(version)) if f.severity == "error"]
        assert errors == [], (stack, errors)


def test_api_server_validation_beyond_the_schema(tmp_path: Path) -> None:
    text = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: x}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 0}}
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}}
      - {name: Bad_Name, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: Some}}
      constraints:
      - {requests: [nope], matchAttribute: pcieRoot}
      - {requests: [gpu]}
"""
    messages = [f.message for f in lint_text(text) if f.rule == "validation"]
    for expected in ("must be greater than zero", "duplicate request name", "when allocationMode is 'All'",
                     "must be a DNS label", "Unsupported value: 'Some'", "must be the name of a request",
                     "must be a domain and a name separated by a slash", 'exactly one of "matchAttribute"'):
        assert any(expected in m for m in messages), expected


def test_v1beta1_claims_lint_in_their_own_shape() -> None:
    text = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: old}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
"""
    assert lint_text(text) == []


MISPLACED_COUNT = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: wrong}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      count: 0
"""


def test_misplaced_request_fields_are_validated_where_they_were_written() -> None:
    """Judged as if under `exactly` (where they belong), reported at the key the user wrote, on its line."""
    (count,) = [f for f in lint_text(MISPLACED_COUNT) if f.rule == "validation"]
    assert (count.path, count.line) == ("spec.devices.requests[0].count", 9)
    assert "must be greater than zero" in count.message


def test_gated_fields_of_a_v1beta1_request_are_checked_too() -> None:
    """v1beta1 writes a request's fields on the request; a gate guards them there as under `exactly`."""
    text = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: old}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      tolerations: [{key: example.com/unhealthy, operator: Exists}]
"""
    assert [(f.path, f.line) for f in lint_text(text) if f.rule == "feature-gate"] == [
        ("spec.devices.requests[0].tolerations", 9)]


@pytest.mark.parametrize("body", [
    "spec: {devices: {requests: [gpu]}}",
    "spec: {devices: {requests: {gpu: 1}}}",
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, selectors: nope}}]}}",
    "spec: nope",
    "metadata: [a]",
])
def test_malformed_objects_get_a_schema_finding_not_a_crash(tmp_path: Path, body: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: bad}}\n{body}\n"
                    if not body.startswith("metadata") else
                    f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n{body}\n")
    result = gpu_dra("lint", str(path))
    assert result.returncode == 1, result.stderr
    assert "schema" in result.stdout and "internal error" not in result.stderr


def test_unimplemented_library_is_a_warning_not_an_error() -> None:
    text = CLASS.replace("device.attributes['gpu.nvidia.com'].type == 'mig'", "[1, 2].isSorted()").replace(
        "  extendedResourceName: nvidia.com/mig-1g.10gb\n", "")
    findings = lint_text(text, Target("1.36"))
    assert [(f.rule, f.severity) for f in findings] == [("cel-unsupported", "warning")]


def test_api_version_the_target_does_not_serve_says_what_to_use() -> None:
    result = gpu_dra("lint", "--kubernetes-version", "1.33", "--format", "json",
                     str(ROOT / "examples" / "claim-pair-same-pcie-root.yaml"))
    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["rule"], finding["path"], finding["line"]) == ("schema", "apiVersion", 1)
    assert finding["message"] == ("ResourceClaimTemplate resource.k8s.io/v1 is served from Kubernetes 1.34, not by "
                                  "1.33: use resource.k8s.io/v1beta1, resource.k8s.io/v1beta2 there, or target 1.34+")
    text = gpu_dra("lint", "--kubernetes-version", "1.33", str(ROOT / "examples" / "claim-pair-same-pcie-root.yaml"))
    assert "(line None)" not in text.stdout and "apiVersion (line 1)" in text.stdout


@pytest.mark.parametrize("head", ["kind: ResourceClaim", "apiVersion: 5\nkind: ResourceClaim"])
def test_missing_or_odd_api_version_is_a_finding_not_a_crash(tmp_path: Path, head: str) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(f"{head}\nmetadata: {{name: c}}\nspec: {{}}\n")
    result = gpu_dra("lint", "--format", "json", str(path))
    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["path"] == "apiVersion" and finding["line"] == 1
    assert finding["message"].startswith("apiVersion must be a string such as resource.k8s.io/v1")


SCHEMA_CASES = [  # (object, Kubernetes version, strict)
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {"name": "t", "labels": {"a": 1}},
      "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "x", "count": "2"}}],
                                    "bogus": 1}}}}, "1.34", True),
    ({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
      "spec": {"devices": {"requests": [{"name": "g", "exactly": {}}]}}}, "1.36", True),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "d"},
      "spec": {"selectors": [{"cel": {}}]}}, "1.35", False),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "d"},
      "spec": {"selectors": [{"cel": {"expression": "true"}}]}}, "1.37", True),
]


@pytest.mark.parametrize("obj,version,strict", SCHEMA_CASES)
def test_cached_schema_validation_matches_kubernetes_validate(obj: dict, version: str, strict: bool) -> None:
    import kubernetes_validate

    from gpu_dra.core.dra import k8s_schema

    def outcome(validate: Callable[..., str]) -> tuple[Any, ...]:
        try:
            return ("valid", validate(obj, version, strict=strict))
        except kubernetes_validate.ValidationError as error:
            return (error.message, list(error.path), error.version)

    assert outcome(k8s_schema.validate) == outcome(kubernetes_validate.validate)


def test_lint_reads_each_schema_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """kubernetes-validate re-reads its 1.5 MB definitions per object; lint must not (500 templates: 8 s -> 1 s)."""
    from gpu_dra.core.dra import k8s_schema

    reads: list[str] = []
    original = k8s_schema.schema_contents

    def counted(name: str, version: str) -> Any:
        reads.append(name)
        return original(name, version)
    monkeypatch.setattr(k8s_schema, "schema_contents", counted)
    k8s_schema._definitions.cache_clear()
    k8s_schema._validator.cache_clear()
    template = yaml.safe_load(CONSUMABLE)
    text = yaml.safe_dump_all([{**template, "metadata": {**template["metadata"], "name": f"t{i}"}}
                               for i in range(20)])
    lint_text(text, Target("1.36"))
    assert len(reads) == 2, reads  # the kind's schema and the definitions, once each


def test_a_backtracking_product_pattern_is_judged_in_linear_time() -> None:
    """The product-name rule runs the team's pattern as RE2 does (the selector's `matches`); with a backtracking
    engine this pattern runs for minutes on every known product name and stalls the PR gate."""
    import subprocess
    import sys

    code = ("from gpu_dra.core.checks.lint import lint_selector; "
            "print([f.rule for f in lint_selector(\"device.attributes['gpu.nvidia.com'].productName"
            ".matches('^(([A-Za-z0-9 -]+)+)+Z$')\")])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr
    assert "product-matches-nothing" in result.stdout


@pytest.mark.parametrize("head", [f"apiVersion: resource.k8s.io/{'v' * 5000}\nkind: ResourceClaim",
                                  "apiVersion: resource.k8s.io/v1\nkind: on", "apiVersion: v1\nkind: [List]"])
def test_odd_kind_or_a_huge_api_version_is_not_a_crash(tmp_path: Path, head: str) -> None:
    """A 5,000-character apiVersion must not become a file name, a kind need not be text: lint judges, never
    crashes, and echoes no kilobytes."""
    path = tmp_path / "claim.yaml"
    path.write_text(f"{head}\nmetadata: {{name: c}}\nspec: {{}}\n")
    result = gpu_dra("lint", str(path))
    assert result.returncode in (0, 1), result.stderr
    assert "internal error" not in result.stderr and len(result.stdout) < 2000


@pytest.mark.parametrize("version, why", [
    ("1.37", "EKS does not offer 1.37 yet; stacks run 1.34, 1.35, 1.36"),
    ("1.33", "1.33 serves DRA only as beta APIs, off unless enabled (EKS enables none); stacks run 1.34, 1.35, 1.36"),
])
def test_a_version_no_stack_runs_is_judged_with_a_warning(version: str, why: str) -> None:
    """One list of versions: lint judges manifests at any minor whose gate table it has, and says where stacks would
    refuse it (the stack files' kubernetesVersion takes STACK_VERSIONS only)."""
    result = gpu_dra_process("lint", "--kubernetes-version", version, str(GUIDE))
    assert result.returncode == 1  # the guide's example has findings at every version
    assert result.stderr == f"gpu-dra: warning: --kubernetes-version {version}: judged by its own gate table, but " \
                            f"{why}\n"
    assert gpu_dra_process("lint", "--kubernetes-version", "1.36", str(GUIDE)).stderr == ""


@pytest.mark.parametrize("path", ["stacks/teams/inference.yaml", "stacks/Pulumi.prod.yaml"])
def test_lint_of_a_gpu_dra_file_points_at_check(path: str) -> None:
    result = gpu_dra("lint", path)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "no DeviceClass, ResourceClaim or ResourceClaimTemplate found",
        f"{path} is a gpu-dra stack or team file, not Kubernetes manifests: `gpu-dra check --stack S` lints the claim "
        "templates and classes the stack renders from it (`gpu-dra render --stack S --out DIR` writes them, for lint)"]
    assert "gpu-dra check" not in gpu_dra("lint", "Pulumi.yaml").stdout  # a file of neither kind: nothing to point at

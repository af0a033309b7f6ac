"""The GPU catalog lint and the stack files read: boards seen on real clusters are known, so a selector for them gets
no warning that is wrong (issue 27, item 5)."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.facts.hardware import INSTANCE_TYPES

from .test_cli import gpu_dra

GPU = SelectorContext(device_types=("gpu",))
D = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"


def findings(expression: str) -> list[tuple[str, str]]:
    return [(f.rule, f.message) for f in lint_selector(expression, GPU)]


def test_a_tesla_t10_selector_gets_no_warning() -> None:
    """It was "matches no product name the driver is known to publish"; the T10 reports its full 16 GiB."""
    assert findings(f"{D}.productName.matches('T10') && {C}.memory.compareTo(quantity('16Gi')) >= 0") == []


def test_an_exact_product_name_is_judged_as_that_model_alone() -> None:
    """`productName == 'Tesla T10'` (either side of ==) names one model: no other model's memory is judged (it got
    the T4's warning), and a name no driver publishes is said, as for matches()."""
    assert findings(f"{D}.productName == 'Tesla T10' && {C}.memory.compareTo(quantity('16Gi')) >= 0") == []
    assert findings(f"'Tesla T10' == {D}.productName && {C}.memory.compareTo(quantity('16Gi')) >= 0") == []
    (unknown,) = findings(f"{D}.productName == 'Tesla T99'")
    assert unknown[0] == "product-matches-nothing" and unknown[1].startswith("productName == 'Tesla T99' matches no")
    (t4,) = findings(f"{D}.productName == 'Tesla T4' && {C}.memory.compareTo(quantity('16Gi')) >= 0")
    assert t4[0] == "memory-above-reported" and "Tesla T4" in t4[1]


def test_an_rtx_pro_6000_selector_gets_the_memory_warning_that_is_right_and_no_other() -> None:
    """The board reports 97887Mi: 95Gi takes every one, 96Gi (its name's size) none, and only it is named."""
    name = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert findings(f"{D}.productName.matches('RTX PRO 6000') && {C}.memory.compareTo(quantity('95Gi')) >= 0") == []
    ((rule, message),) = findings(
        f"{D}.productName.matches('RTX PRO 6000') && {C}.memory.compareTo(quantity('96Gi')) >= 0")
    assert rule == "memory-above-reported"
    assert message == (f"quantity('96Gi') excludes every {name}: the driver reports 97887Mi, less than the 96Gi its "
                       "name suggests")


def test_g7e_instances_carry_the_rtx_pro_6000() -> None:
    assert {name: (t.gpu.product_name, t.gpus) for name, t in INSTANCE_TYPES.items() if name.startswith("g7e.")} == {
        f"g7e.{size}": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", gpus)
        for size, gpus in {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4,
                           "48xlarge": 8}.items()}


def test_lint_accepts_a_template_for_each_new_board(tmp_path: Path) -> None:
    """Through the CLI, as a team's PR gate runs it."""
    templates = tmp_path / "boards.yaml"
    templates.write_text(yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": name, "namespace": "ml"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]}}]}}}}
        for name, expression in (
            ("t10", f"{D}.productName.matches('Tesla T10') && {C}.memory.compareTo(quantity('16Gi')) >= 0"),
            ("rtx", f"{D}.productName.matches('RTX PRO 6000 Blackwell') && "
                    f"{C}.memory.compareTo(quantity('95Gi')) >= 0"))]))
    result = gpu_dra("lint", str(templates))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 error(s), 0 warning(s)" in result.stdout

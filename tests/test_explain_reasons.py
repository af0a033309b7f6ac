"""How explain words the selector term that is false on a device: read from CEL's tokens, so comments, raw strings
and spacing do not change the words, and a term whose shape it does not know is shown as written, never half read."""

from __future__ import annotations

import pytest

from gpu_dra.core.analysis.explain import Explainer

from .test_explain import GB200, claim, exactly, load

PRODUCT = "device.attributes['gpu.nvidia.com'].productName"


def _rejected(selector: str) -> list[str]:
    report = Explainer({}).explain(claim([exactly(1, (selector,))]), load(GB200))
    assert not report.allocatable
    return list(report.requests[0].rejected)


@pytest.mark.parametrize("selector,words", [
    (f"{PRODUCT}.matches('H100|H200')", 'productName "NVIDIA GB200" does not match "H100|H200"'),
    (f"{PRODUCT}.matches(r'H100\\b')", 'productName "NVIDIA GB200" does not match "H100\\b"'),
    (f"{PRODUCT}.matches('H100\\\\b')", 'productName "NVIDIA GB200" does not match "H100\\b"'),
    (f"{PRODUCT} == 'NVIDIA H100 80GB HBM3' // the training GPU",
     'productName is "NVIDIA GB200", not "NVIDIA H100 80GB HBM3"'),
    (f"{PRODUCT} in ['NVIDIA H100 80GB HBM3', 'NVIDIA H200']",
     "productName \"NVIDIA GB200\" is not one of ['NVIDIA H100 80GB HBM3', 'NVIDIA H200']"),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) >= 0",
     "memory 189471Mi is less than 200Gi"),
    ("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('999.0.0')) >= 0",
     None),  # worded with the device's version: checked below
], ids=["matches", "raw-string", "escaped", "comment", "in-list", "capacity", "semver"])
def test_a_false_term_is_worded_with_the_devices_value(selector: str, words: str | None) -> None:
    [reason] = _rejected(selector)
    if words is None:
        assert reason.startswith("selector #0: driverVersion ") and reason.endswith(" is below 999.0.0"), reason
    else:
        assert reason == f"selector #0: {words}"


def test_a_term_it_cannot_read_whole_is_shown_as_written() -> None:
    """A regex over the text read `'NVIDIA ' + 'H100'` as the string `NVIDIA ' + 'H100`."""
    term = f"{PRODUCT} == 'NVIDIA ' + 'H100 80GB HBM3'"
    assert _rejected(term) == [f"selector #0: `{term}` is false"]

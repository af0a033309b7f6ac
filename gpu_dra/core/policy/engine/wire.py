"""What crosses into and out of the engine model: the mock run's registrations in, the engine's resources out, and
the engine's unknown value as it travels on the wire."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The engine's unknown-string sentinel (pulumi/pulumi@1b5949891b sdk/go/common/resource/plugin/rpc.go:73). The engine
# has typed sentinels too (rpc.go:290-325), but SDKs and the terraform bridge send every unknown as this string,
# whether it stands for a string, a list or an object, so a whole object (encryptionConfig) can be this one string.
# Not gpu_dra.core.data.UNKNOWN, the rules' own placeholder, which the policy shell puts in place of this string.
ENGINE_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass(frozen=True)
class Registered:
    """One registration of the mock run, as the shell hands it over."""

    type: str
    name: str
    urn: str
    parent: str
    protect: bool
    inputs: Mapping[str, Any]  # camelCase, as the SDK registered them
    outputs: Mapping[str, Any]  # the mock's outputs (custom resources); a local component's registered outputs


@dataclass(frozen=True)
class EngineResource:
    """What the engine sends a policy pack for one resource."""

    type: str
    name: str
    urn: str
    parent: str
    protect: bool
    inputs: Mapping[str, Any]  # AnalyzeRequest.properties (after the provider's Check)
    outputs: Mapping[str, Any]  # AnalyzeStackRequest resource properties (state outputs)

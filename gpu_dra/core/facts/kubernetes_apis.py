"""Which Kubernetes minor versions serve each API version of the objects gpu-dra renders or reads, so that an upgrade
can name the manifests that stop being accepted (docs/sources.md#api-versions-served).

A beta API carries `+k8s:prerelease-lifecycle-gen:introduced=<minor>` in its types.go, and the generator
(kubernetes/code-generator cmd/prerelease-lifecycle-gen) derives the rest when no tag says otherwise: deprecated 3
minors after its introduction, removed 3 after that (the generated APILifecycleDeprecated and APILifecycleRemoved of
kubernetes/code-generator@v0.24.1:cmd/prerelease-lifecycle-gen/prerelease-lifecycle-generators/status.go), and the
API server stops serving a beta version from its `removed` minor (kubernetes/apiserver pkg/util/deprecation,
resourceExpirationEvaluator). The generated zz_generated.prerelease-lifecycle.go of resource.k8s.io was not read: the
minors below apply that default to the `introduced` tags. It is a plan, not yet a removal the Deprecated API Migration
Guide lists (https://kubernetes.io/docs/reference/using-api/deprecation-guide/), so each such row says "planned".
"""

from __future__ import annotations

from dataclasses import dataclass


def minor_of(version: str) -> int:
    """1.36 -> 36."""
    return int(version.split(".")[1])


@dataclass(frozen=True)
class ServedApi:
    api_version: str
    kinds: tuple[str, ...]
    introduced: str  # the first minor that serves it
    removed: str | None  # the first minor that no longer serves it (None: no end planned)
    replacement: str
    source: str
    status: str  # "removed" (read in a release), "planned" (the lifecycle default), "GA" (no end)

    def served(self, version: str) -> bool:
        after_start = minor_of(version) >= minor_of(self.introduced)
        return after_start and (self.removed is None or minor_of(version) < minor_of(self.removed))


_DRA_KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
_LIFECYCLE = "+k8s:prerelease-lifecycle-gen:introduced={} in kubernetes/api@{}:resource/{}/types.go, removal by " \
             "the generator's default (introduced + 6 minors)"

SERVED_APIS: dict[str, ServedApi] = {api.api_version: api for api in (
    ServedApi("resource.k8s.io/v1", _DRA_KINDS, "1.34", None, "",
              "+k8s:prerelease-lifecycle-gen:introduced=1.34 in kubernetes/api@v0.34.0:resource/v1/types.go", "GA"),
    ServedApi("resource.k8s.io/v1beta2", _DRA_KINDS, "1.33", "1.39", "resource.k8s.io/v1",
              _LIFECYCLE.format("1.33", "v0.34.0", "v1beta2"), "planned"),
    ServedApi("resource.k8s.io/v1beta1", _DRA_KINDS, "1.32", "1.38", "resource.k8s.io/v1",
              _LIFECYCLE.format("1.32", "v0.34.0", "v1beta1"), "planned"),
)}


def removed_between(api_version: str, current: str, target: str) -> ServedApi | None:
    """The API version's row when `current` serves it and `target` does not, else None."""
    api = SERVED_APIS.get(api_version)
    return api if api is not None and api.served(current) and not api.served(target) else None

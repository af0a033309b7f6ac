"""A change that moves a stack's Kubernetes version, driver chart release or Karpenter release is an upgrade, and
is reported as one: what `gpu-dra upgrade` says of it (gpu_dra.core.analysis.upgrade), judged against the base of
the change. No resource carries the base's versions: `gpu-dra check --base REF` (and `--pack-config --base REF`)
reads them from the stack file at the base (gpu_dra.cli.base_ref.versions_at), judges the upgrade from there to the
stack as it is now, and writes its findings to the pack config as `upgradeFindings`. Without a base both rules stay
silent.

upgrade-safe carries what breaks (a template or workload left with nowhere, a manifest on an API the target no
longer serves, a target the stack file cannot take): mandatory in prod, where it would strand a team. upgrade-reported
carries what changes without breaking (a mapping that becomes effective, a workload served another way, a version
near the end of its support): always advisory, so that the pull request says what it does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_dra.core.findings import ERROR, Finding
from gpu_dra.core.policy.resources import Context, Resource

SAFE = "upgrade-safe"
REPORTED = "upgrade-reported"


def _finding(rule: str, found: Mapping[str, Any]) -> Finding:
    line = found.get("line")  # a number in JSON, a double once the engine has passed the config on
    return Finding(rule, ERROR, f"{found.get('change', 'the upgrade')}: [{found.get('rule')}] {found.get('message')}",
                   fix=str(found.get("fix") or found.get("command") or ""), file=str(found.get("file") or ""),
                   line=int(line) if isinstance(line, int | float) and not isinstance(line, bool) else None,
                   object=str(found.get("object") or ""))


def upgrade_safe(resources: list[Resource], context: Context) -> list[Finding]:
    return [_finding(SAFE, f) for f in context.upgrade_findings if f.get("severity") == ERROR]


def upgrade_reported(resources: list[Resource], context: Context) -> list[Finding]:
    return [_finding(REPORTED, f) for f in context.upgrade_findings if f.get("severity") != ERROR]

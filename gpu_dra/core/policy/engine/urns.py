"""URNs as the engine builds them, rebuilt from the mock run's."""

from __future__ import annotations

from collections.abc import Sequence

from gpu_dra.core.facts.pulumi_types import ROOT_STACK
from gpu_dra.core.policy.engine.wire import Registered


def qualified_type(urn: str) -> str:
    parts = urn.split("::")
    return parts[2] if len(parts) >= 4 else ""


def _urn(stack_project: str, chain: str, name: str) -> str:
    return f"{stack_project}::{chain}::{name}"


def child_urn(parent_urn: str, type_: str, name: str) -> str:
    return _urn(parent_urn.rsplit("::", 2)[0], f"{qualified_type(parent_urn)}${type_}", name)


class EngineUrns:
    """URNs as the engine builds them: the parent's whole qualified type, `$`, the type; nothing for the root stack
    (pulumi/pulumi@1b5949891b pkg/resource/deploy/deployment.go:796-805 generateURN; sdk/go/common/resource/urn/
    urn.go:80-93). The mock monitor joins only the parent type's last element instead (pulumi/runtime/mocks.py
    make_urn), and gives root children a `pulumi:pulumi:Stack$` prefix."""

    def __init__(self, registered: Sequence[Registered]):
        self._by_urn = {r.urn: r for r in registered}
        self._done: dict[str, str] = {}

    def of(self, mock_urn: str) -> str:
        """The engine URN of a registered resource; anything else (the root stack, "") unchanged."""
        if mock_urn in self._done:
            return self._done[mock_urn]
        r = self._by_urn.get(mock_urn)
        if r is None:
            return mock_urn
        stack_project = r.urn.rsplit("::", 2)[0]
        parent = self.of(r.parent) if r.parent else ""
        parent_type = qualified_type(parent)
        chain = r.type if not parent_type or parent_type == ROOT_STACK else f"{parent_type}${r.type}"
        self._done[mock_urn] = _urn(stack_project, chain, r.name)
        return self._done[mock_urn]

    @property
    def table(self) -> dict[str, str]:
        return {urn: self.of(urn) for urn in self._by_urn if self.of(urn) != urn}

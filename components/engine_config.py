"""Every `gpu-dra:*` config value the Pulumi engine passed to this program, so unknown keys can be reported.

`pulumi.Config` can only look keys up by name; the language host hands the whole map to
`pulumi.runtime.set_all_config` (the mocks runner does the same), and `PULUMI_CONFIG` carries it otherwise.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config


def project_config() -> dict[str, Any]:
    values = dict(runtime_config.get_config_env())
    values.update(runtime_config.CONFIG.get())
    return values


# A first preview registers every Kubernetes object against a provider whose kubeconfig is unknown until the cluster
# exists; the engine accepts an unknown provider in a preview from Pulumi 3.130.0 on ("Allow provider to be unknown
# during preview", pulumi/pulumi#16868, CHANGELOG 3.130.0).
MINIMUM_PULUMI_CLI = "3.130.0"


def pulumi_cli_too_old() -> str | None:
    """Why the Pulumi CLI running this program cannot run it, or None (the engine compares its own version)."""
    try:
        pulumi.require_pulumi_version(f">={MINIMUM_PULUMI_CLI}")
    except Exception as error:  # the SDK raises a bare Exception, for an old range and an engine too old to answer
        return (f"gpu-dra needs the Pulumi CLI {MINIMUM_PULUMI_CLI} or later ({error}); upgrade it: "
                "https://www.pulumi.com/docs/iac/download-install/")
    return None

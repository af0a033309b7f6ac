"""Every `gpu-dra:*` config value the Pulumi engine passed to this program, so unknown keys can be reported.

`pulumi.Config` can only look keys up by name; the language host hands the whole map to
`pulumi.runtime.set_all_config` (the mocks runner does the same), and `PULUMI_CONFIG` carries it otherwise.
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import config as runtime_config


def project_config() -> dict[str, Any]:
    values = dict(runtime_config.get_config_env())
    values.update(runtime_config.CONFIG.get())
    return values

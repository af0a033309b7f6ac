"""JSON Schemas of the stack and team files, generated from the config models so editors validate as we do."""

from __future__ import annotations

from typing import Any

from gpu_dra.core.config.loader import PREFIX, PROVIDER_NAMESPACES
from gpu_dra.core.config.models import StackConfig, Team

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def team_schema() -> dict[str, Any]:
    schema = Team.model_json_schema(by_alias=True)
    return {"$schema": DRAFT, "title": "gpu-dra team file (stacks/teams/<team>.yaml)", **schema}


def stack_schema() -> dict[str, Any]:
    model = StackConfig.model_json_schema(by_alias=True)
    properties = {PREFIX + key: value for key, value in model["properties"].items()}
    secure = {"type": "object", "properties": {"secure": {"type": "string"}}, "required": ["secure"],
              "additionalProperties": False}
    properties[PREFIX + "kubeconfig"] = {"anyOf": [{"type": "string"}, secure],
                                         "description": "Secret kubeconfig of an existing cluster"}
    config = {
        "type": "object",
        "properties": properties,
        "required": [PREFIX + key for key in model.get("required", [])],
        # The providers' namespaces belong to their packages; any other key, or an unknown gpu-dra: key, is an error.
        "patternProperties": {f"^({'|'.join(PROVIDER_NAMESPACES)}):.+$": {}},
        "additionalProperties": False,
    }
    return {"$schema": DRAFT, "title": "gpu-dra stack file (stacks/Pulumi.<stack>.yaml)", "type": "object",
            "properties": {"config": config, "secretsprovider": {"type": "string"},
                           "encryptedkey": {"type": "string"}, "encryptionsalt": {"type": "string"}},
            "$defs": model.get("$defs", {})}

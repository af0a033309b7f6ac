"""Checks of DRA manifests as the API server and the scheduler would make them: schema, validation, CEL, lint rules,
feature gates."""

"""The stack and team files: pydantic models, loading with every mistake reported at once, the driver chart lines
and gates they may name, JSON Schema and generated docs."""

"""The pure core: config models, manifest builders and DRA knowledge. Imports no Pulumi."""

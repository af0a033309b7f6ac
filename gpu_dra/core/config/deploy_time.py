"""What only a real `pulumi up` refuses: values a preview and an offline check can work with, but that AWS would
refuse halfway through the deploy, after the cluster exists. Previews warn about them; `pulumi up` stops on them
before it registers anything (__main__.py)."""

from __future__ import annotations

from gpu_dra.core.config.models import Stack
from gpu_dra.core.facts import eks
from gpu_dra.core.findings import Finding, config_finding


def placeholders(stack: Stack) -> list[Finding]:
    """Access entries for an example account of AWS's documentation, as the repository's own stacks carry them:
    CreateAccessEntry fails on a principal that is not yours."""
    return [config_finding(f"stacks/Pulumi.{stack.name}.yaml", f"gpu-dra:cluster.accessEntries[{i}].principalArn",
                           f"{entry.principal_arn} is in account {account}, an example account of AWS's "
                           "documentation: replace it with the ARN of your own role or user")
            for i, entry in enumerate(stack.config.cluster.access_entries)
            if (account := eks.documentation_account(entry.principal_arn))]

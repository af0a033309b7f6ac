"""A queued team's claim template changed under its own name: gpu-dra replaces the ResourceClaimTemplate (a spec is
immutable), and Kueue charges a workload from the template as it was when the workload was queued, so a larger
template recreated under the same name undercharges the queue (facts/kueue.RECREATED_TEMPLATE). No resource carries
what a template was: `gpu-dra check --base REF` compares the team files with REF's and writes the changed templates
of the stack's queued teams to the pack config as `replacedTemplates`. Without a base the rule stays silent."""

from __future__ import annotations

from gpu_dra.core.facts import kueue
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, error

REPLACED = "kueue-template-replaced"


def kueue_template_replaced(resources: list[Resource], context: Context) -> list[Finding]:
    out = []
    for changed in context.replaced_templates:
        team, template = str(changed.get("team")), str(changed.get("template"))
        found = error(REPLACED, f"team {team}'s template {template} changes under the same name, and the team queues "
                                f"in Kueue: {kueue.RECREATED_TEMPLATE}", None,
                      fix=f"give the changed template a new name (and point the team's workloads at it), or keep "
                          f"{template} as it was")
        line = changed.get("line")  # a float once the pack config has been a protobuf Struct, as in the engine
        out.append(found.at(file=str(changed.get("teamFile") or ""), line=int(line) if line else None))
    return out

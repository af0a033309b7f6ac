"""Two changes to a stack's queues that only the base of a change shows. A queued team's claim template changed under
its own name: gpu-dra replaces the ResourceClaimTemplate (a spec is
immutable), and Kueue charges a workload from the template as it was when the workload was queued, so a larger
template recreated under the same name undercharges the queue (facts/kueue.RECREATED_TEMPLATE). No resource carries
what a template was: `gpu-dra check --base REF` compares the team files with REF's and writes the changed templates
of the stack's queued teams to the pack config as `replacedTemplates`. And the classes Kueue's configuration maps
(`mappingChange`: added, removed). Without a base both rules stay silent."""

from __future__ import annotations

from gpu_dra.core.facts import kueue
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, error

REPLACED = "kueue-template-replaced"
MAPPINGS = "kueue-mappings-changed"


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


def kueue_mappings_changed(resources: list[Resource], context: Context) -> list[Finding]:
    """The classes Kueue's configuration maps change with the change: the chart rolls the controller, which reads
    its configuration once at start (kubernetes-sigs/kueue#13727), and workloads it found inadmissible before stay so
    (facts/kueue.STUCK_INADMISSIBLE)."""
    change = context.mapping_change
    if not change:
        return []
    added, removed = [str(c) for c in change.get("added") or []], [str(c) for c in change.get("removed") or []]
    words = "; ".join(part for part in (f"maps {', '.join(added)} now" if added else "",
                                        f"no longer maps {', '.join(removed)}" if removed else "") if part)
    return [error(MAPPINGS, f"Kueue's device class mappings change ({words}): `pulumi up` restarts the Kueue "
                            f"controller (the chart's config-checksum), and {kueue.STUCK_INADMISSIBLE}", None,
                  fix="after the up, recreate the team workloads Kueue marked inadmissible for an unmapped class")]

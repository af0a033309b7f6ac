"""The three migration phases of docs/migration.md, workload by workload, on one stack.

Phase 1: the workload keeps asking for `nvidia.com/gpu: N` and runs on a device-plugin node group. Phase 2: it is
rewritten to a ResourceClaim (its team's claim template). Phase 3: it keeps its extended resource and DRA serves it
through a DeviceClass `extendedResourceName` (KEP-5004, https://www.kubernetes.dev/resources/keps/5004/; gate
DRAExtendedResource: alpha in 1.34 and 1.35, so dropped on EKS, beta and on from 1.36: facts/gates.py).

For each Pod or workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob) that requests an
`nvidia.com/*` extended resource or names resource claims, this says where its pods run today on the stack (the
device-plugin groups at max size, whose GPUs the workloads before it take in input order: analysis/placement; a
mapping the stack's version makes effective; or nowhere), its phase and why, the team's claim template that fits (or
the one to paste into the team file), and the workload rewritten to claims: valid under the strict OpenAPI schema of
the stack's version and explained on the stack's synthesized fleet with the faithful allocator
(gpu_dra.core.analysis.pods).

One module per job: workloads (reading the inputs), stack_view (the stack's nodes, mappings and tolerations),
templates (the claim template a request needs), rewriting (the workload on claims), verdicts (what a plan says) and
planner (the plan). Pure: no I/O. The shell (gpu_dra/cli/commands/migrate.py) reads the files and writes the rewrites.
"""

from gpu_dra.core.analysis.migrate.planner import plan
from gpu_dra.core.analysis.migrate.rewriting import Rewrite, rewrite
from gpu_dra.core.analysis.migrate.stack_view import admission_tolerations, without_groups
from gpu_dra.core.analysis.migrate.templates import GPU, TemplateChoice
from gpu_dra.core.analysis.migrate.verdicts import PHASES, Breakage, GroupCapacity, Placement, Plan, WorkloadVerdict
from gpu_dra.core.analysis.migrate.workloads import Container, MigrateError, Workload, pod_spec, read_workloads

__all__ = ["GPU", "PHASES", "Breakage", "Container", "GroupCapacity", "MigrateError", "Placement", "Plan", "Rewrite",
           "TemplateChoice", "Workload", "WorkloadVerdict", "admission_tolerations", "plan", "pod_spec",
           "read_workloads", "rewrite", "without_groups"]

"""What the Pulumi engine sends a CrossGuard policy pack for this program, modelled from the mock run.

Under Pulumi's mocks a remote (multi-language) component is one opaque registration: no children, and inputs and
outputs that are not what the engine has. A real engine hands the pack something else (pulumi/pulumi@1b5949891b
pkg/resource/deploy/step_generator.go:3465 for Analyze, :3518 for AnalyzeStack):

- `inputs` (AnalyzeRequest.properties): a custom resource's inputs after its provider's Check; a component's are what
  its SDK registered, which for the remote components here is nothing;
- `outputs` (AnalyzeStackRequest properties): a custom resource's state outputs; a component's registered outputs;
- the children a remote component's provider registers during Construct, ordinary resources parented to it.

`engine_view` turns the mock run's registrations into those resources, so the offline gate can drive pulumi-policy's
analyzer with the shapes a real `pulumi preview --policy-pack` would send. `first_preview=True` models the first
preview of a new stack, where every resource is new: values computed by a create are unknown, the Kubernetes
provider of a new EKS cluster has an unknown kubeconfig, and so it is never configured.

URNs are rebuilt the engine's way (the mock monitor keeps only the last parent type and prefixes root children
with the stack's type; see `urns.EngineUrns`), and string values that were a mock URN are rewritten to match.

One module per job: `wire` (registrations in, engine resources out, the unknown sentinel), `urns`, `model` (the
run as a whole: computed values, lookups, invented values), `eks_cluster` and `node_group` (pulumi-eks's
components), `kubernetes` (Kubernetes objects and the Helm chart component, whose objects render/chart_templates
models), `view` (every resource). Versions read (see each comment): pulumi/pulumi@1b5949891b (engine),
pulumi/pulumi-eks@7bf0c1b1 (v4.3.0 + 9 commits; the installed pulumi_eks is 4.4.0, for which no tag was available:
its generated SDK has the same outputs), pulumi/pulumi-kubernetes@94977969d (4.32.0+; installed 4.34.2).
Pure: plain dicts in, plain dicts out; values the model invents (ids, ARNs, timestamps) are derived from names so a
view is the same on every run. Numbers are left as they come (pulumi-policy's JSON round trip makes them floats).
"""

from gpu_dra.core.policy.engine.view import engine_view
from gpu_dra.core.policy.engine.wire import ENGINE_UNKNOWN, EngineResource, Registered

__all__ = ["ENGINE_UNKNOWN", "EngineResource", "Registered", "engine_view"]

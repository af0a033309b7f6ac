"""Kueue (kubernetes-sigs/kueue) as gpu-dra installs it for the teams' GPU queues, each fact with the release it was
read at: v0.19.2 (tag 2026-08-20, commit 8eab6877), the newest release in the snapshot read (main at ff69552e,
2026-08-22; no v0.20 tag). Notation: `kueue@v0.19.2:<path>:<lines>` (docs/sources.md#kueue)."""

from __future__ import annotations

from typing import Any

VERSIONS = ("0.19.2",)
DEFAULT_VERSION = VERSIONS[-1]

# `helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version="0.19.2" --namespace=kueue-system`
# (kueue@v0.19.2:charts/kueue/README.md:29-32); the chart's version has no "v" (Chart.yaml:2,19).
CHART_REPOSITORY = "oci://registry.k8s.io/kueue/charts"
CHART = "kueue"
NAMESPACE = "kueue-system"  # the docs' namespace and the Configuration's default (apis/config/v1beta2/defaults.go:33)
CONTROLLER = "kueue-controller-manager"  # the Deployment

# The controller's Configuration, as one YAML string in the chart's values (values.yaml:115-120), read once at start
# (getting-started/installation.md:271). The chart rolls the controller when it changes: its Deployment's pod template
# carries `charts.kueue.x-k8s.io/config-checksum` of the rendered ConfigMap (templates/manager/manager.yaml:38).
CONFIG_VALUES_KEY = ("managerConfig", "controllerManagerConfigYaml")
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
# The string replaces the chart's default whole: these are the default's keys that are not comments
# (values.yaml:120-208), kept as they are; gpu-dra adds `resources`.
DEFAULT_CONFIG: dict[str, Any] = {
    "apiVersion": CONFIG_API, "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {"Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10,
                                            "LocalQueue.kueue.x-k8s.io": 5, "ClusterQueue.kueue.x-k8s.io": 5,
                                            "ResourceFlavor.kueue.x-k8s.io": 1}},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {"frameworks": ["batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice",
                                    "ray.io/raycluster", "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper",
                                    "trainer.kubeflow.org/trainjob", "pod", "deployment", "statefulset",
                                    "leaderworkerset.x-k8s.io/leaderworkerset"]},
}

# The queue APIs: v1beta2 is served and stored from v0.19; v1beta1 is deprecated there and unserved from the release
# after (kubernetes-sigs/kueue#14558, merged after v0.19.2).
API = "kueue.x-k8s.io/v1beta2"

# `resources.deviceClassMappings[]`: {name, deviceClassNames} (apis/config/v1beta2/configuration_types.go:636-662):
# at most 16 mappings of at most 8 classes, each name a label key, a class in one mapping only
# (pkg/config/validation.go:476-613). Kueue charges a pod's ResourceClaimTemplate requests per mapped class: the sum of
# `exactly.count` (default 1), times the pods of the pod set (pkg/dra/claims.go:153-233, pkg/workload/workload.go:
# 679-697); each Deployment pod is its own Workload (site/content/en/docs/tasks/run/deployment.md:12-17).
MAX_MAPPINGS = 16
MAX_CLASSES_PER_MAPPING = 8
# A mapping named `pods` is accepted by v0.19.2 and then overwritten by the pod count, undercharging the devices
# (kubernetes-sigs/kueue#13988; refused from the fix #13989, in no release read).
RESERVED_NAMES = ("pods",)

# What makes a workload inadmissible under Kueue's DRA integration (pkg/dra/claims.go:58-123, quoted), and claims made
# outside a template (pkg/controller/core/workload_controller.go:452-468).
UNSUPPORTED = {
    "firstAvailable": "FirstAvailable device selection is not supported",
    "allocationMode All": "AllocationMode 'All' is not supported",
    "adminAccess": "AdminAccess is not supported",
}

# Kueue's own gates for DRA, each beta and on by default from the release given (pkg/features/kube_features.go:745-755):
# KueueDRAIntegration charges a pod's claim templates per mapped class; KueueDRAIntegrationExtendedResource charges
# extended resources served by DRA through their class; KueueDRARejectWorkloadsWhenDRADisabled rejects a DRA workload
# while the first is off (kube_features.go:206-207) rather than admit it with no device charged. gpu-dra turns them on
# by name (the chart's `controllerManager.featureGates` become `--feature-gates`: values.yaml:32,
# templates/_helpers.tpl:116-125), so a release that changes a default cannot silently stop charging devices.
DRA_GATES = {"KueueDRAIntegration": "0.18", "KueueDRAIntegrationExtendedResource": "0.19",
             "KueueDRARejectWorkloadsWhenDRADisabled": "0.18"}

# Resources gpu-dra's queues leave to the namespace's ResourceQuota and LimitRange: by default Kueue blocks a workload
# requesting a resource its ClusterQueue does not cover ("resource cpu unavailable in ClusterQueue",
# pkg/scheduler/flavorassigner/flavorassigner.go:1069-1071); `resources.excludeResourcePrefixes` leaves these out of
# quota while a DRA name not covered still blocks (site/content/en/docs/tasks/manage/administer_cluster_quotas.md:
# 388-402; pkg/workload/workload.go:463-478, 676-693).
EXCLUDED_PREFIXES = ("cpu", "memory", "ephemeral-storage", "hugepages-")

# A workload joins a queue by this label (pkg/controller/constants/constants.go:23) and waits at this scheduling gate
# until admitted (pkg/controller/jobs/pod/constants/constants.go:24).
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
# A workload's priority in its queue: the WorkloadPriorityClass (cluster-scoped: {metadata.name, value (int32),
# description}) its label names (pkg/controller/constants/constants.go:45-48; site/content/en/docs/concepts/
# workload_priority_class.md). A class that does not exist stops Kueue making the Workload at all (ExtractPriority
# returns the lookup's error: pkg/controller/jobframework/reconciler.go:1716-1724), so the job is never queued. A
# workload without the label takes its pods' priorityClassName's PriorityClass, else the cluster's globalDefault
# PriorityClass, else 0 (reconciler.go:1720-1733; pkg/util/priority/priority.go:88-145); a WorkloadPriorityClass named
# `default` is applied only with the alpha gate WorkloadPriorityClassDefaulting, off in 0.19
# (pkg/features/kube_features.go:887-889).
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
PRIORITY_RANGE = (-(2**31), 2**31 - 1)
# What a ClusterQueue may preempt to admit a workload (spec.preemption, each defaulting to Never): in its own queue
# (withinClusterQueue) and, to take back its nominal quota, in the cohort (reclaimWithinCohort)
# (apis/kueue/v1beta2/clusterqueue_types.go:515-559).
WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_WITHIN_COHORT = ("Never", "LowerPriority", "Any")
# A plain pod's Workload is owned by the pod and labelled with its UID (pkg/controller/jobframework/reconciler.go:
# 1606-1633).
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"

# Kubernetes: the DRA integration needs resource.k8s.io/v1, 1.34 or later (site/content/en/docs/concepts/
# dynamic_resource_allocation.md:34-37); the release's CI runs 1.34 to 1.36 (hack/make/test.mk:53-54).
MIN_KUBERNETES_VERSION = "1.34"

# Known problems a stack's queues can meet, said where they apply.
RECREATED_TEMPLATE = ("Kueue charges a workload from the claim template as it was when the workload was queued: a "
                      "template deleted and recreated under the same name with more devices undercharges the quota "
                      "(kubernetes-sigs/kueue#13842, open in 0.19.2): give a changed template a new name")
STUCK_INADMISSIBLE = ("a workload Kueue found inadmissible (an unmapped class) is not admitted again after the mapping "
                      "is fixed (kubernetes-sigs/kueue#13969, open in 0.19.2): delete and recreate it")
# Before it charges a request with CEL selectors, Kueue counts the devices of the cluster's ResourceSlices that match
# them now, and holds the workload while fewer match than requested ("insufficient matching devices for CEL selector",
# retried until matching slices are published: pkg/dra/claims.go:490-517). A held pod is never tried by the scheduler,
# so Karpenter (which launches nodes for pods the scheduler could not place) never launches a node for it: a queued
# template whose devices exist only on nodes not yet launched waits for ever.
DEVICES_MUST_EXIST = ("Kueue 0.19.2 admits a request with selectors only while enough matching devices exist in the "
                      "cluster, and a pod Kueue holds never makes Karpenter (or a node group's autoscaler) launch one: "
                      "queue such a template's workloads only where its devices already run")

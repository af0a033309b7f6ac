"""Real-shaped inputs for `make bench`, generated from the vendored real dump so their shape is the driver's.

- `slices(nodes)`: `kubectl get resourceslices -o yaml` of `nodes` p5.48xlarge nodes, each with the real p5 dump's
  two slices (gpu.nvidia.com with 8 H100s, compute-domain.nvidia.com); every device gets its own uuid and
  pciBusID, as NVIDIA's driver publishes them, so no two devices look alike.
- `templates(count)`: ResourceClaimTemplates with memory and product selectors, a third with a matchAttribute
  constraint (the shape of the stacks' team templates).
- `scheduler_log(megabytes, pending_pods)`: kube-scheduler klog text at V(5), one scheduling cycle per pod, one
  cycle in ten a GPU pod whose claim cannot be allocated, in the messages and key=value shape the scheduler writes:
  the same 500 Pending pods retried (as a cluster short of GPUs logs), or with pending_pods=0 a new pod every cycle
  (the worst case: no line repeats).
- `scheduler_log_v7(megabytes)`: the same at -v=7, each GPU cycle with the structured allocator's lines for each
  node its Filter tries, one per device looked at (kubernetes/dynamic-resource-allocation@v0.34.9), a new pod every
  cycle: nearly every line a DRA line never seen before.
- `live_cluster(nodes, pending)`: a cluster as the fake API server serves it for `explain --cluster`.
- `logs_tail(log)` and `cloudwatch_export(log)`: the same log as EKS delivers it to CloudWatch Logs (stream
  kube-scheduler-<id> of /aws/eks/<cluster>/cluster), one event per line, as `aws logs tail` prints it and as
  `aws logs filter-log-events --output json` exports it (aws/aws-cli@00d4d6e:awscli/customizations/logs/tail.py,
  aws/aws-cli@0080339:awscli/formatter.py).
"""

from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
P5_DUMP = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"


def _p5_slices() -> list[dict[str, Any]]:
    return list(yaml.load(P5_DUMP.read_text(), Loader=yaml.CSafeLoader)["items"])


def slices(nodes: int) -> dict[str, Any]:
    """A List of 2 x `nodes` ResourceSlices, node names ip-10-<a>-<b>-<c>.ec2.internal."""
    real = _p5_slices()
    real_node = real[0]["spec"]["nodeName"]
    items = []
    for n in range(nodes):
        node = f"ip-10-{n // 65536 % 256}-{n // 256 % 256}-{n % 256}.ec2.internal"
        for slice_ in real:
            item = copy.deepcopy(slice_)
            item["metadata"]["name"] = item["metadata"]["name"].replace(real_node, node)
            item["metadata"]["generateName"] = item["metadata"]["generateName"].replace(real_node, node)
            item["metadata"]["ownerReferences"][0]["name"] = node
            item["metadata"]["uid"] = f"{n:08x}-0000-4000-8000-{len(items):012x}"
            item["spec"]["nodeName"] = node
            item["spec"]["pool"]["name"] = node
            for g, device in enumerate(item["spec"]["devices"]):
                attributes = device["attributes"]
                if "uuid" in attributes:
                    attributes["uuid"] = {"string": f"GPU-{n:08x}-{g:04x}-4000-8000-{n * 8 + g:012x}"}
                    attributes["resource.kubernetes.io/pciBusID"] = {"string": f"{n % 65536:04x}:{0x53 + g:02x}:00.0"}
            items.append(item)
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def live_cluster(nodes: int, pending: int) -> dict[str, list[dict[str, Any]]]:
    """What the fake API server (tests/fake_apiserver.py) serves for `explain --cluster`: `nodes` p5 nodes as
    slices(nodes) publishes them, each tainted for GPUs and with 7 of its 8 GPUs held by a running pod's claim, and
    `pending` Pending pods, each with a FailedScheduling Event, asking for 1, 2, 4, 8 or 16 GPUs in turn (on this
    fleet only the single GPU ones fit)."""
    from tests import cluster_objects as k8s

    published = slices(nodes)["items"]
    names = sorted({s["spec"]["nodeName"] for s in published})
    counts = {"one-gpu": 1, "two-gpus": 2, "four-gpus": 4, "eight-gpus": 8, "sixteen-gpus": 16}
    claims = [k8s.claim(f"serve-{i}-gpus-aaaaa", 7, [f"gpu-{g}" for g in range(7)], name, f"serve-{i}")
              for i, name in enumerate(names)]
    running = [k8s.pod(f"serve-{i}", "seven-gpus", k8s.TOLERATES_GPU, phase="Running", node=name,
                       made=f"serve-{i}-gpus-aaaaa") for i, name in enumerate(names)]
    waiting = [k8s.pod(f"job-{i}", list(counts)[i % len(counts)], k8s.TOLERATES_GPU) for i in range(pending)]
    said = f"0/{nodes} nodes are available: {nodes} cannot allocate all claims."
    return {"/apis/resource.k8s.io/v1/resourceslices": published,
            "/apis/resource.k8s.io/v1/deviceclasses": [k8s.GPU_CLASS],
            "/apis/resource.k8s.io/v1/resourceclaims": claims,
            "/apis/resource.k8s.io/v1/resourceclaimtemplates": [k8s.template(n, c) for n, c in counts.items()],
            "/api/v1/nodes": [k8s.node(name, [k8s.GPU_TAINT]) for name in names],
            "/api/v1/pods": running + waiting,
            "/api/v1/events": [k8s.event(f"job-{i}", said, 3, "2026-12-01T09:10:00Z") for i in range(pending)]}


def templates(count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        selector = (f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{20 + i % 60}Gi')) >= 0 && "
                    "device.attributes['gpu.nvidia.com'].productName.matches('H100|A100')")
        spec: dict[str, Any] = {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "count": 1 + i % 8,
            "selectors": [{"cel": {"expression": selector}}]}}]}}
        if i % 3 == 0:
            spec["devices"]["constraints"] = [{"matchAttribute": "gpu.nvidia.com/productName"}]
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": f"t{i:04d}", "namespace": f"team-{i % 10}"}, "spec": {"spec": spec}})
    return out


# One scheduling cycle per pod: most pods need no GPU; one cycle in ten is a GPU pod whose claim cannot be
# allocated (the same `pending_pods` pods retried, or a new pod each time), logged as kube-scheduler v1.34 logs it
# at V(5).
_CPU_CYCLE = (
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 schedule_one.go:98] "Attempting to schedule pod" pod="web/front-{n}"\n'
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 schedule_one.go:314] "Successfully bound pod to node" '
    'pod="web/front-{n}" node="ip-10-0-{a}-{b}.ec2.internal" evaluatedNodes=1000 feasibleNodes=412\n')
_GPU_CYCLE = (
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 schedule_one.go:98] "Attempting to schedule pod" pod="ml/train-{p}"\n'
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 dynamicresources.go:420] "pod resource claims" pod="ml/train-{p}" '
    'resourceclaims=["ml/train-{p}-gpu"]\n'
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 allocator.go:180] "Starting allocation" numClaims=1\n'
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 allocator.go:250] "Done with allocation" success=false err=null\n'
    'I1201 10:{m:02d}:{s:02d}.{us:06d}       1 schedule_one.go:1050] "Unable to schedule pod; no fit; waiting" '
    'pod="ml/train-{p}" err="0/1000 nodes are available: 1000 cannot allocate all claims."\n')


def _cycle_values(n: int, pending_pods: int) -> dict[str, int]:
    return {"m": n // 60_000_000 % 60, "s": n // 1_000_000 % 60, "us": n % 1_000_000, "n": n,
            "p": n // 10 % pending_pods if pending_pods else n // 10, "a": n // 256 % 256, "b": n % 256}


def scheduler_log(megabytes: int, pending_pods: int = 500) -> str:
    cycles: list[str] = []
    size = 0
    n = 0
    while size < megabytes * 1_000_000:
        text = (_GPU_CYCLE if n % 10 == 9 else _CPU_CYCLE).format(**_cycle_values(n, pending_pods))
        cycles.append(text)
        size += len(text)
        n += 1
    return "".join(cycles)


# At -v=7 the structured allocator logs, for every node the Filter tries, its progress (V(5), V(6)) and a line per
# device it looks at (V(7)): kubernetes/dynamic-resource-allocation@v0.34.9:structured/internal/incubating/
# allocator_incubating.go (the allocator kube-scheduler 1.34 runs with its beta DRA features on), whose Info calls
# give the line numbers, messages and keys below. Every line carries the Filter logger's name and values, as in
# kubernetes/kubernetes#135755's V(6) excerpt (tests/data/logs/scheduler-klog_allocator-incubating-v6_k8s-135755.log).
# Values as klog@v2.130.1 writes them (internal/serialize): Stringers and strings quoted, bools, ints and a nil error
# as JSON (`err=null`). Left out: "Gathered pool information", whose V(7) form (line 129) dumps the pools, slices
# and all, as JSON. The pod asks for two GPUs with a memory selector; each node tried is a p5 (slices(): a
# compute-domain.nvidia.com pool, channel-0 and daemon-0, then gpu.nvidia.com, gpu-0 to gpu-7) with gpu-0 to gpu-6
# held, so the search takes gpu-7, finds no second GPU, and gives it back.
_V7 = ('I1201 10:{m:02d}:{s:02d}.{us:06d}       1 allocator_incubating.go:{line}] "{message}" '
       'logger="FilterWithNominatedPods.Filter.DynamicResources" pod="ml/train-{p}" node="{node}"{values}\n')
_CLASS_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
_CLAIM_SELECTOR = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
_HELD_GPUS = 7


def _allocator_lines(node: str, claim: str, allocated: int) -> list[tuple[int, str, str]]:
    """(line, message, key=values) of one node's search, in the order the allocator logs them."""
    def device(name: str) -> str:
        driver = "compute-domain.nvidia.com" if name in ("channel-0", "daemon-0") else "gpu.nvidia.com"
        return f' device="{driver}/{node}/{name}"'

    def class_cel(name: str, matches: str, cost: int) -> tuple[int, str, str]:
        return (1032, "CEL result", f'{device(name)} class="gpu.nvidia.com" selector=0 '
                f'expression="{_CLASS_SELECTOR}" matches={matches} actualCost={cost} err=null')

    def allocating(index: int) -> tuple[int, str, str]:
        return (851, "Allocating one device", " currentClaim=0 totalClaims=1 currentRequest=0 currentSubRequest=0 "
                f"totalRequestsPerClaim=1 currentDevice={index} devicesPerRequest=2 allDevices=false "
                "adminAccess=false")

    others = ["channel-0", "daemon-0"]
    held = [f"gpu-{g}" for g in range(_HELD_GPUS)]
    free = f"gpu-{_HELD_GPUS}"
    return [(119, "Starting allocation", " numClaims=1"),
            (206, "Checked claim", f' claim="{claim}" minDevices=2'),
            (256, "Gathered information about devices", f" numAllocated={allocated} minDevicesToBeAllocated=2"),
            allocating(0),
            *[line for name in others for line in (class_cel(name, "false", 2), (906, "Device not selectable",
                                                                                device(name)))],
            *[(895, "Device in use", device(name)) for name in held],
            class_cel(free, "true", 7),
            (1034, "CEL result", f'{device(free)} claim="{claim}" selector=0 expression="{_CLAIM_SELECTOR}" '
                                 "actualCost=5 matches=true err=null"),
            (1135, "Device allocated", device(free)),
            allocating(1),
            *[(906, "Device not selectable", device(name)) for name in others],  # the selector's result, cached
            *[(895, "Device in use", device(name)) for name in [*held, free]],
            (1165, "Device deallocated", device(free)),
            (120, "Done with allocation", " success=false err=null")]


def scheduler_log_v7(megabytes: int, pending_pods: int = 0, nodes_tried: int = 8, fleet: int = 1000) -> str:
    """kube-scheduler klog text at -v=7: the cycles of scheduler_log, each GPU cycle with the allocator's lines for
    the `nodes_tried` nodes its Filter tries (of a `fleet` of p5 nodes, 7 of 8 GPUs held on each). With
    pending_pods=0 every GPU cycle is a new pod, so nearly every DRA line is new: the pod and node it names differ."""
    cycles: list[str] = []
    size = 0
    n = 0
    while size < megabytes * 1_000_000:
        values = _cycle_values(n, pending_pods)
        if n % 10 == 9:
            # the V(5) cycle's lines but its allocator's, which the searches below replace
            attempt, claims, _, _, unable = _GPU_CYCLE.format(**values).splitlines(keepends=True)
            searches = []
            for k in range(nodes_tried):
                index = (n // 10 * nodes_tried + k) % fleet
                node = f"ip-10-{index // 65536 % 256}-{index // 256 % 256}-{index % 256}.ec2.internal"
                searches += [_V7.format(line=line, message=message, node=node, values=kv, **values)
                             for line, message, kv in _allocator_lines(node, f"ml/train-{values['p']}-gpu",
                                                                       fleet * _HELD_GPUS)]
            text = attempt + claims + "".join(searches) + unable
        else:
            text = _CPU_CYCLE.format(**values)
        cycles.append(text)
        size += len(text)
        n += 1
    return "".join(cycles)


_STREAM = "kube-scheduler-4f8b2c9e1d7a4b6c8e0f3a5d7b9c1e2f"
_DECEMBER_1 = 1796119200000  # 2026-12-01T10:00:00Z in ms: the generated lines' day and hour


def _event_times(log: str) -> list[tuple[str, int]]:
    """Each line of `log` (I1201 10:mm:ss.uuuuuu ...) with its time in ms."""
    return [(line, _DECEMBER_1 + int(line[9:11]) * 60_000 + int(line[12:14]) * 1000 + int(line[15:21]) // 1000)
            for line in log.splitlines()]


def logs_tail(log: str) -> Iterator[str]:
    """`aws logs tail` (--format detailed): time with microseconds and zone, stream name, message."""
    for line, ms in _event_times(log):
        seconds, millis = divmod(ms, 1000)
        yield f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{millis:03d}000+00:00 {_STREAM} {line}\n"


def cloudwatch_export(log: str) -> Iterator[str]:
    """`aws logs filter-log-events --output json`: one document, json.dump with indent 4, an event per line."""
    yield '{\n    "events": [\n'
    for n, (line, ms) in enumerate(_event_times(log)):
        separator = ",\n" if n else ""
        yield (f'{separator}        {{\n            "logStreamName": "{_STREAM}",\n'
               f'            "timestamp": {ms},\n            "message": {json.dumps(line)},\n'
               f'            "ingestionTime": {ms + 1207},\n            "eventId": "{ms:013d}{n:010d}{"3" * 33}"\n'
               "        }")
    yield (f'\n    ],\n    "searchedLogStreams": [\n        {{\n            "logStreamName": "{_STREAM}",\n'
           '            "searchedCompletely": true\n        }\n    ]\n}\n')


def paths(folder: Path, nodes: int = 1000, template_count: int = 100, lint_templates: int = 500,
          log_megabytes: int = 200) -> dict[str, Path]:
    """Where `write` puts each input."""
    found = {"slices": folder / f"slices-{nodes}.yaml", "slices_json": folder / f"slices-{nodes}.json",
             "templates": folder / f"templates-{template_count}.yaml",
             "lint": folder / f"templates-{lint_templates}.yaml"}
    if log_megabytes:
        found["log"] = folder / f"scheduler-{log_megabytes}mb.log"
        found["log_new_pods"] = folder / f"scheduler-{log_megabytes}mb-new-pods.log"
        found["log_v7"] = folder / f"scheduler-{log_megabytes}mb-v7.log"
        found["log_tail"] = folder / f"scheduler-{log_megabytes}mb-aws-logs-tail.log"
        found["log_cloudwatch"] = folder / f"scheduler-{log_megabytes}mb-filter-log-events.json"
    return found


def write(folder: Path, nodes: int = 1000, template_count: int = 100, lint_templates: int = 500,
          log_megabytes: int = 200) -> dict[str, Path]:
    """The bench inputs under `folder`: slices-<nodes>.yaml and .json, templates, lint templates, a log."""
    folder.mkdir(parents=True, exist_ok=True)
    where = paths(folder, nodes, template_count, lint_templates, log_megabytes)
    dump = slices(nodes)
    where["slices"].write_text(yaml.dump(dump, Dumper=yaml.CSafeDumper, default_flow_style=False))
    where["slices_json"].write_text(json.dumps(dump, indent=4))
    where["templates"].write_text(yaml.dump_all(templates(template_count), Dumper=yaml.CSafeDumper))
    where["lint"].write_text(yaml.dump_all(templates(lint_templates), Dumper=yaml.CSafeDumper))
    if "log" in where:
        log = scheduler_log(log_megabytes)
        where["log"].write_text(log)
        for name, pieces in (("log_tail", logs_tail(log)), ("log_cloudwatch", cloudwatch_export(log))):
            with where[name].open("w") as out:
                out.writelines(pieces)
        del log
        where["log_new_pods"].write_text(scheduler_log(log_megabytes, pending_pods=0))
        where["log_v7"].write_text(scheduler_log_v7(log_megabytes))
    return where


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bench"
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    megabytes = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    for name, path in write(target, nodes, log_megabytes=megabytes).items():
        print(f"{name}: {path}")

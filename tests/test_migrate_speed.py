"""`gpu-dra migrate` on thousands of workloads that differ in their names (copies of a few apps): their pods are
explained once per shape, and each verdict still says its own pod's and claims' names."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import migrate
from gpu_dra.core.analysis.migrate import explaining
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "migrate"
# A 16-GPU job (its rewrite allocates nowhere: the reason names its claim, `<pod>-gpu`), a Deployment on the A10G
# device-plugin group (its rewrite keeps A10G, which no DRA node of prod has: the reason names its claim too), and a
# Pod on claims already (explained as written).
APPS = [yaml.safe_load((EXAMPLES / name).read_text())
        for name in ("job-pretrain-16.yaml", "deployment-web.yaml", "pod-on-claims.yaml")]


def _copies(count: int, change: Any = None) -> list[dict[str, Any]]:
    """`count` copies of APPS in turn, each renamed; `change` edits each."""
    out = []
    for index in range(count):
        obj = copy.deepcopy(APPS[index % len(APPS)])
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{index}"
        if change is not None:
            change(obj)
        out.append(obj)
    return out


def _plan(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What explaining said of each workload on prod, as migrate's JSON says it: its rewrite, and where a workload on
    claims already allocates (the device-plugin placement depends on the workloads before it)."""
    stack = load_stack(ROOT, "prod")
    text = yaml.safe_dump_all(objects, sort_keys=False)
    workloads, claims = migrate.read_workloads([("copies.yaml", parse_documents(text, "copies.yaml"))],
                                               stack.config.cluster.kubernetes_version)
    return [{"rewrite": v["rewrite"], "placement": v["placement"] if v["on_claims"] else None}
            for v in (verdict.as_dict() for verdict in migrate.plan(stack, workloads, claims).verdicts)]


@pytest.fixture
def explained(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pods explained by the allocator from now on, by name."""
    calls: list[str] = []
    real = explaining.explain_pods

    def counted(pods: Any, *args: Any, **kwargs: Any) -> Any:
        calls.extend(pod.name for pod in pods)
        return real(pods, *args, **kwargs)

    monkeypatch.setattr(explaining, "explain_pods", counted)
    return calls


def test_copies_but_for_their_names_are_explained_once(explained: list[str]) -> None:
    verdicts = _plan(_copies(30))
    # the Deployment's rewrite and the Pod as written, once each (the 16-GPU job is told short before the allocator
    # runs); 20 times without the sharing
    assert explained == [f"inference/{explaining._ANY_NAME}"] * 2
    assert len(verdicts) == 30


def test_each_copy_says_its_own_names(explained: list[str]) -> None:
    """Every verdict is what the workload alone gets, its reasons naming its own pod and claims."""
    together = _plan(_copies(9))
    alone = [_plan([obj])[0] for obj in _copies(9)]
    assert together == alone
    reasons = [v["rewrite"]["reason"] for v in together if v["rewrite"] and v["rewrite"]["reason"]]
    assert reasons == [
        f"claim ml-training/pretrain-16-{index}-gpu (gpu): request gpu needs 16 device(s), but at most 8 match on one "
        "node (h100-0)" if index % 3 == 0 else
        f"claim inference/web-{index}-gpu (gpu): request gpu: no device matches; most common: selector #0: productName "
        "\"NVIDIA H100 80GB HBM3\" does not match \"A10G\" (32 devices)" for index in (0, 1, 3, 4, 6, 7)]


def test_a_workload_that_says_the_shared_name_is_explained_as_itself(explained: list[str]) -> None:
    """The name pods are explained under, written in a workload (an annotation here): its pods are explained under
    their own names, so that nothing of what it wrote is renamed."""
    def annotate(obj: dict[str, Any]) -> None:
        obj["metadata"].setdefault("annotations", {})["note"] = explaining._ANY_NAME

    together = _plan(_copies(6, annotate))
    assert explaining._ANY_NAME not in "".join(explained)
    assert together == [_plan([obj])[0] for obj in _copies(6, annotate)]


def test_shared_name_is_no_workload_name() -> None:
    """Not a DNS subdomain: no workload that migrate reads is named so (metadata.object_meta_problems)."""
    with pytest.raises(migrate.MigrateError, match="metadata.name"):
        _plan([{**APPS[1], "metadata": {**APPS[1]["metadata"], "name": explaining._ANY_NAME}}])

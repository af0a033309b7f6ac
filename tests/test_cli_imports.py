"""A verb's module is imported only when that verb runs (gpu_dra/cli/main.py VERBS): `gpu-dra --help` loads no
verb, and the light verbs do not pay for pydantic (0.3 s), Pulumi (1.3 s) or the kubernetes client (1 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

HEAVY = ("pydantic", "pulumi", "pulumi_policy", "kubernetes")
# What the verb run leaves loaded: the heavy packages by their top name, and the verbs' modules.
_PROBE = """import json, sys
from gpu_dra.cli.main import run
code = run(sys.argv[2:])
print(json.dumps({"code": code, "heavy": sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[1]))),
                  "verbs": sorted(m for m in sys.modules if m.startswith("gpu_dra.cli.commands."))}), file=sys.stderr)
"""


def _loaded(*argv: str) -> dict[str, object]:
    result = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(HEAVY), *argv], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    report: dict[str, object] = json.loads(result.stderr.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize(("argv", "code", "heavy"), [
    (("--help",), 0, []),
    (("lint", "--help"), 0, []),
    (("lint", "examples/guide-gpu-20gb-any.yaml"), 1, []),
    (("logs", "tests/data/scheduler-klog.log"), 0, []),
    (("schema", "stack"), 0, ["pydantic"]),  # the schema is the stack models'
    (("inventory", "tests/data/resourceslices/h100-80gb-hbm3_eks-p5_v25.12.0.yaml"), 0, []),
])
def test_a_verb_loads_its_own_module_and_no_heavy_package_it_does_not_use(argv: tuple[str, ...], code: int,
                                                                          heavy: list[str]) -> None:
    loaded = _loaded(*argv)
    verb = [] if argv[0].startswith("-") else [f"gpu_dra.cli.commands.{argv[0]}"]
    assert loaded == {"code": code, "heavy": heavy, "verbs": verb}


def test_a_verb_that_runs_the_program_loads_pulumi_when_it_runs() -> None:
    """The probe sees what it should: `render --help` loads render (which imports the Pulumi runner at its top)."""
    assert _loaded("render", "--help") == {"code": 0, "heavy": ["pulumi", "pydantic"],
                                           "verbs": ["gpu_dra.cli.commands.preview", "gpu_dra.cli.commands.render"]}


def test_policy_pack_finds_the_project_without_the_stack_models(tmp_path: Path) -> None:
    """It builds the pack's folder and reads no stack: finding the project loads no pydantic."""
    assert _loaded("policy-pack", "--out", f"{tmp_path}/pack") == {
        "code": 0, "heavy": [], "verbs": ["gpu_dra.cli.commands.policy_pack"]}

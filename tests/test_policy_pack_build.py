"""`gpu-dra policy-pack`: the pack folder stands alone (what `pulumi policy publish` uploads must install with pip and
import without this checkout), its pins are pyproject.toml's, and the build touches only the files it wrote.
No venv and no network: the copy is imported with this venv's Python, from a folder outside the repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli.commands.policy_pack import PackError, build
from gpu_dra.cli.main import execute
from gpu_dra.cli.output_folder import POLICY_PACK

from .conftest import ROOT

RECORD = POLICY_PACK.name
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _name(requirement: str) -> str:
    """The normalised distribution name a requirement line starts with."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return _normal(match.group(0))


DECLARED = {_name(d) for d in PYPROJECT["dependencies"]}


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "policy-pack"
    build(ROOT, out)
    return out


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_pack_holds_its_project_file_entry_point_and_the_source_it_imports(pack: Path) -> None:
    files = _tree(pack)
    assert files["__main__.py"] == (ROOT / "policies" / "__main__.py").read_bytes()
    for source in ["gpu_dra/__init__.py", "gpu_dra/policypack.py",
                   *(p.relative_to(ROOT).as_posix() for p in (ROOT / "gpu_dra" / "core").rglob("*.py"))]:
        assert files.get(source) == (ROOT / source).read_bytes(), source
    assert not [p for p in files if p.startswith(("gpu_dra/cli/", "components/", "venv/"))]
    assert {"PulumiPolicy.yaml", "requirements.txt", RECORD} <= set(files)
    # publish archives the folder without what its .gitignore lists: the venv and caches stay home
    assert {"venv/", "__pycache__/"} <= set(files[".gitignore"].decode().splitlines())


def test_project_file_is_a_python_pack_with_its_venv_at_the_projects_version(pack: Path) -> None:
    project = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    assert project["version"] == PYPROJECT["version"]
    assert project["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}
    assert project["description"]


def _isolated_import(pack: Path, cwd: Path) -> dict[str, Any]:
    script = """import json, sys
import gpu_dra.policypack as pack
print(json.dumps({"file": pack.__file__, "policies": [p.name for p in pack.policies("prod")],
                  "gpu_dra": {n: getattr(m, "__file__", None) for n, m in sys.modules.items()
                              if n.split(".")[0] == "gpu_dra"},
                  "tops": sorted({n.split(".")[0] for n in sys.modules})}))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPATH": str(pack), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_the_copy_imports_on_its_own_and_holds_the_packs_policies(pack: Path, tmp_path: Path) -> None:
    from gpu_dra.policypack import policies

    loaded = _isolated_import(pack, tmp_path)
    assert Path(loaded["file"]).is_relative_to(pack)
    # this venv's editable install would quietly fill a gap in the copy: every gpu_dra module must be the copy's
    outside = {n: f for n, f in loaded["gpu_dra"].items() if f and not Path(f).is_relative_to(pack)}
    assert outside == {}
    assert loaded["policies"] == [p.name for p in policies("prod")]
    assert len(loaded["policies"]) >= 10


def test_requirements_are_pyprojects_lines_for_exactly_the_distributions_the_pack_imports(
        pack: Path, tmp_path: Path) -> None:
    lines = [line for line in (pack / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    assert lines and not [line for line in lines if line.startswith("-") or "/" in line or " @ " in line]
    assert set(lines) <= set(PYPROJECT["dependencies"])  # each range exactly as pyproject.toml writes it
    owners = metadata.packages_distributions()
    tops = _isolated_import(pack, tmp_path)["tops"]
    imported = {_normal(d) for top in tops for d in owners.get(top, [])}
    named = {_name(line) for line in lines}
    assert named == imported & DECLARED
    assert "pulumi-policy" in named and "pulumi-aws" not in named and "kubernetes" not in named


def test_the_policies_folder_publishes_no_editable_install() -> None:
    template = ROOT / "policies" / "requirements.txt"
    assert not template.exists() or not re.search(r"^\s*-e\b", template.read_text(), re.M)


def test_a_second_build_replaces_and_prunes_only_its_own_files(pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "policy-pack"
    build(ROOT, out)
    (out / "venv" / "bin").mkdir(parents=True)
    (out / "venv" / "bin" / "python").write_text("the venv make made")
    (out / "notes.txt").write_text("mine")
    (out / "gpu_dra" / "core" / "gone.py").write_text("# a module an earlier build copied")
    with open(out / RECORD, "a") as record:
        record.write("gpu_dra/core/gone.py\nvenv/bin/python\n")
    (out / "PulumiPolicy.yaml").write_text("stale")
    build(ROOT, out)
    assert not (out / "gpu_dra" / "core" / "gone.py").exists()
    assert (out / "venv" / "bin" / "python").read_text() == "the venv make made"
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "PulumiPolicy.yaml").read_bytes() == (pack / "PulumiPolicy.yaml").read_bytes()


def test_a_folder_the_build_did_not_make_is_refused_untouched(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "someone-elses"
    out.mkdir()
    (out / "PulumiPolicy.yaml").write_text("runtime: nodejs\n")
    (out / "notes.txt").write_text("mine")
    before = _tree(out)
    with pytest.raises(PackError, match="did not make it"):
        build(ROOT, out)
    assert execute(["--project-dir", str(ROOT), "policy-pack", "--out", str(out)]) == 2
    assert f"no {RECORD} in it" in capsys.readouterr().err
    assert _tree(out) == before


def test_a_file_of_the_users_in_the_way_in_an_owned_folder_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "policy-pack"
    build(ROOT, out)
    record = (out / RECORD).read_text()
    (out / RECORD).write_text(record.replace("requirements.txt\n", ""))
    (out / "requirements.txt").write_text("mine\n")
    before = _tree(out)
    with pytest.raises(PackError, match="did not write it"):
        build(ROOT, out)
    assert _tree(out) == before


def test_make_and_the_workflow_run_the_built_pack_with_its_venv() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\npolicy-pack:", 1)[1].split("\n\n", 1)[0]
    assert "PACK := build/policy-pack" in makefile
    assert "gpu-dra policy-pack --out $(PACK)" in recipe and "-m venv $(PACK)/venv" in recipe
    assert "$(PACK)/venv/bin/python -m pip install --quiet -r $(PACK)/requirements.txt" in recipe
    assert "policy-pack" not in makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]  # make test builds no venv
    workflow = (ROOT / ".github" / "workflows" / "gpu-dra.yml").read_text()
    assert "policyPacks: build/policy-pack/" in workflow and "policyPacks: policies/" not in workflow
    assert workflow.index("run: make policy-pack") < workflow.index("policyPacks: build/policy-pack/")

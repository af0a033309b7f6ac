"""`gpu-dra policy-pack`: the CrossGuard pack as a folder that stands alone, for `pulumi preview --policy-pack` and
`pulumi policy publish`: policies/__main__.py, the source it imports (gpu_dra/__init__.py, policypack.py, core/),
PulumiPolicy.yaml at the project's version, and a requirements.txt without `-e ..` (publish uploads the folder only).

The requirements are the distributions the copied source loads (imported in a subprocess), as pyproject.toml's
dependencies pin them: one source of truth. The folder is the build's: cli/output_folder writes it and keeps the
record of what the build wrote there (`POLICY_PACK`), replacing and pruning only those files, as render does its
manifests; a folder without that record that holds anything is refused, untouched. `venv/` (made by
`make policy-pack`) is never the build's to touch.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath

import yaml

from gpu_dra.cli.output_folder import POLICY_PACK, FolderError, check_folder, write_folder
from gpu_dra.cli.process import EXIT_OK, UsageError, child_process
from gpu_dra.cli.project import project_root
from gpu_dra.cli.text import cut, shown

SEEDS = ("gpu_dra/__init__.py", "gpu_dra/policypack.py")
# `pulumi policy publish` archives the folder without what a .gitignore in it lists (pulumi/pulumi#4644).
_GITIGNORE = ("# Not published: `pulumi policy publish` skips what this lists.\nvenv/\n__pycache__/\n*.pyc\n"
              f"{POLICY_PACK.name}\n")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# Imports the required modules and those of the optional ones that exist (`from a import b`: b may be a name), then
# prints each module loaded since start-up (not by site) with its file.
_PROBE = """import importlib, json, sys
before = set(sys.modules)
wanted = json.loads(sys.argv[1])
for name in wanted["required"]:
    importlib.import_module(name)
for name in wanted["optional"]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
print(json.dumps({n: getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n not in before}))
"""

EXAMPLES = """examples:
  gpu-dra policy-pack                      # into build/policy-pack; `make policy-pack` adds its venv
  pulumi preview --policy-pack build/policy-pack --policy-pack-config policies/config.prod.json

exit codes: 0 the pack was written, 2 it could not be (a file of yours in the way, a link, no write access)
"""


class PackError(Exception):
    """The pack cannot be built, or its folder is not the build's; nothing was written."""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="the pack's folder (default build/policy-pack); gpu-dra lists what it wrote in "
                        f"<folder>/{POLICY_PACK.name} and refuses a folder that holds anything without that record")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    out = Path(args.out).resolve() if args.out else root / "build" / "policy-pack"
    try:
        written = build(root, out)
    except PackError as error:
        raise UsageError(str(error)) from None
    print(f"The policy pack is in {shown(out, root)}/ ({len(written)} files). `make policy-pack` adds its venv, for "
          f"`pulumi preview --policy-pack {shown(out, root)} --policy-pack-config policies/config.<stack>.json`")
    return EXIT_OK


def build(root: Path, out: Path) -> list[Path]:
    """Build the pack into `out`; returns its files. Raises PackError, having written nothing, when `out` is not
    the build's or the copied source imports what pyproject.toml's dependencies do not provide."""
    try:
        check_folder(out, POLICY_PACK)  # before the import probe, which takes a second or two
        sources = _sources(root)
        files = {path: (root / path).read_bytes() for path in sources}
        files["__main__.py"] = (root / "policies" / "__main__.py").read_bytes()
        files["requirements.txt"] = _requirements(root, files).encode()
        files["PulumiPolicy.yaml"] = _project_file(root).encode()
        files[".gitignore"] = _GITIGNORE.encode()
        # Unchanged files are left as they are, so make sees no change.
        return write_folder(out, dict(sorted(files.items())), POLICY_PACK)
    except FolderError as error:
        raise PackError(str(error)) from None


def _sources(root: Path) -> list[str]:
    """gpu_dra/__init__.py, policypack.py and core/, plus every gpu_dra module they import and its packages: never
    gpu_dra/cli or components unless the pack's code imports them."""
    todo = [*SEEDS, *(p.relative_to(root).as_posix() for p in (root / "gpu_dra" / "core").rglob("*.py"))]
    found: set[str] = set()
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        parts = PurePosixPath(path).parent.parts
        todo += [f"{'/'.join(parts[:n])}/__init__.py" for n in range(1, len(parts) + 1)
                 if (root / "/".join(parts[:n]) / "__init__.py").is_file()]
        for module in _imported(root / path, aliases=True):
            if module.split(".")[0] == "gpu_dra":
                todo += [p for p in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py")
                         if (root / p).is_file()]
    return sorted(found)


def _imported(path: Path, aliases: bool = False) -> set[str]:
    """Absolute module names a file imports anywhere (in functions too); with `aliases`, `from a import b` adds a.b,
    which may be a module or a name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | ({f"{node.module}.{alias.name}" for alias in node.names} if aliases else set())
    return names


def _requirements(root: Path, files: dict[str, bytes]) -> str:
    """pyproject.toml's lines for the declared distributions the copied pack loads. What the copy imports itself
    must be declared or come with those; what libraries import on their own (jsonschema tries idna) is theirs."""
    declared = _declared(root)
    with tempfile.TemporaryDirectory() as stage:
        for relative, content in files.items():
            (Path(stage) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(stage) / relative).write_bytes(content)
        loaded = _probe(Path(stage), sorted(files))
        direct = {m for p in files if p.endswith(".py") for m in _imported(Path(stage) / p)}
    used = _distributions(loaded)
    chosen = {name for name in used if name in declared}
    provided = _provided(chosen)
    missing = sorted(f"{name} (for {min(modules & direct)})" for name, modules in used.items()
                     if modules & direct and name not in provided)
    if missing:
        raise PackError(f"the pack imports {', '.join(missing)}, which no dependency in pyproject.toml provides; "
                        "declare it there. Nothing was written")
    return ("# Built by `gpu-dra policy-pack`: the distributions the pack imports, as pyproject.toml pins them.\n"
            + "".join(f"{declared[name]}\n" for name in sorted(chosen)))


def _probe(stage: Path, files: list[str]) -> dict[str, str | None]:
    """Import every copied module, and every module the copy imports anywhere, from `stage` alone: the modules
    loaded, with their files. A gpu_dra module loaded from elsewhere (an editable install) means the copy misses it."""
    sources = [p for p in files if p.endswith(".py")]
    required = {p.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for p in sources
                if p.startswith("gpu_dra/")} | {m for p in sources for m in _imported(stage / p)}
    optional = {m for p in sources for m in _imported(stage / p, aliases=True)} - required
    wanted = json.dumps({"required": sorted(required), "optional": sorted(optional)})
    env = {**os.environ, "PYTHONPATH": str(stage), "PYTHONDONTWRITEBYTECODE": "1"}
    with child_process([sys.executable, "-c", _PROBE, wanted], cwd=stage, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE) as probe:
        stdout, stderr = probe.communicate()
    if probe.returncode:
        raise PackError(f"the copied pack does not import on its own; nothing was written:\n"
                        f"{cut(stderr.strip(), 2000)}")
    loaded: dict[str, str | None] = json.loads(stdout)
    strays = sorted(n for n, f in loaded.items() if n.split(".")[0] == "gpu_dra" and f
                    and not Path(f).resolve().is_relative_to(stage.resolve()))
    if strays:
        raise PackError(f"the copied pack loads {strays[0]} from {loaded[strays[0]]}, outside the copy; nothing was "
                        "written")
    return loaded


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(root: Path) -> dict[str, str]:
    """pyproject.toml's [project] dependencies: normalised name -> the line as written (name, range, markers)."""
    with open(root / "pyproject.toml", "rb") as file:
        lines = [str(d).strip() for d in tomllib.load(file)["project"]["dependencies"]]
    return {_normal(m.group(0)): line for line in lines if (m := _NAME.match(line))}


@cache
def _files_of(distribution: str) -> frozenset[Path]:
    found = metadata.distribution(distribution)
    return frozenset(Path(str(found.locate_file(f))).resolve() for f in found.files or [])


def _distributions(loaded: dict[str, str | None]) -> dict[str, set[str]]:
    """Installed distributions providing the loaded third-party modules: normalised name -> those modules. A
    namespace several distributions share (google.*) is told apart by the files loaded."""
    owners = metadata.packages_distributions()
    found: dict[str, set[str]] = {}
    for name, file in loaded.items():
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top == "gpu_dra":
            continue
        candidates = owners.get(top, [])
        if len(candidates) > 1 and file:
            candidates = [d for d in candidates if Path(file).resolve() in _files_of(d)]
        for distribution in candidates:
            found.setdefault(_normal(distribution), set()).add(name)
    return found


def _provided(names: set[str]) -> set[str]:
    """What `pip install` of `names` installs: them and, transitively, their requirements (extras aside)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_normal(m.group(0)) for r in requires if not re.search(r"\bextra\s*==", r) and (m := _NAME.match(r))]
    return seen


def _project_file(root: Path) -> str:
    """policies/PulumiPolicy.yaml with the version of pyproject.toml, which `pulumi policy publish` publishes as."""
    with open(root / "pyproject.toml", "rb") as file:
        version = tomllib.load(file)["project"]["version"]
    data = yaml.safe_load((root / "policies" / "PulumiPolicy.yaml").read_text(encoding="utf-8"))
    data["version"] = version
    return ("# Built by `gpu-dra policy-pack` from policies/PulumiPolicy.yaml; the version is pyproject.toml's.\n"
            + yaml.safe_dump(data, sort_keys=False, width=1000))

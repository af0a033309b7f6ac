"""Mutation fuzzing of everything that reads a user's files: the repo's own stack, team, project and manifest files
and a ResourceSlice dump, broken at random (bytes flipped, cut short, lines repeated, dropped or swapped, nesting,
aliases, tags and odd scalars spliced in), are read by the functions the CLI runs. Each read succeeds or raises
ConfigError or UsageError (exit 2) naming the file: never another exception (exit 3). Odd numbers are also aimed at
the fields readers convert (a random line seldom is one), small YAML texts of nested flow collections are generated
whole (keys that are lists or mappings), and scheduler log lines of repeated pieces are timed. Seeded, so a failure
repeats; bounded, so it runs in seconds. Then a few runs of the CLI itself: exit 0, 1 or 2, never a traceback."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import random
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from gpu_dra.cli.inputs import read_inputs
from gpu_dra.cli.main import build_parser
from gpu_dra.cli.process import UsageError
from gpu_dra.cli.project import find_project_root
from gpu_dra.core.analysis import schedlogs
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.findings import ConfigError
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ALL_STACKS, ROOT, Project

SEED = 13
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
DUMP = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"

ODD_VALUES = [
    ".inf", "-.inf", ".nan", "1e999", "0x1F", "0o17", "1_000", "1:20", "-1", "0", "1.5", "yes", "no", "on", "~",
    "null", "true", "''", "[]", "{}", "x" * 5000, "2024-01-01", "2024-02-30", "2024-01-01T25:00:00Z",
    "!!binary aGk=", "!!int abc", "!!int ''", "!!float x", "!!bool maybe", "!!null x", "!!timestamp x", "!!str 1",
    "!!set {a: null}", "!!omap [{a: 1}]", "!custom x", "*undefined", "&a x", '"\\ud800"', '"\\U0001F600"',
    '"\\x1b[31mred"', "|\n  text", "'(x'", "[a]: b", "? [a]", "<<: {}", "{a: 1, a: 2}", "[" * 120 + "]" * 120,
    "{[a: {}]}", "{[a]}", "{a: 1, [b]}", "[{[a]: 1}]", "{{a: b}}", "{[a]:b}",
]
ODD_KEYS = ["a(b", "x[0]", "'k.e/y'", "1", "null", "true", "1.5", "2024-01-01", "? [a, b]", "<<", "GPU-DRA:x",
            "gpu-dra:x", "nonamespace", "'\\t'", "!!binary aGk=", "[a: {}]", "{a: b}"]
# The fields readers turn into numbers or booleans (a slice's pool counts, typed attributes and capacities, a
# request's count and tolerationSeconds, a Node's allocatable GPUs, a quota), and values no API object holds there.
TYPED_FIELDS = ("resourceSliceCount", "generation", "int", "bool", "value", "count", "tolerationSeconds",
                "nvidia.com/gpu", "count/resourceclaims.resource.k8s.io")
ODD_NUMBERS = [".inf", "-.inf", ".nan", "1e999", "-1e999", "1e999999", "'1e999999'", "-1e999999", str(2**64),
               str(-2**63 - 1), "1" + "0" * 5000, "-1", "0", "1.5", "true", "'5'", "0x1F", "[]", "{}", "~", "'.inf'"]


def _mutated(rng: random.Random, text: str) -> tuple[str, bytes]:
    """One random mutation of `text`, named, as the bytes to write."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    indent = " " * (len(lines[i]) - len(lines[i].lstrip()))
    kind = rng.choice(["flip", "cut", "repeat", "drop", "swap", "indent", "nest", "alias", "value", "key"])
    if kind == "flip":
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return kind, bytes(data)
    if kind == "cut":
        return kind, text[:rng.randrange(len(text))].encode()
    if kind == "repeat":
        lines.insert(i, lines[i])
    elif kind == "drop":
        del lines[i]
    elif kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "indent":
        lines[i] = " " * rng.randint(0, 8) + lines[i].lstrip()
    elif kind == "nest":
        depth = rng.choice([99, 100, 101, 300, 999, 1001, 20_000])
        nested = ("[" * depth + "]" * depth if rng.random() < 0.5
                  else "\n" + "\n".join(f"{indent}  {'  ' * level}- " for level in range(min(depth, 400))))
        lines[i] = f"{lines[i].split(':')[0]}: {nested}"
    elif kind == "alias":
        levels = rng.randint(1, 8)
        laughs = [f"{indent}l0: &a0 [x, x, x, x, x, x, x, x, x]"]
        laughs += [f"{indent}l{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels)]
        lines[i:i] = laughs if rng.random() < 0.7 else [f"{indent}loop: &s [*s]"]
    elif kind == "value":
        key = lines[i].split(":")[0] if ":" in lines[i] else lines[i]
        lines[i] = f"{key}: {rng.choice(ODD_VALUES)}"
    else:
        lines.insert(i, f"{indent}{rng.choice(ODD_KEYS)}: {rng.choice(ODD_VALUES)}")
    return kind, "\n".join(lines).encode()


def _ending(read: Callable[[], object], file: str) -> tuple[bool, str | None]:
    """Whether `read` refused its input, and what is wrong with how it ended, if anything: it must succeed, or raise
    an exit-2 error that names `file`."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            read()
    except ConfigError as error:
        unnamed = [finding for finding in error.findings if not finding.file]
        return True, f"findings without a file: {unnamed}" if unnamed or not error.findings else None
    except UsageError as error:
        return True, None if file in str(error) else f"UsageError that names no file: {error}"
    except Exception as error:  # what the CLI reports as an internal error, exit 3
        where = traceback.extract_tb(error.__traceback__)[-1]
        return True, f"{type(error).__name__}: {str(error)[:200]} (at {where.filename}:{where.lineno})"
    return False, None


def _typed_mutation(rng: random.Random, text: str) -> tuple[str, bytes]:
    """An odd number in place of one of the TYPED_FIELDS' values, named by the field."""
    lines = text.split("\n")
    fields = [i for i, line in enumerate(lines) if line.strip(" -").split(":")[0] in TYPED_FIELDS]
    i = rng.choice(fields)
    key = lines[i].split(":")[0]
    lines[i] = f"{key}: {rng.choice(ODD_NUMBERS)}"
    return key.strip(" -"), "\n".join(lines).encode()


def _fuzz(runs: int, targets: list[Path], read: Callable[[Path], object],
          mutation: Callable[[random.Random, str], tuple[str, bytes]] = _mutated) -> list[str]:
    """Mutate one of `targets` per run (restored after it), `read` it, and describe every unexpected ending; a fuzz
    whose mutations were all read, or all refused, tried nothing."""
    rng = random.Random(SEED)
    failures = []
    refusals = 0
    for run in range(runs):
        path = rng.choice(targets)
        original = path.read_bytes()
        kind, mutated = mutation(rng, original.decode())
        path.write_bytes(mutated)
        try:
            refused, problem = _ending(functools.partial(read, path), path.name)
        finally:
            path.write_bytes(original)
        refusals += refused
        if problem:
            failures.append(f"run {run} ({kind} of {path.name}, {mutated[:120]!r}...): {problem}")
    if not 0 < refusals < runs:
        failures.append(f"{refusals} of {runs} mutations refused")
    return failures


def _verb(*argv: str) -> object:
    """A verb as the CLI runs it, minus the mapping of exceptions to exit codes that the test checks instead."""
    args = build_parser().parse_args(list(argv))
    return args.func(args)


def test_the_config_loader_survives_broken_stack_and_team_files(project: Project) -> None:
    files = sorted((project.root / "stacks").rglob("*.yaml"))
    assert len(files) == 9  # four stacks, five team files
    assert _fuzz(200, files, lambda path: [load_stack(project.root, stack) for stack in ALL_STACKS]) == []


def test_finding_the_project_survives_a_broken_project_file(project: Project) -> None:
    assert _fuzz(60, [project.root / "Pulumi.yaml"], lambda path: find_project_root(project.root)) == []


@pytest.fixture
def manifests(tmp_path: Path) -> list[Path]:
    for example in EXAMPLES:
        shutil.copy(example, tmp_path / example.name)
    return [tmp_path / example.name for example in EXAMPLES]


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    shutil.copy(DUMP, tmp_path / DUMP.name)
    return tmp_path / DUMP.name


@pytest.mark.parametrize("lines", [True, False], ids=["lint", "dump"])
def test_the_manifest_readers_survive_broken_manifests(manifests: list[Path], dump: Path, lines: bool) -> None:
    """What lint reads with lines, and what explain and inventory read without (yaml-rs for what kubectl writes,
    PyYAML's checked path for anything odd)."""
    assert _fuzz(150, [*manifests, dump], lambda path: read_inputs([str(path)], lines=lines)) == []


def test_lint_survives_broken_manifests(manifests: list[Path]) -> None:
    assert _fuzz(100, manifests, lambda path: _verb("lint", str(path))) == []


def test_explain_survives_broken_pods_and_their_claims(tmp_path: Path) -> None:
    """The Pods and workloads explain reads (their nodeName, tolerations, claims) as a team's manifests break."""
    pods = []
    for name in ("pod-two-claims.yaml", "busy-gpus.yaml"):
        shutil.copy(ROOT / "examples" / "explain" / name, tmp_path / name)
        pods.append(tmp_path / name)
    assert _fuzz(60, pods, lambda path: _verb("explain", str(DUMP), str(path), "--format", "json")) == []


@pytest.mark.parametrize("output", ["text", "json"])
def test_inventory_survives_a_broken_dump(dump: Path, output: str) -> None:
    assert _fuzz(40, [dump], lambda path: _verb("inventory", "--format", output, str(path))) == []


NODES = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-100-64-147-149.ec2.internal
  status:
    allocatable:
      nvidia.com/gpu: 8
    nodeInfo: {kubeletVersion: v1.34.2}
- apiVersion: v1
  kind: ResourceQuota
  metadata: {name: gpu-dra-devices, namespace: ml-training}
  spec:
    hard:
      count/resourceclaims.resource.k8s.io: 32
"""


@pytest.mark.parametrize("verb", ["inventory", "explain", "doctor"])
def test_the_cluster_readers_survive_odd_numbers(tmp_path: Path, dump: Path, verb: str) -> None:
    """`.inf` and the like where the readers convert: every run changes one such field of the dump, a claim or the
    nodes (a random line of the dump seldom was one, and `.inf` as resourceSliceCount was exit 3)."""
    claim = tmp_path / "claim.yaml"
    claim.write_text((ROOT / "examples" / "claim-pair-same-pcie-root.yaml").read_text()
                     .replace("{deviceClassName: gpu.nvidia.com, count: 2}",
                              "\n          deviceClassName: gpu.nvidia.com\n          count: 2\n"
                              "          tolerations: [{key: k, operator: Exists, effect: NoExecute,\n"
                              "                         tolerationSeconds: 60}]"))
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    argv = {"inventory": ("inventory", "--format", "json", str(dump)),
            "explain": ("explain", str(dump), str(claim)),
            "doctor": ("--project-dir", str(ROOT), "doctor", "--stack", "dev", str(dump), str(nodes))}[verb]
    targets = {"inventory": [dump], "explain": [dump, claim], "doctor": [dump, nodes]}[verb]
    assert _fuzz(60, targets, lambda path: _verb(*argv), _typed_mutation) == []


def _flow_node(rng: random.Random, depth: int = 0) -> str:
    """A small YAML flow node: scalars, sequences and mappings nested, keys of any of them, implicit nulls."""
    if depth > 3 or rng.random() < 0.35:
        return rng.choice(["a", "1", "''", "~", "{}", "[]", "&x a", "? a"])
    entries = []
    for _ in range(rng.randint(0, 3)):
        key = _flow_node(rng, depth + 1)
        entries.append(rng.choice([key, f"{key}: {_flow_node(rng, depth + 1)}", f"{key}:{_flow_node(rng, depth + 1)}"]))
    opening, closing = rng.choice(["[]", "{}"])
    return opening + rng.choice([", ", ",", ",\n "]).join(entries) + closing


COLLECTION_KEY = "a key is a list or mapping"


@pytest.mark.parametrize("lines", [True, False], ids=["lint", "dump"])
def test_the_readers_survive_generated_flow_collections(lines: bool) -> None:
    """Whole texts like the fuzzer's `{[a: {}]}` (yaml-rs made its key a tuple holding a dict: TypeError, exit 3),
    read with lines and without; a key the line reader refuses as a list or mapping the dump reader refuses too."""
    rng = random.Random(SEED)
    failures = []
    refused = 0
    for run in range(3000):
        text = rng.choice(["", "- ", "x: "]) + _flow_node(rng)
        try:
            parse_documents(text, "flow.yaml", lines=lines)
        except ConfigError as error:
            refused += 1
            if any(finding.file != "flow.yaml" for finding in error.findings):
                failures.append(f"run {run} {text!r}: {error}")
            continue
        except Exception as error:
            failures.append(f"run {run} {text!r}: {type(error).__name__}: {error}")
            continue
        if not lines:
            try:
                parse_documents(text, "flow.yaml")
            except ConfigError as error:
                if COLLECTION_KEY in str(error):
                    failures.append(f"run {run} {text!r}: read without lines, refused with them: {error}")
    assert failures == [] and 0 < refused < 3000


LOG_HEADERS = ['I1129 10:00:00.000000 1 dynamicresources.go:123] "pod unschedulable" plugin="DynamicResources" ',
               "I1129 10:00:00.000000 1 dynamicresources.go:123] Pod unschedulable ",
               'E1129 10:00:00.000000 1 schedule_one.go:1] "claim" err="',
               'I1129 10:00:00.000000 1 runtime.go:1] "Observed a panic: ',
               "dynamicresources.go:542: I1106 16:40:23.108330] scheduler: ",
               "2022-11-10T20:30:18.670662874Z stderr F I1129 10:00:00.000000 1 allocator.go:1] ",
               "EVENTS\t1\t2\tkube-scheduler-a\tI1129 10:00:00.000000 1 allocator.go:1] ",
               '{"msg": "claim", "caller": "allocator.go:1", "pod": "', "claim ", ""]
LOG_PIECES = ["a", ".", "=", '"', "\\", " ", "(", ")", "pod=", "ResourceClaim ", "claim ", "x/", ":", "] ", "I1129 ",
              "10:00:00.0 ", "a.go:1", "\t", "{", "}", ",", "laim", "<", "\u00e9", "-", "/"]
LONG_LINE = 40_000  # characters: the 13 s line of the issue
LINE_BOUND = 2.0  # seconds for one such line: read in linear time it takes milliseconds


def test_the_log_parser_reads_long_lines_in_linear_time() -> None:
    """A line of a repeated piece of text (a word, quotes, backslashes, `key=`, `pod=`...) after each header: every
    piece alone, then random runs of them. The key=value pattern was tried from every character of a word, and a
    40,000-character word took 13 s."""
    rng = random.Random(SEED)
    shapes = [(header, piece) for header in LOG_HEADERS for piece in LOG_PIECES]
    shapes += [(rng.choice(LOG_HEADERS), "".join(rng.choices(LOG_PIECES, k=rng.randint(2, 4)))) for _ in range(200)]
    slow = []
    for header, piece in shapes:
        line = header + piece * (LONG_LINE // len(piece)) + rng.choice(["", ' pod="ml/a"', '"'])
        start = time.perf_counter()
        schedlogs.scan(io.BytesIO(line.encode() + b"\n"))
        if time.perf_counter() - start > LINE_BOUND:
            slow.append(f"{time.perf_counter() - start:.1f} s: {line[:120]!r}")
    assert slow == []


# --------------------------------------------------------------------------------------------- the CLI itself


def _cli(root: Path, *argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *argv], cwd=root, capture_output=True,
                          timeout=120, input=stdin, env={**os.environ, "PYTHONPATH": str(ROOT)})


BOMB = "\n".join(["laughs:", "  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
                  *(f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8))])


@pytest.mark.parametrize("file,old,new,argv,named", [
    ("stacks/teams/research.yaml", "claimTemplates:", BOMB + "\nclaimTemplates:", ("check", "--stack", "dev"),
     "stacks/teams/research.yaml:18: aliases repeat more than 10,000 nodes"),
    ("stacks/Pulumi.dev.yaml", "  gpu-dra:teams:", "  gpu-dra:environment: prod\n  gpu-dra:teams:",
     ("preview", "--stack", "dev"), "stacks/Pulumi.dev.yaml:80: config.gpu-dra:environment: repeats the key"),
    ("stacks/teams/research.yaml", "claims: 20", "claims: !!int abc", ("check", "--stack", "dev"),
     "stacks/teams/research.yaml:9: quota.claims: 'abc' is not a valid !!int"),
    ("examples/guide-gpu-20gb-any.yaml", "kind:", "x: " + "[" * 990 + "]" * 990 + "\nkind:",
     ("lint", "examples/guide-gpu-20gb-any.yaml"), "examples/guide-gpu-20gb-any.yaml:4: x: nests more than 100"),
])
def test_hostile_input_exits_2_naming_the_file_and_line(project: Project, file: str, old: str, new: str,
                                                        argv: tuple[str, ...], named: str) -> None:
    """The issue's reproducers, end to end: each used to take gigabytes, or exit 3, or pass silently."""
    shutil.copytree(ROOT / "examples", project.root / "examples")
    path = project.root / file
    path.write_text(path.read_text().replace(old, new, 1))
    result = _cli(project.root, *argv)
    stderr = result.stderr.decode()
    assert (result.returncode, "Traceback" in stderr) == (2, False), stderr
    assert named in stderr, stderr


def test_undecodable_stdin_exits_2() -> None:
    result = _cli(ROOT, "lint", "-", stdin=b"kind: DeviceClass\nmetadata: {name: a\xff}\n")
    assert (result.returncode, result.stderr.decode()) == (2, "<stdin>:2: is not UTF-8 text; save it as UTF-8\n")


@pytest.mark.parametrize("verb,source", [("lint", EXAMPLES[0]), ("lint", EXAMPLES[1]), ("inventory", DUMP)],
                         ids=["lint", "lint", "inventory"])
def test_the_cli_on_broken_input_exits_0_1_or_2(tmp_path: Path, verb: str, source: Path) -> None:
    kind, mutated = _mutated(random.Random(SEED), source.read_text())
    (tmp_path / source.name).write_bytes(mutated)
    result = _cli(ROOT, verb, str(tmp_path / source.name))
    assert result.returncode in (0, 1, 2) and b"Traceback" not in result.stderr, (kind, result)

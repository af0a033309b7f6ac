#!/usr/bin/env python3
"""Vendor the AWS side of a Karpenter install from Karpenter's getting-started CloudFormation template: the node
role's trust and managed policies, the controller's IAM policies, the interruption queue, its policy, and the
EventBridge rules that feed it.

The template (aws/karpenter-provider-aws, website/content/en/preview/getting-started/getting-started-with-karpenter/
cloudformation.yaml) is the file Karpenter's guides download for a release and its reference documents statement by
statement. This tool reads the byte-exact copy kept in tests/data/karpenter/<tag>/cloudformation.yaml and writes
gpu_dra/core/facts/karpenter_iam.py. `--copy-from-mirror` first refreshes that copy from a fetched mirror of the
repository (`git show <tag>:<path>`), checking that the tag is the commit named here and that the repository's
licence is Apache-2.0.

The template's ${...} placeholders stay placeholders, for gpu_dra.core.render.karpenter to substitute. The tool stops
at anything it does not know: a placeholder, a resource type, a property or an intrinsic function. So a change in
upstream's template fails here instead of silently producing a different policy. Development tool, not shipped:
stdlib + PyYAML. Usage:

    tools/vendor_karpenter_iam.py [--copy-from-mirror [--mirror GIT_DIR]] [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "gpu_dra" / "core" / "facts" / "karpenter_iam.py"
MIRROR = Path("/work/.mirror/aws+karpenter-provider-aws/repo")  # where `fetch` put the repository on this machine

REPOSITORY = "aws/karpenter-provider-aws"
TAG = "v1.14.1"  # the newest tag in the fetched mirror (no v1.15.x tag in it)
COMMIT = "bde00654cd316fddb3dccfba3f5ac07039865429"  # v1.14.1 is a lightweight tag on this commit (2026-08-20)
PATH = "website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml"
LICENCE = "Apache-2.0"
SHA256 = "7ffeb01f04b5da482ef43087830de00a476098416e3b4576c38239ef1b0bef4b"  # of the file at the tag
VENDORED = ROOT / "tests" / "data" / "karpenter" / TAG / "cloudformation.yaml"

# What the 1.15 template adds. It is read from the v1.15 reference page, because the v1.15.0 file itself is in
# neither the mirror nor the code index.
DIFFERENCE_1_15 = (
    "Karpenter 1.15's template differs only by ec2:RebootInstances in the NodeLifecyclePolicy statement "
    "AllowScopedDeletion, which Karpenter uses \"to reboot a node in place when node repair selects a reboot (only "
    "with the `RebootForRepair` AWS feature gate enabled)\" (aws/karpenter-provider-aws commit "
    "d77d1a3a5a44d7ce9c041bcc51da1e567de3f2ec, website/content/en/v1.15/reference/cloudformation.md, section "
    "\"AllowScopedDeletion\"; every other statement there matches this tag's). gpu-dra does not enable that gate, so "
    "it grants the 1.14.1 statement unchanged. The v1.15.0 file itself was not read (UNVERIFIED).")

# The template's placeholders, each with the module constant that names it. CloudFormation fills the first four
# itself (pseudo parameters); the others are the template's parameter and two of its resources' ARNs.
PLACEHOLDERS = {
    "AWS::Partition": "PARTITION",
    "AWS::Region": "REGION",
    "AWS::AccountId": "ACCOUNT_ID",
    "AWS::URLSuffix": "URL_SUFFIX",
    "ClusterName": "CLUSTER_NAME",
    "KarpenterNodeRole.Arn": "NODE_ROLE_ARN",
    "KarpenterInterruptionQueue.Arn": "QUEUE_ARN",
}
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
QUEUE = "KarpenterInterruptionQueue"
NODE_ROLE = "KarpenterNodeRole"


# ------------------------------------------------------------------------------------------------------ reading
class _Loader(yaml.SafeLoader):
    """YAML with the three intrinsic functions the template uses, each in its short scalar form. !Ref and !GetAtt
    become the ${...} placeholder !Sub would write for them; any other tag is an error (SafeLoader's)."""


def _sub(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(None, None, "!Sub with a variable map is not modelled", node.start_mark)
    return str(loader.construct_scalar(node))


def _reference(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(None, None, "a list form is not modelled", node.start_mark)
    return "${" + str(loader.construct_scalar(node)) + "}"


_Loader.add_constructor("!Sub", _sub)
_Loader.add_constructor("!Ref", _reference)
_Loader.add_constructor("!GetAtt", _reference)


@dataclass(frozen=True)
class Template:
    """What gpu-dra reads of the template, its placeholders kept."""

    node_role_trust_policy: dict[str, Any]
    node_role_managed_policy_arns: list[str]
    controller_policies: dict[str, dict[str, Any]]  # logical ID -> policy document
    queue_name: str
    queue_retention_seconds: int
    queue_sqs_managed_sse: bool
    queue_policy: dict[str, Any]
    interruption_rules: dict[str, dict[str, Any]]  # logical ID -> event pattern
    interruption_target_id: str


def _fail(where: str, problem: str) -> NoReturn:
    raise ValueError(f"{VENDORED.name} {where}: {problem}; the template changed, extend the tool")


def _properties(resource: dict[str, Any], name: str, known: set[str]) -> dict[str, Any]:
    properties: dict[str, Any] = resource.get("Properties") or {}
    if unknown := sorted(set(properties) - known):
        _fail(name, f"unknown properties {unknown}")
    return properties


def _placeholders(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(_PLACEHOLDER.findall(value))
    if isinstance(value, dict):
        return {p for key, item in value.items() for p in _placeholders(key) | _placeholders(item)}
    if isinstance(value, list):
        return {p for item in value for p in _placeholders(item)}
    return set()


def parse(text: str) -> Template:
    """The parts of the template gpu-dra declares, checked against the shape this tool knows."""
    document = yaml.load(text, Loader=_Loader)  # SafeLoader plus three scalar constructors
    resources: dict[str, dict[str, Any]] = document["Resources"]
    by_type: dict[str, list[str]] = {}
    for name, resource in resources.items():
        by_type.setdefault(resource["Type"], []).append(name)
    known = {"AWS::IAM::Role", "AWS::IAM::ManagedPolicy", "AWS::SQS::Queue", "AWS::SQS::QueuePolicy",
             "AWS::Events::Rule"}
    if unknown := sorted(set(by_type) - known):
        _fail("Resources", f"unknown resource types {unknown}")
    if by_type["AWS::IAM::Role"] != [NODE_ROLE] or by_type["AWS::SQS::Queue"] != [QUEUE]:
        _fail("Resources", f"roles {by_type['AWS::IAM::Role']}, queues {by_type['AWS::SQS::Queue']}")

    role = _properties(resources[NODE_ROLE], NODE_ROLE,
                       {"RoleName", "Path", "AssumeRolePolicyDocument", "ManagedPolicyArns"})
    policies = {}
    for name in by_type["AWS::IAM::ManagedPolicy"]:
        properties = _properties(resources[name], name, {"ManagedPolicyName", "Path", "PolicyDocument"})
        if properties.get("Path", "/") != "/":
            _fail(name, "a policy path other than /")
        policies[name] = json.loads(properties["PolicyDocument"])  # a !Sub of JSON text: placeholders in strings
    queue = _properties(resources[QUEUE], QUEUE, {"QueueName", "MessageRetentionPeriod", "SqsManagedSseEnabled"})
    (queue_policy_name,) = by_type["AWS::SQS::QueuePolicy"]
    queue_policy = _properties(resources[queue_policy_name], queue_policy_name, {"Queues", "PolicyDocument"})
    if queue_policy["Queues"] != ["${" + QUEUE + "}"]:
        _fail(queue_policy_name, f"Queues {queue_policy['Queues']}")
    rules, target_ids = {}, set()
    for name in by_type["AWS::Events::Rule"]:
        rule = _properties(resources[name], name, {"EventPattern", "Targets"})
        targets = rule["Targets"]
        if len(targets) != 1 or set(targets[0]) != {"Id", "Arn"} or targets[0]["Arn"] != "${" + QUEUE + ".Arn}":
            _fail(name, f"targets {targets}")
        rules[name] = rule["EventPattern"]
        target_ids.add(targets[0]["Id"])
    if len(target_ids) != 1:
        _fail("AWS::Events::Rule", f"target ids {sorted(target_ids)}")

    template = Template(
        node_role_trust_policy=role["AssumeRolePolicyDocument"],
        node_role_managed_policy_arns=role["ManagedPolicyArns"],
        controller_policies=policies,
        queue_name=queue["QueueName"],
        queue_retention_seconds=queue["MessageRetentionPeriod"],
        queue_sqs_managed_sse=queue["SqsManagedSseEnabled"],
        queue_policy=queue_policy["PolicyDocument"],
        interruption_rules=rules,
        interruption_target_id=target_ids.pop(),
    )
    found = _placeholders([getattr(template, field) for field in Template.__dataclass_fields__])
    if unknown := sorted(found - set(PLACEHOLDERS)):
        _fail("placeholders", f"unknown {unknown}")
    return template


# ------------------------------------------------------------------------------------------------------ writing
def python_literal(value: Any, indent: int, column: int, width: int = 120) -> str:
    """`value` as a Python literal written at `column` of a line indented by `indent`: on one line where it fits (ruff's
    line length is 120), else one item per line. Strings as JSON writes them (double quotes, as ruff's style)."""
    flat = _flat(value)
    inner = indent + 4
    if isinstance(value, str) and column + len(flat) + 1 > width:
        return "(\n" + "\n".join(" " * inner + json.dumps(part) for part in _pieces(value, width - inner - 2)) + \
            "\n" + " " * indent + ")"
    if not isinstance(value, (dict, list)) or not value or column + len(flat) + 1 <= width:
        return flat
    if isinstance(value, dict):
        items = [f"{' ' * inner}{json.dumps(key)}: {python_literal(item, inner, inner + len(json.dumps(key)) + 2)}"
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + ",\n" + " " * indent + "}"
    items = [f"{' ' * inner}{python_literal(item, inner, inner)}" for item in value]
    return "[\n" + ",\n".join(items) + ",\n" + " " * indent + "]"


def _pieces(text: str, width: int) -> list[str]:
    """`text` cut after its colons into pieces of at most `width` characters, for adjacent string literals."""
    pieces = [""]
    for part in re.split(r"(?<=:)", text):
        if pieces[-1] and len(pieces[-1]) + len(part) > width:
            pieces.append("")
        pieces[-1] += part
    return pieces


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_flat(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(item) for item in value) + "]"
    if isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError(f"{value!r}: no literal for {type(value).__name__}")


def _commented(text: str, width: int = 116) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def module_text(template: Template) -> str:
    """The generated module for `template`."""
    docstring = [
        '"""The AWS side of a Karpenter install, as Karpenter\'s getting-started CloudFormation template declares it:',
        "the node role's trust and managed policies, the controller's IAM policies, the interruption queue with its",
        "policy, and the EventBridge rules that feed it. The template's ${...} placeholders are kept; the constants",
        "below name them, and gpu_dra.core.render.karpenter substitutes them.",
        "",
        "Generated by tools/vendor_karpenter_iam.py from the byte-exact copy in",
        f"tests/data/karpenter/{TAG}/cloudformation.yaml; do not edit.",
        "",
        f"- repository: github.com/{REPOSITORY}",
        f"- tag: {TAG} (commit {COMMIT})",
        f"- path: {PATH}",
        f"- licence: {LICENCE} (the repository's LICENSE at the tag)",
        f"- sha256 of the file: {SHA256}",
        "",
        *_commented(DIFFERENCE_1_15),
        '"""',
    ]
    constants = [f'{constant} = "${{{placeholder}}}"' for placeholder, constant in PLACEHOLDERS.items()]
    body = [
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        f'REPOSITORY = "{REPOSITORY}"',
        f'TAG = "{TAG}"',
        f'COMMIT = "{COMMIT}"',
        f'PATH = "{PATH}"',
        f'LICENCE = "{LICENCE}"',
        "",
        "# The template's placeholders",
        *constants,
        "",
        "# KarpenterNodeRole: its trust policy and AWS managed policies",
        f"NODE_ROLE_TRUST_POLICY: dict[str, Any] = {python_literal(template.node_role_trust_policy, 0, 41)}",
        "NODE_ROLE_MANAGED_POLICY_ARNS: tuple[str, ...] = ("
        + "".join(f"\n    {json.dumps(arn)}," for arn in template.node_role_managed_policy_arns) + "\n)",
        "",
        "# The controller's policies (AWS::IAM::ManagedPolicy), by their logical IDs in the template",
        "CONTROLLER_POLICIES: dict[str, dict[str, Any]] = {",
        *(f"    {json.dumps(name)}: {python_literal(document, 4, 6 + len(name) + 2)},"
          for name, document in template.controller_policies.items()),
        "}",
        "",
        f"# {QUEUE}: its name, message retention and encryption, and its queue policy",
        f"INTERRUPTION_QUEUE_NAME = {json.dumps(template.queue_name)}",
        f"INTERRUPTION_QUEUE_RETENTION_SECONDS = {template.queue_retention_seconds!r}",
        f"INTERRUPTION_QUEUE_SQS_MANAGED_SSE = {template.queue_sqs_managed_sse!r}",
        f"INTERRUPTION_QUEUE_POLICY: dict[str, Any] = {python_literal(template.queue_policy, 0, 44)}",
        "",
        "# The EventBridge rules that send interruption events to the queue, by their logical IDs: each one's event",
        "# pattern, and the id of its one target (the queue)",
        "INTERRUPTION_RULES: dict[str, dict[str, Any]] = {",
        *(f"    {json.dumps(name)}: {python_literal(pattern, 4, 6 + len(name) + 2)},"
          for name, pattern in template.interruption_rules.items()),
        "}",
        f"INTERRUPTION_TARGET_ID = {json.dumps(template.interruption_target_id)}",
    ]
    return "\n".join(docstring + body) + "\n"


# ------------------------------------------------------------------------------------------------------ copying
def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout


def copy_from_mirror(git_dir: Path) -> None:
    """Write the template at TAG from the mirror over the committed copy, after checking the tag and the licence."""
    commit = _git(git_dir, "rev-parse", f"{TAG}^{{commit}}").decode().strip()
    if commit != COMMIT:
        raise SystemExit(f"{REPOSITORY} {TAG} is commit {commit} in {git_dir}, not {COMMIT}")
    licence = _git(git_dir, "show", f"{TAG}:LICENSE").decode()
    if "Apache License" not in licence or "Version 2.0" not in licence:
        raise SystemExit(f"{REPOSITORY} {TAG}: LICENSE is not the Apache License 2.0")
    text = _git(git_dir, "show", f"{TAG}:{PATH}")
    if hashlib.sha256(text).hexdigest() != SHA256:
        raise SystemExit(f"{REPOSITORY} {TAG}:{PATH} is not the file this tool was written for (sha256)")
    VENDORED.parent.mkdir(parents=True, exist_ok=True)
    VENDORED.write_bytes(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--copy-from-mirror", action="store_true",
                        help=f"refresh {VENDORED.relative_to(ROOT)} from the mirror first")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help=f"the repository's git directory ({MIRROR})")
    parser.add_argument("--out", type=Path, default=MODULE, help=f"where to write the module ({MODULE})")
    args = parser.parse_args(argv)
    if args.copy_from_mirror:
        copy_from_mirror(args.mirror)
    text = VENDORED.read_bytes()
    if hashlib.sha256(text).hexdigest() != SHA256:
        raise SystemExit(f"{VENDORED} is not the byte-exact file of {REPOSITORY} {TAG}:{PATH}")
    args.out.write_text(module_text(parse(text.decode())))


if __name__ == "__main__":
    main()

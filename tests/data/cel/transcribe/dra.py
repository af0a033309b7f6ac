"""Mechanical transcription of kubernetes/dynamic-resource-allocation@v0.35.0
cel/compile_test.go (testcases)
into tests/data/cel/: `python dra.py <a git clone of kubernetes/dynamic-resource-allocation>`
rewrites the table; never edit it by hand."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = sys.argv[1]  # a git clone of kubernetes/dynamic-resource-allocation

src = subprocess.run(
    ["git", "-C", REPO, "show", "v0.35.0:cel/compile_test.go"], capture_output=True, text=True, check=True
).stdout
commit = subprocess.run(
    ["git", "-C", REPO, "rev-parse", "v0.35.0^{commit}"], capture_output=True, text=True, check=True
).stdout.strip()
lines = src.splitlines()
start = next(i for i, text_line in enumerate(lines) if text_line.startswith("var testcases = "))
cases = []
i = start + 1
depth_case = None
while i < len(lines):
    m = re.match(r'^\t"([^"]+)": \{$', lines[i])
    if m:
        name, line_no, body = m.group(1), i + 1, []
        i += 1
        depth = 1
        while depth:
            text_line = lines[i]
            depth += text_line.count("{") - text_line.count("}")
            body.append(text_line)
            i += 1
        text = "\n".join(body)
        expr = re.search(r'expression:\s*(`[^`]*`|"(?:[^"\\]|\\.)*")', text).group(1)
        expression = expr[1:-1] if expr[0] == "`" else bytes(expr[1:-1], "utf-8").decode("unicode_escape")
        case = {"name": name, "line": line_no, "expression": expression}
        if re.search(r"enableConsumableCapacity:\s*true", text):
            case["enable_consumable_capacity"] = True
        env = re.search(r"envType:\s*ptr\.To\(environment\.(\w+)\)", text)
        if env:
            case["env_type"] = env.group(1)
        err = re.search(r'expectCompileError:\s*(`[^`]*`|"(?:[^"\\]|\\.)*")', text)
        if err:
            case["expect_compile_error"] = err.group(1)[1:-1]
        else:
            cost = re.search(r"expectCost:\s*(\d+)", text)
            case["expect_cost"] = int(cost.group(1)) if cost else 0
        cases.append(case)
        continue
    if lines[i] == "}":
        break
    i += 1
doc = {
    "source": f"kubernetes/dynamic-resource-allocation@v0.35.0:cel/compile_test.go (commit {commit}), var testcases",
    "license": "Apache-2.0 (Copyright The Kubernetes Authors)",
    "notes": (
        "One entry per upstream case, in file order; `line` is the line of the case's name. expect_cost is "
        "upstream's expectCost, which TestCEL compares with the compiled MaxCost for every case that compiles "
        "(0 where the case omits it). enable_consumable_capacity and env_type are the case's Features and "
        "Options.EnvType (StoredExpressions when absent)."
    ),
    "cases": cases,
}
with open(Path(__file__).parent.parent / "dra_compile_test_v0.35.0.yaml", "w") as out:
    out.write("# Generated from upstream's test source, case by case; do not edit by hand.\n")
    yaml.safe_dump(doc, out, sort_keys=False, width=120, allow_unicode=True)
print(len(cases))

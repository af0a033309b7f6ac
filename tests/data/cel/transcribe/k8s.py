"""Mechanical transcription of kubernetes/apiserver@v0.35.7 pkg/cel/library/cost_test.go tables
into tests/data/cel/: `python k8s.py <a git clone of kubernetes/apiserver>`
rewrites the table; never edit it by hand."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = sys.argv[1]  # a git clone of kubernetes/apiserver
TAG = "v0.35.7"
src = subprocess.run(
    ["git", "-C", REPO, "show", f"{TAG}:pkg/cel/library/cost_test.go"], capture_output=True, text=True, check=True
).stdout
commit = subprocess.run(
    ["git", "-C", REPO, "rev-parse", f"{TAG}^{{commit}}"], capture_output=True, text=True, check=True
).stdout.strip()
lines = src.splitlines()


def go_string(text):
    if text.startswith("`"):
        return text[1:-1]
    return bytes(text[1:-1], "utf-8").decode("unicode_escape")


consts = {}
block = src[src.index("const (") : src.index(")\n", src.index("const ("))]
for m in re.finditer(r'(\w+Literal)\s*=\s*((?:"(?:[^"\\]|\\.)*"[ \t]*\+?[ \t]*\n?[ \t]*)+)', block):
    consts[m.group(1)] = "".join(go_string(p) for p in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(2)))


def func_range(name):
    start = next(i for i, text_line in enumerate(lines) if text_line.startswith(f"func {name}("))
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == "}")
    return start, end


def blocks(start, end, indent):
    """Struct literals `{ ... }` opened at exactly `indent` tabs: (first line number, text)."""
    i = start
    while i < end:
        if lines[i] == "\t" * indent + "{":
            first, body, depth = i + 1, [], 1
            i += 1
            while depth:
                depth += lines[i].count("{") - lines[i].count("}")
                body.append(lines[i])
                i += 1
            yield first, "\n".join(body)
        else:
            i += 1


COST = r"expectE(?:s|st)imatedCost:\s*checker\.CostEstimate\{Min:\s*(\d+),\s*Max:\s*(\d+)\}"


def simple_table(func):
    start, end = func_range(func)
    out = []
    for line, text in blocks(start, end, 2):
        name = re.search(r'name:\s*("(?:[^"\\]|\\.)*")', text)
        expr = re.search(r'expr:\s*(`[^`]*`|"(?:[^"\\]|\\.)*")', text)
        cost = re.search(COST, text)
        runtime = re.search(r"expectRuntimeCost:\s*(\d+)", text)
        out.append(
            {
                "test": func,
                "name": go_string(name.group(1)) if name else None,
                "line": line,
                "expression": go_string(expr.group(1)),
                "estimated": {"min": int(cost.group(1)), "max": int(cost.group(2))},
                "runtime": int(runtime.group(1)),
            }
        )
    return out


def index_of_table():
    start, end = func_range("TestIndexOfCost")
    text = "\n".join(lines[start:end])
    ops = [
        go_string(o)
        for o in re.findall(r'"(?:[^"\\]|\\.)*"', re.search(r"opts:\s*\[\]string\{([^}]*)\}", text).group(1))
    ]
    out = []
    for line, body in blocks(start, end, 4):
        literal = re.search(r"comparableLiteral:\s*(\w+)", body).group(1)
        param = go_string(re.search(r'param:\s*("(?:[^"\\]|\\.)*")', body).group(1))
        cost = re.search(r"expectedEstimatedCost:\s*checker\.CostEstimate\{Min:\s*(\d+),\s*Max:\s*(\d+)\}", body)
        runtime = int(re.search(r"expectedRuntimeCost:\s*(\d+)", body).group(1))
        for op in ops:
            out.append(
                {
                    "test": "TestIndexOfCost",
                    "name": f"{literal}{op % param if '%s' in op else op}".replace("%s", param),
                    "line": line,
                    "expression": consts[literal] + op.replace("%s", param),
                    "estimated": {"min": int(cost.group(1)), "max": int(cost.group(2))},
                    "runtime": runtime,
                }
            )
    return out


def sizes(text):
    text = text.strip()
    m = re.fullmatch(r"exactSize\((\d+)\)", text)
    if m:
        return [int(m.group(1))] * 2
    m = re.fullmatch(r"checker\.SizeEstimate\{Min:\s*(\d+),\s*Max:\s*(\d+)\}", text)
    return [int(m.group(1)), int(m.group(2))]


def size_table():
    start, end = func_range("TestSize")
    out = []
    for line, body in blocks(start, end, 2):
        if "function:" not in body:
            continue
        args = re.search(r"argSizes:\s*(.*),\s*(?://.*)?$", body, re.M).group(1)
        exact = re.fullmatch(r"exactSizes\(([\d,\s]+)\)", args.strip())
        if exact:
            arg_sizes = [[int(x)] * 2 for x in exact.group(1).split(",")]
        else:
            arg_sizes = [
                [int(x) for x in re.findall(r"\d+", s)] for s in re.findall(r"\{Min:\s*\d+,\s*Max:\s*\d+\}", args)
            ]
        out.append(
            {
                "test": "TestSize",
                "name": go_string(re.search(r'name:\s*("(?:[^"\\]|\\.)*")', body).group(1)),
                "line": line,
                "function": go_string(re.search(r'function:\s*("[^"]*")', body).group(1)),
                "target_size": sizes(
                    re.search(r"targetSize:\s*([^,]*\)|checker\.SizeEstimate\{[^}]*\}),", body).group(1)
                ),
                "arg_sizes": arg_sizes,
                "expect_size": sizes(
                    re.search(r"expectSize:\s*([^,]*\)|checker\.SizeEstimate\{[^}]*\}),", body).group(1)
                ),
            }
        )
    return out


cases = (
    simple_table("TestStringLibrary")
    + simple_table("TestQuantityCost")
    + simple_table("TestSemverCost")
    + index_of_table()
)
doc = {
    "source": f"kubernetes/apiserver@{TAG}:pkg/cel/library/cost_test.go (commit {commit})",
    "license": "Apache-2.0 (Copyright The Kubernetes Authors)",
    "notes": (
        "The tables of TestStringLibrary, TestQuantityCost, TestSemverCost and TestIndexOfCost (its opts x costs "
        "product expanded, the list literals resolved from the file's constants), and TestSize's replace rows; "
        "`line` is where the case starts. testCost estimates with Kubernetes' CostEstimator over "
        "testCostEstimator (any string or bytes of unknown size: at most 12), has() costing nothing, and checks "
        "estimated [min, max] and the actual cost at run time (`runtime`)."
    ),
    "cost_cases": cases,
    "size_cases": size_table(),
}
with open(Path(__file__).parent.parent / "apiserver_library_cost_test_v0.35.7.yaml", "w") as out:
    out.write("# Generated from upstream's test source, case by case; do not edit by hand.\n")
    yaml.safe_dump(doc, out, sort_keys=False, width=120, allow_unicode=True)
print(len(cases), len(doc["size_cases"]))

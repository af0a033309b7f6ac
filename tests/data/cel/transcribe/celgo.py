"""Mechanical transcription of google/cel-go@v0.26.0 checker/cost_test.go TestCost
into tests/data/cel/: `python celgo.py <a git clone of google/cel-go>`
rewrites the table; never edit it by hand."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = sys.argv[1]  # a git clone of google/cel-go
TAG = "v0.26.0"
src = subprocess.run(
    ["git", "-C", REPO, "show", f"{TAG}:checker/cost_test.go"], capture_output=True, text=True, check=True
).stdout
commit = subprocess.run(
    ["git", "-C", REPO, "rev-parse", f"{TAG}^{{commit}}"], capture_output=True, text=True, check=True
).stdout.strip()
lines = src.splitlines()
start = next(i for i, text_line in enumerate(lines) if text_line.startswith("func TestCost("))
aliases = {}
for text_line in lines[start : start + 15]:
    m = re.match(r"\t(\w+) := (types\..*)$", text_line)
    if m:
        aliases[m.group(1)] = m.group(2)


def resolve(text):
    for _ in range(5):
        text = re.sub(r"\b(" + "|".join(aliases) + r")\b", lambda m: aliases[m.group(1)], text)
    return text


end = next(i for i in range(start, len(lines)) if lines[i].startswith("\tfor _, tst := range cases"))


def go_string(t):
    return t[1:-1] if t.startswith("`") else bytes(t[1:-1], "utf-8").decode("unicode_escape")


def wanted(text):
    if text == "zeroCost":
        return [0, 0]
    if text == "oneCost":
        return [1, 1]
    m = re.fullmatch(r"FixedCostEstimate\((\d+)\)", text)
    if m:
        return [int(m.group(1))] * 2
    m = re.fullmatch(r"CostEstimate\{Min:\s*(\d+),\s*Max:\s*(\d+)\}", text)
    return [int(m.group(1)), int(m.group(2))]


cases = []
i = start
while i < end:
    if lines[i] == "\t\t{":
        first, body, depth = i + 1, [], 1
        i += 1
        while depth:
            depth += lines[i].count("{") - lines[i].count("}")
            body.append(lines[i])
            i += 1
        text = "\n".join(body)
        case = {
            "name": go_string(re.search(r'name:\s*("(?:[^"\\]|\\.)*")', text).group(1)),
            "line": first,
            "expression": go_string(re.search(r'expr:\s*(`[^`]*`|"(?:[^"\\]|\\.)*")', text).group(1)),
        }
        variables = re.findall(r'decls\.NewVariable\("([^"]+)",\s*(.+?)\)(?=,\s*$|\},?\s*$|\s*$|,\s*\n)', text, re.M)
        variables = []
        for m in re.finditer(r'decls\.NewVariable\("([^"]+)",\s*', text):
            j, depth = m.end(), 0
            while True:
                ch = text[j]
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        break
                    depth -= 1
                j += 1
            variables.append({"name": m.group(1), "type": resolve(text[m.end() : j].strip())})
        if variables:
            case["variables"] = variables
        hints = re.search(r"hints:\s*map\[string\]uint64\{([^}]*)\}", text)
        if hints:
            case["hints"] = {k: int(v) for k, v in re.findall(r'"([^"]+)":\s*(\d+)', hints.group(1))}
        presence = re.search(r"PresenceTestHasCost\((true|false)\)", text)
        if presence:
            case["presence_test_has_cost"] = presence.group(1) == "true"
        custom = re.search(r"OverloadCostEstimate\(([\w.\"]+)", text)
        if custom:
            case["overload_cost_estimate"] = custom.group(1)
        case["wanted"] = wanted(
            re.search(r"wanted:\s*(zeroCost|oneCost|FixedCostEstimate\(\d+\)|CostEstimate\{[^}]*\})", text).group(1)
        )
        cases.append(case)
    else:
        i += 1
doc = {
    "source": f"google/cel-go@{TAG}:checker/cost_test.go (commit {commit}), TestCost",
    "license": "Apache-2.0 (Copyright Google LLC)",
    "notes": (
        "One entry per upstream case, in file order; `line` is where the case starts. Variable types are the "
        "Go expressions with the test's local aliases resolved. TestCost checks with the standard library and "
        "estimates with testCostEstimator: a size hint by the node's path joined with '.', else at most 12 for "
        "a bytes value, and EstimateCallCost 7 for timestamp_to_year; has() costs 1 unless the case says "
        "presence_test_has_cost. overload_cost_estimate names a Go OverloadCostEstimate option of the case."
    ),
    "cases": cases,
}
with open(Path(__file__).parent.parent / "celgo_checker_cost_test_v0.26.0.yaml", "w") as out:
    out.write("# Generated from upstream's test source, case by case; do not edit by hand.\n")
    yaml.safe_dump(doc, out, sort_keys=False, width=120, allow_unicode=True)
print(len(cases))

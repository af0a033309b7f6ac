"""Lint rules for DRA selectors, beyond what the API server checks: each with an id, a message and a fix.

They catch what compiles but never matches, or matches and then aborts the claim at scheduling time. Facts come
from the driver catalog (`gpu_dra.core.facts.nvidia`) and the instance catalog (`gpu_dra.core.facts.hardware`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_dra.core.dra.cel import regex
from gpu_dra.core.dra.cel.lexer import Lookup, Token, device_lookups, tokenize
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.hardware import GPU_MODELS, KNOWN_PRODUCT_NAMES, LEAST_MEMORY
from gpu_dra.core.facts.target import Target
from gpu_dra.core.findings import ERROR, WARNING, Finding


@dataclass(frozen=True)
class SelectorContext:
    """What a selector sees on its target cluster: a DeviceClass selector every device; a request's only what its
    class admits."""

    class_selector: bool = False
    device_types: tuple[str, ...] = nvidia.DEVICE_TYPES
    target: Target = Target()


def _qualified_name(lookup: Lookup) -> str | None:
    if lookup.domain is None or lookup.name is None:
        return None
    return lookup.name if lookup.domain == nvidia.DRIVER_NAME else f"{lookup.domain}/{lookup.name}"


def _guarded(tokens: list[Token], lookup: Lookup) -> bool:
    """has(device.attributes[d].x), `.?x` optional chaining or `'x' in device.attributes[d]` protect a lookup."""
    text = " ".join(t.text for t in tokens)
    name = re.escape(lookup.name or "")
    domain = re.escape(lookup.domain or "")
    map_ = lookup.map
    patterns = [rf"has \( device \. {map_} \[\??\s*['\"]{domain}['\"] \] \. {name} \)",
                rf"\.\? {name}\b", rf"['\"]{name}['\"] in device \. {map_} \[\??\s*['\"]{domain}['\"] \]"]
    return any(re.search(p, text) for p in patterns)


def _type_restriction(tokens: list[Token]) -> set[str] | None:
    """Device types an `attributes[gpu.nvidia.com].type == 'x'` (or `in [...]`) term admits; None if no such term."""
    text = " ".join(t.text for t in tokens)
    found = re.findall(r"\. type == ['\"](\w+)['\"]", text)
    listed = re.findall(r"\. type in \[ ([^\]]*) \]", text)
    types = set(found)
    for group in listed:
        types |= set(re.findall(r"['\"](\w+)['\"]", group))
    return types or None


def _memory_threshold(tokens: list[Token]) -> str | None:
    """The quantity in `capacity[...].memory.compareTo(quantity(Q)) >= 0` / `.isGreaterThan(quantity(Q))`."""
    text = " ".join(t.text for t in tokens)
    match = re.search(r"\. memory \. (?:compareTo|isGreaterThan) \( quantity \( (['\"][^'\"]+['\"]) \) \)", text)
    return match.group(1)[1:-1] if match else None


def _product_patterns(tokens: list[Token]) -> list[tuple[str, str]]:
    """(RE2 pattern, how the selector writes it) of each product-name test: `productName.matches('...')`, and
    `productName == '...'` (on either side: `'...' == device.attributes[...].productName`) as the exact name."""
    patterns = []
    for i, token in enumerate(tokens):
        if token.text != "productName":
            continue
        after = tokens[i + 1:i + 5]
        if [t.text for t in after[:2]] == [".", "matches"] and len(after) == 4 and after[3].string_value is not None:
            value = after[3].string_value
            patterns.append((value, f"productName.matches({value!r})"))
        elif after[:1] and after[0].text == "==" and len(after) > 1 and after[1].string_value is not None:
            value = after[1].string_value
            patterns.append((_exactly(value), f"productName == {value!r}"))
        else:  # the lookup read from its start: `'...' == device.attributes[domain].productName`
            start = i
            while start > 0 and tokens[start - 1].text in ("device", ".", "attributes", "[", "]") \
                    or (start > 0 and tokens[start - 1].string_value is not None and tokens[start - 2].text == "["):
                start -= 1
            written = tokens[start - 2].string_value if start >= 2 and tokens[start - 1].text == "==" else None
            if written is not None:
                patterns.append((_exactly(written), f"productName == {written!r}"))
    return patterns


def _exactly(name: str) -> str:
    """An RE2 pattern matching exactly this name (RE2 takes a backslash before punctuation only)."""
    return "^" + "".join(f"\\{c}" if c in "\\.+*?()|[]{}^$" else c for c in name) + "$"


def _regex_matches(pattern: str, name: str) -> bool:
    """RE2, as the selector's `matches` runs: linear time, so no team pattern can stall lint or the PR gate."""
    try:
        return regex.search(pattern, name)
    except regex.RegexError:
        return True  # the compiler reports invalid patterns; do not guess here


def lint_selector(expression: str, context: SelectorContext = SelectorContext()) -> list[Finding]:
    tokens = tokenize(expression)
    if tokens is None:
        return []
    findings = _lookup_findings(tokens, context)
    text = " ".join(t.text for t in tokens)
    if context.class_selector and "device . driver ==" not in text and "== device . driver" not in text:
        findings.append(Finding(
            "missing-driver-guard", WARNING,
            "a DeviceClass selector sees every device of every driver; without a driver check it may match, or "
            "raise on, another driver's devices",
            f"start with device.driver == '{nvidia.DRIVER_NAME}' && ..."))
    patterns = _product_patterns(tokens)
    for pattern, written in patterns:
        if not any(_regex_matches(pattern, name) for name in KNOWN_PRODUCT_NAMES):
            findings.append(Finding(
                "product-matches-nothing", WARNING,
                f"{written} matches no product name the driver is known to publish "
                "(names are NVML's, e.g. 'NVIDIA H100 80GB HBM3', 'Tesla T4')",
                "match a substring of a known name, e.g. 'H100|A100'"))
    return findings + _memory_findings(tokens, [pattern for pattern, _ in patterns])


def _lookup_findings(tokens: list[Token], context: SelectorContext) -> list[Finding]:
    """Each attribute or capacity of NVIDIA's domains the selector reads, once: one the driver does not publish
    (or publishes as the other kind), or one some device types lack, read without a guard."""
    findings: list[Finding] = []
    level = context.target.driver_level
    published = {t: nvidia.published_attributes(level, t) for t in context.device_types}
    every_attribute = set().union(*[nvidia.published_attributes(level, t) for t in nvidia.DEVICE_TYPES])
    every_capacity = set().union(*[nvidia.published_capacity(t) for t in nvidia.DEVICE_TYPES])
    restriction = _type_restriction(tokens)
    visible = [t for t in context.device_types if restriction is None or t in restriction]
    reported: set[tuple[str, str]] = set()
    for lookup in device_lookups(tokens):
        name = _qualified_name(lookup)
        if name is None or lookup.domain not in (nvidia.DRIVER_NAME, nvidia.STANDARD_DOMAIN):
            continue
        key = (lookup.map, name)
        if key in reported:
            continue
        reported.add(key)
        if lookup.map == "attributes" and name in every_capacity and name not in every_attribute:
            findings.append(Finding(
                "capacity-as-attribute", ERROR,
                f"{name} is a capacity, not an attribute: device.attributes['{lookup.domain}'].{lookup.name} "
                f"raises 'no such key: {lookup.name}' on every device, which aborts the claim",
                f"device.capacity['{lookup.domain}'].{lookup.name}.compareTo(quantity('20Gi')) >= 0"))
            continue
        if lookup.map == "attributes" and name not in every_attribute:
            why = nvidia.RENAMED_OR_REMOVED.get(name, "not published by NVIDIA's driver")
            fix = ("device.attributes['resource.kubernetes.io'].pciBusID" if name == "pcieBusID"
                   else "select on an attribute the driver publishes: " + ", ".join(sorted(every_attribute)))
            findings.append(Finding("unknown-attribute", ERROR,
                                    f"attribute {name} is {why}; the lookup raises 'no such key'", fix))
            continue
        if lookup.map == "capacity" and name not in every_capacity:
            findings.append(Finding("unknown-capacity", ERROR,
                                    f"capacity {name} is not published by NVIDIA's driver (it publishes: "
                                    f"{', '.join(sorted(every_capacity))})"))
            continue
        source = (published if lookup.map == "attributes"
                  else {t: nvidia.published_capacity(t) for t in context.device_types})
        lacking = [t for t in visible if name not in source[t]]
        omitted = lookup.map == "attributes" and name in nvidia.SOMETIMES_OMITTED
        if (lacking or omitted) and not _guarded(tokens, lookup):
            who = f"{'/'.join(lacking)} devices" if lacking else "devices where the driver cannot resolve it"
            findings.append(Finding(
                "unguarded-lookup", WARNING,
                f"{lookup.map} {name} is missing on {who}: the lookup raises there and aborts the whole claim",
                f"guard it: has(device.{lookup.map}['{lookup.domain}'].{lookup.name}) && ..., or "
                f"device.{lookup.map}['{lookup.domain}'].?{lookup.name}.orValue(...)"
                + ("" if omitted else f", or restrict the type first (type == '{visible[0]}')")))
    return findings


def _memory_findings(tokens: list[Token], patterns: list[str]) -> list[Finding]:
    """A memory threshold between what the driver reports for a GPU model and the size in its name."""
    threshold = _memory_threshold(tokens)
    if threshold is None:
        return []
    try:
        wanted = parse_quantity(threshold)
    except QuantityError:
        return []
    findings = []
    if wanted < LEAST_MEMORY:  # a quantity without its unit: Kubernetes reads quantity('40') as 40 bytes
        example = f"{threshold}Gi" if threshold.isdigit() else "20Gi"
        return [Finding("memory-without-unit", WARNING,
                        f"quantity('{threshold}') is {wanted.normalize():f} bytes, which every GPU has: the threshold "
                        "selects every device", f"give the size in Gi: quantity('{example}')")]
    for model in GPU_MODELS.values():
        if patterns and not any(_regex_matches(p, model.product_name) for p in patterns):
            continue
        reported_memory = parse_quantity(model.memory)
        if reported_memory < wanted <= model.marketing_gb * 2**30:
            findings.append(Finding(
                "memory-above-reported", WARNING,
                f"quantity('{threshold}') excludes every {model.product_name}: the driver reports "
                f"{model.memory}, less than the {model.marketing_gb}Gi its name suggests",
                f"use quantity('{int(reported_memory // 2**30)}Gi') or less for {model.product_name}"))
    return findings

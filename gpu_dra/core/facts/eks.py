"""Amazon EKS facts: each Kubernetes version's support calendar, and what the support types cost.

The calendar is the "Amazon EKS Kubernetes release calendar" of the EKS user guide
(https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html, source
awsdocs/amazon-eks-user-guide@01385604:latest/ug/versioning/kubernetes-versions.adoc): standard support lasts 14 months
from the EKS release, extended support 12 more; "Billing for extended support starts at the beginning of the day that
the version reaches end of standard support", UTC. Each row names its source and status; the rule
kubernetes-version-supported and docs/sources.md#versions-and-support-calendar read it from here.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Literal, get_args

_CALENDAR = "awsdocs/amazon-eks-user-guide@01385604:latest/ug/versioning/kubernetes-versions.adoc"


@dataclass(frozen=True)
class SupportWindow:
    version: str
    standard_ends: datetime.date  # extended support, and its billing, starts this day (UTC)
    extended_ends: datetime.date  # after it EKS upgrades the control plane itself
    source: str
    status: str  # "verified", "partially verified" or "unverified"


SUPPORT_CALENDAR: dict[str, SupportWindow] = {w.version: w for w in (
    SupportWindow("1.33", datetime.date(2026, 7, 29), datetime.date(2027, 7, 29), _CALENDAR, "verified"),
    SupportWindow("1.34", datetime.date(2026, 12, 2), datetime.date(2027, 12, 2), _CALENDAR, "verified"),
    SupportWindow("1.35", datetime.date(2027, 3, 27), datetime.date(2028, 3, 27),
                  "the calendar page as quoted by https://endoflife.date/amazon-eks (EKS release 2026-01-27/28); "
                  "both ends fit the 14 + 12 month rule", "partially verified"),
    SupportWindow("1.36", datetime.date(2027, 8, 2), datetime.date(2028, 8, 2),
                  "EKS release 2026-06-02 and standard support through 2027-08-02 per a third party "
                  "(devopsdreams.blogspot.com/2026/08/kubernetes-136-on-amazon-eks-upgrade.html); extended end by the "
                  "12 month rule", "unverified"),
)}

def today() -> datetime.date:
    """The day support windows are judged by (UTC, as EKS bills): today's, never a constant."""
    return datetime.datetime.now(datetime.UTC).date()


# "You can't disable extended support once your cluster has entered it. You can only disable extended support for
# clusters on standard support." (https://docs.aws.amazon.com/eks/latest/userguide/disable-extended-support.html).
# upgradePolicy STANDARD: "If your upgrade policy is STANDARD, it will be automatically upgraded" at the end of
# standard support (https://docs.aws.amazon.com/eks/latest/userguide/view-upgrade-policy.html).


# Control-plane price per cluster-hour in USD: $0.10 in standard support, $0.60 in extended support (AWS blog
# https://aws.amazon.com/blogs/containers/amazon-eks-extended-support-for-kubernetes-versions-pricing/, linked from the
# calendar page). A cluster whose upgrade policy allows extended support pays the higher price only once its version
# is past standard support (https://docs.aws.amazon.com/eks/latest/userguide/enable-extended-support.html).
STANDARD_PRICE_PER_HOUR = "0.10"
EXTENDED_PRICE_PER_HOUR = "0.60"


# Label and taint key prefixes the EKS API refuses on a managed node group (CreateNodegroup, UpdateNodegroupConfig):
# "Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]", and the same for taints
# (the API's own error, quoted in aws/containers-roadmap#1451 and eksctl-io/eksctl#4006). "contain": a subdomain of
# them, such as node-role.kubernetes.io/, is refused too (containers-roadmap#1451 asks for exactly that one). The
# message is quoted from those threads (2021-2022); the EKS API reference does not list the prefixes: re-check it
# against CreateNodegroup's answer where a deploy is possible.
RESERVED_NODE_GROUP_KEY_PREFIXES = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")


def reserved_key_prefix(key: str) -> str | None:
    """The reserved prefix a managed node group's label or taint key contains, or None."""
    return next((prefix for prefix in RESERVED_NODE_GROUP_KEY_PREFIXES if prefix in key), None)


# The EKS add-ons every gpu-dra cluster runs as managed add-ons. "Amazon EKS doesn't automatically update an add-on
# when new versions are released or after you update your cluster to a new Kubernetes minor version"
# (https://docs.aws.amazon.com/eks/latest/userguide/updating-an-add-on.html), so unless pinned (cluster.addonVersions)
# each follows the stack's kubernetesVersion: the program asks EKS for the add-on's default version for it
# (aws.eks.getAddonVersion, DescribeAddonVersions).
AddonName = Literal["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"]
EKS_ADDONS: tuple[AddonName, ...] = get_args(AddonName)


# Account IDs AWS's documentation uses in its examples: 111122223333 and 444455556666 throughout the EKS and IAM user
# guides (the EKS access-entry pages' principal ARNs: https://docs.aws.amazon.com/eks/latest/userguide/
# creating-access-entries.html), 123456789012 in ARN examples, 012345678901 in the Account Management reference
# (https://docs.aws.amazon.com/accounts/latest/reference/manage-acct-identifiers.html). Copied into a stack, an
# access entry for one fails CreateAccessEntry halfway through the first `pulumi up`, after the cluster exists.
DOCUMENTATION_ACCOUNT_IDS = frozenset({"111122223333", "444455556666", "123456789012", "012345678901"})


def documentation_account(arn: str) -> str | None:
    """The documentation example account an IAM ARN (arn:aws:iam::<account>:...) names, or None."""
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[4] in DOCUMENTATION_ACCOUNT_IDS else None

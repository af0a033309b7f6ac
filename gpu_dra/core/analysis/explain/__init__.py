"""Which devices and nodes satisfy each claim, and why not: what the scheduler decides but does not say.

Per request (and subrequest): the devices passing the class's and the request's selectors, the others grouped by
reason naming the selector and, where it can be told, the failing term. A CEL runtime error on any device aborts the
claim, as in the allocator (for a pod's claim, on any device the nodes it may use reach). Then the verdict per node
is the faithful core's (`allocate_claims` in gpu_dra.core.analysis.allocator: pools and generations, node
selection, counters, taints, devices other claims hold, several claims together), tried on the nodes where every
request has enough matching, free devices, in name order.
Before that, `with_taint_rules` adds the DeviceTaintRules' taints to the devices they select, where the scheduler's
ResourceSlice tracker would. Binding conditions of the devices allocated are reported, not simulated.
Each distinct (selector, device shape) is evaluated once, and each distinct node (as the allocator sees it: its
slices, pools, which devices match, are held, and how their constrained attributes compare) allocated once, so large
uniform fleets stay fast. An unallocatable claim's reason names the devices in use and the claims holding them.
Each node's search stops at the scheduler's filter timeout, and all of them when the command's search budget is spent
(FILTER_TIMEOUT, SEARCH_BUDGET): a node whose search was stopped is not decided, and says so in the scheduler's words.
"""

from .explainer import Explainer
from .report import (
    BINDING_NOT_SIMULATED,
    CEL_COMPILE,
    CEL_RUNTIME,
    EXAMPLES,
    MISSING_CLASS,
    ClaimReport,
    ClaimVerdict,
    binding_as_dict,
    binding_waits,
)
from .search import FILTER_TIMED_OUT, FILTER_TIMEOUT
from .taints import TaintRuleError

__all__ = [
    "BINDING_NOT_SIMULATED", "CEL_COMPILE", "CEL_RUNTIME", "EXAMPLES", "FILTER_TIMED_OUT", "FILTER_TIMEOUT",
    "MISSING_CLASS", "ClaimReport", "ClaimVerdict", "Explainer", "TaintRuleError", "binding_as_dict", "binding_waits",
]

"""The policy pack. Building PolicyPack starts the analyzer server and never returns: keep this file to that.

Rules live in gpu_dra/core/policy/ (plain functions, one module per domain) and gpu_dra/policypack.py (the
CrossGuard objects), which `gpu-dra check` runs offline.
"""

import os

from pulumi_policy import PolicyPack

from gpu_dra.policypack import policies

# Static levels are an environment's defaults, prod where GPU_DRA_ENVIRONMENT is unset (an unconfigured pack fails
# closed); per-stack config files (`gpu-dra check --stack S --pack-config`) carry each rule's enforcementLevel, so
# one pack serves every environment.
PolicyPack(name="gpu-dra", policies=policies(os.environ.get("GPU_DRA_ENVIRONMENT", "prod")))

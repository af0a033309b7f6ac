"""What NVIDIA's DRA driver publishes on each EC2 GPU instance type: one source of truth, each row sourced.

Used by config validation (known instance types, CPU architecture vs AMI), node-group summaries and the
synthesized inventory (`gpu_dra.core.analysis.inventory.synthesize`). Figures are the NVML values the driver
publishes, not EC2's marketing memory sizes (docs/sources.md#gpu-instance-catalog; each row names its own source).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuModel:
    key: str
    product_name: str
    memory: str
    compute_capability: str
    architecture: str
    marketing_gb: int  # the size in the name or spec sheet; the driver reports less for most boards
    source: str
    status: str  # "verified" or "estimated"


@dataclass(frozen=True)
class InstanceType:
    name: str
    gpu: GpuModel
    gpus: int
    cpu_arch: str  # "x86_64" or "arm64"
    source: str


GPU_MODELS: dict[str, GpuModel] = {m.key: m for m in (
    GpuModel("A100-40GB", "NVIDIA A100-SXM4-40GB", "40Gi", "8.0.0", "Ampere", 40,
             "real EKS p4d ResourceSlice; bottlerocket-core-kit PR #834", "verified"),
    GpuModel("A100-80GB", "NVIDIA A100-SXM4-80GB", "80Gi", "8.0.0", "Ampere", 80,
             "NVIDIA/mig-parted #31; GKE dump", "verified"),
    GpuModel("H100-80GB", "NVIDIA H100 80GB HBM3", "81559Mi", "9.0.0", "Hopper", 80,
             "real EKS p5 ResourceSlice (NVIDIA/aicr@19edc950 docs/conformance/cncf/evidence/"
             "secure-accelerator-access.md)", "verified"),
    GpuModel("H200", "NVIDIA H200", "143771Mi", "9.0.0", "Hopper", 141,
             "GKE H200 dump; NVIDIA/mig-parted #120", "verified"),
    GpuModel("B200", "NVIDIA B200", "183359Mi", "10.0.0", "Blackwell", 180,
             "NVIDIA/TensorRT-LLM #10278; pytorch/ao PR #4002 (architecture from go-nvlib)", "verified"),
    GpuModel("A10G", "NVIDIA A10G", "23028Mi", "8.6.0", "Ampere", 24,
             "NVIDIA/k8s-device-plugin #344; NVIDIA/DCGM #232", "verified"),
    GpuModel("L4", "NVIDIA L4", "23034Mi", "8.9.0", "Ada Lovelace", 24,
             "modal-labs/modal-client PR #2797", "verified"),
    GpuModel("L40S", "NVIDIA L40S", "46068Mi", "8.9.0", "Ada Lovelace", 48,
             "akash-network/provider-configs PR #95; isaac-sim/IsaacSim #228", "verified"),
    GpuModel("T4", "Tesla T4", "15360Mi", "7.5.0", "Turing", 16,
             "NVIDIA/k8s-device-plugin #390 (ECC on, drivers 535-580)", "verified"),
    GpuModel("T4G", "NVIDIA T4G", "15360Mi", "7.5.0", "Turing", 16,
             "assumed equal to T4 (same TU104 board); no ResourceSlice seen", "estimated"),
    GpuModel("RTX-PRO-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "97887Mi", "12.0.0", "Blackwell", 96,
             "nvidia-smi name in GoogleCloudPlatform/container-engine-accelerators PR #512; 97887 MiB, compute "
             "capability 12.0 in public nvidia-smi reports (drivers 580-595); no ResourceSlice seen", "verified"),
    # On no EC2 instance type (the EC2 accelerated-computing instance list has none): a model for node pools of
    # existing clusters and for lint's product names.
    GpuModel("T10", "Tesla T10", "16384Mi", "7.5.0", "Turing", 16,
             "public nvidia-smi reports (name 'Tesla T10', 16384 MiB, drivers 580-595; TU102 board, no ECC); "
             "no ResourceSlice seen", "estimated"),
)}

_KARPENTER = "Karpenter instance-types reference (EC2 API); AWS EC2 user guide"


def _family(prefix: str, model: str, sizes: dict[str, int], cpu_arch: str = "x86_64") -> list[InstanceType]:
    return [InstanceType(f"{prefix}.{size}", GPU_MODELS[model], count, cpu_arch, _KARPENTER)
            for size, count in sizes.items()]


_G_SIZES = {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
            "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}

INSTANCE_TYPES: dict[str, InstanceType] = {t.name: t for t in (
    *_family("p4d", "A100-40GB", {"24xlarge": 8}),
    *_family("p4de", "A100-80GB", {"24xlarge": 8}),
    *_family("p5", "H100-80GB", {"4xlarge": 1, "48xlarge": 8}),
    *_family("p5e", "H200", {"48xlarge": 8}),
    *_family("p5en", "H200", {"48xlarge": 8}),
    *_family("p6-b200", "B200", {"48xlarge": 8}),
    *_family("g5", "A10G", _G_SIZES),
    *_family("g6", "L4", _G_SIZES),
    *_family("g6e", "L40S", _G_SIZES),
    # kubernetes/autoscaler#9854 (G7e table); aws/sagemaker-hyperpod-cli PR #390 (ml.g7e sizes)
    *_family("g7e", "RTX-PRO-6000", {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4,
                                     "48xlarge": 8}),
    *_family("g4dn", "T4", {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
                            "12xlarge": 4, "metal": 8}),
    *_family("g5g", "T4G", {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 2, "metal": 2},
             cpu_arch="arm64"),
)}

# Product names the driver is known to publish (NVML device names; docs/sources.md#published-attributes) plus the
# instance catalog's.
# The least a GPU memory threshold may say: every GPU and MIG slice in GPU_MODELS has GiBs, so a count below a MiB is a
# quantity written without its unit (Kubernetes reads quantity('40') as 40 bytes, which every device has).
LEAST_MEMORY = 2**20

KNOWN_PRODUCT_NAMES = sorted({m.product_name for m in GPU_MODELS.values()} | {
    "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB", "NVIDIA GB200", "NVIDIA GB300", "NVIDIA A30",
    "Tesla P100-PCIE-16GB", "GRID A100-8C"})

# An EC2 instance type is `family.size`; the sizes EC2 names are nano, micro, small, medium, large, xlarge, Nxlarge,
# metal and metal-Nxl (https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html, "Instance
# type naming conventions"). A CPU type gpu-dra has no catalog of is judged by its size's form alone.
EC2_SIZE = re.compile(r"nano|micro|small|medium|large|xlarge|[1-9]\d*xlarge|metal(-[1-9]\d*xl)?")
EC2_SIZE_EXAMPLES = ("nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge",
                     "16xlarge", "24xlarge", "48xlarge", "metal")

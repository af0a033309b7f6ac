"""gpu-dra: GPU scheduling on Amazon EKS with Kubernetes Dynamic Resource Allocation."""

__version__ = "0.1.0"

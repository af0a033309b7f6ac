"""Facts gpu-dra relies on, each once with its source: Kubernetes feature gates per version, NVIDIA's driver
(classes, published attributes), the GPU instance catalog. Imports nothing of gpu-dra."""

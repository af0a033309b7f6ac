"""Facts gpu-dra relies on, each once with its source: Kubernetes feature gates per version, NVIDIA's driver
(classes, published attributes, chart lines, driver gates and their rules), the GPU instance catalog; and the
cluster a verdict is for (`target`), described by them. Imports nothing of gpu-dra outside facts."""

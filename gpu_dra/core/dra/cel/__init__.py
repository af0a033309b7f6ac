"""DRA selector CEL with the semantics of k8s.io/dynamic-resource-allocation/cel, on Google's C++ runtime.

`check_selector` does what the API server does when an object is written (compile, type check, limits);
`compile_selector` does that and builds the program that evaluates;
`evaluate` does what the scheduler does per device (unknown domain -> empty map, unknown id -> runtime error).
"""

from gpu_dra.core.dra.cel.compile import CompiledSelector, CompileError, check_selector, compile_selector
from gpu_dra.core.dra.cel.evaluate import DeviceView, EvalResult, attributes_convert, device_view, evaluate

__all__ = ["CompileError", "CompiledSelector", "DeviceView", "EvalResult", "attributes_convert", "check_selector",
           "compile_selector", "device_view", "evaluate"]

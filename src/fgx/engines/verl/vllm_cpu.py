"""vLLM plugin (entry point ``vllm.general_plugins``): on a CPU, linear layers compute from the
weights they hold, so that verl's weight sync reaches the sampler.

vLLM's CPU backend packs each linear layer's weight for its oneDNN / sgl kernels once the model is
loaded (``dispatch_cpu_unquantized_gemm``) and drops ``layer.weight`` (``remove_weight=True``); the
packed copy is what it multiplies with. verl updates the rollout's weights in place after every
optimizer step (``load_weights``), which then fails (``'Parameter' object has no attribute
'weight_loader'``) or, for layers that keep their weight, changes nothing the kernels read. With
this plugin every such layer keeps its weight and multiplies with ``torch.nn.functional.linear``
(the same kernel the torch engine uses). vLLM calls :func:`register` in each of its processes; it
does nothing unless vLLM runs on the CPU.
"""

from __future__ import annotations


def linear_from_held_weight(layer, remove_weight: bool) -> None:
    """Replacement of vLLM's ``dispatch_cpu_unquantized_gemm``: no packing, the weight stays."""
    import torch.nn.functional as F

    layer.cpu_linear = lambda x, weight, bias: F.linear(x, weight, bias)


def register() -> None:
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    import vllm.model_executor.layers.utils as layer_utils

    # linear.py and vocab_parallel_embedding.py import the dispatcher from this module when they
    # load a model, so replacing the module attribute is enough
    layer_utils.dispatch_cpu_unquantized_gemm = linear_from_held_weight

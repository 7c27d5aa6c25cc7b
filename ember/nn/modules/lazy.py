"""LazyModuleMixin: a module whose parameters and buffers stay uninitialized
(nn.parameter.UninitializedParameter/UninitializedBuffer) until its first forward, which
infers their shapes from the input, materializes them, initializes them and turns the
module into its eager class (cls_to_become)."""
from __future__ import annotations

import itertools

from ..parameter import is_lazy
from .module import _no_grad

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Put before the eager class: `class LazyLinear(LazyModuleMixin, Linear)`. The subclass
    gives initialize_parameters(*forward args), which materializes every uninitialized
    tensor and resets the parameters; a forward pre-hook calls it once. A state_dict holds
    the uninitialized tensors themselves; loading real tensors into them materializes them
    with the loaded shapes first."""

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        for name, tensor in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if tensor is not None and key in state_dict and is_lazy(tensor) and not is_lazy(state_dict[key]):
                with _no_grad():
                    tensor.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")

"""ember.backends.cuda: torch.backends.cuda's flags. matmul.allow_tf32 follows
ember.set_float32_matmul_precision as in torch ('highest' <-> False)."""
from __future__ import annotations

from . import _state


class _MatmulFlags:
    """torch.backends.cuda.matmul: assignable flags; unknown names raise AttributeError."""

    _flags = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "_values", dict.fromkeys(self._flags, True))

    @property
    def allow_tf32(self) -> bool:
        return _state["float32_matmul_precision"] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _state["float32_matmul_precision"] = "high" if value else "highest"

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            object.__setattr__(self, name, value)
        elif name in self._values:
            self._values[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()


def is_built() -> bool:
    return False


def _sdp_switch(kind):
    """The (is it enabled, enable it) pair of one scaled-dot-product-attention backend flag."""
    def enabled() -> bool:
        return _sdp[kind]

    def enable(value: bool) -> None:
        _sdp[kind] = bool(value)

    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    return enabled, enable


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")

"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize."""
from __future__ import annotations

from .. import _C
from .optimizer import Optimizer, _no_grad

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam. Per step t, with g the gradient (negated if maximize):

        p *= 1 - lr * weight_decay       (decoupled_weight_decay, i.e. AdamW)
        g += weight_decay * p            (otherwise)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2
        v_max = max(v_max, v)            (amsgrad; used instead of v below)
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    >>> p = ember.nn.Parameter(ember.zeros(1)); p.grad = ember.ones(1)
    >>> ember.optim.Adam([p], lr=0.1).step(); round(p.item(), 4)
    -0.1
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 amsgrad: bool = False, *, foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None, decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                step = self.state.get(p, {}).get("step")
                if step is not None and not isinstance(step, _C.TensorBase):
                    self.state[p]["step"] = _C.tensor(float(step), dtype=_C.float32, device="cpu")

    def step(self, closure=None):
        loss = self._evaluate(closure)
        with _no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
                amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        self._init_step_state(state)
                        state["exp_avg"] = _C.zeros_like(p)
                        state["exp_avg_sq"] = _C.zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = _C.zeros_like(p)
                    grad = -p.grad if group["maximize"] else p.grad
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    state["step"] += 1
                    step = state["step"].item()

                    if weight_decay != 0:
                        if decoupled:
                            p.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(p, alpha=weight_decay)
                    exp_avg.lerp_(grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                    step_size = lr / (1 - beta1**step)
                    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                    if amsgrad:
                        max_sq = state["max_exp_avg_sq"]
                        max_sq.copy_(_C.maximum(max_sq, exp_avg_sq))
                        denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    else:
                        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (p *= 1 - lr * weight_decay each step), 0.01 by
    default."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, *, maximize: bool = False, foreach=None, capturable: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True

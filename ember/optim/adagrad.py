"""Adagrad with learning-rate decay."""
from __future__ import annotations

from .. import _C
from .optimizer import Optimizer, _no_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad. Per step t, with g the gradient (negated if maximize):

        g += weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s += g^2;  p -= clr * g / (sqrt(s) + eps)

    The sums start at initial_accumulator_value (set for every parameter at construction,
    as torch does).
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                self._init_step_state(state)
                state["sum"] = _C.full_like(p, group["initial_accumulator_value"])

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    def step(self, closure=None):
        loss = self._evaluate(closure)
        with _no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps, weight_decay = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    state["step"] += 1
                    step = state["step"].item()
                    grad = -p.grad if group["maximize"] else p.grad
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    clr = lr / (1 + (step - 1) * lr_decay)
                    state_sum = state["sum"]
                    state_sum.addcmul_(grad, grad, value=1)
                    std = state_sum.sqrt().add_(eps)
                    p.addcdiv_(grad, std, value=-clr)
        return loss

"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
from __future__ import annotations

from .optimizer import Optimizer, _no_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent. Per step, with g the gradient (negated if maximize):

        g += weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov), else buf        (when momentum != 0)
        p -= lr * g

    >>> p = ember.nn.Parameter(ember.ones(1)); p.grad = ember.ones(1)
    >>> ember.optim.SGD([p], lr=0.5).step(); p.tolist()
    [0.5]
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        loss = self._evaluate(closure)
        with _no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                weight_decay, nesterov = group["weight_decay"], group["nesterov"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = -p.grad if group["maximize"] else p.grad
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = grad.clone().detach()
                            state["momentum_buffer"] = buf
                        else:
                            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                        grad = grad.add(buf, alpha=momentum) if nesterov else buf
                    p.add_(grad, alpha=-lr)
        return loss

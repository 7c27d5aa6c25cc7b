"""RMSprop, plain or centered, with momentum."""
from __future__ import annotations

from .. import _C
from .optimizer import Optimizer, _no_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop. Per step, with g the gradient (negated if maximize):

        g += weight_decay * p
        v = alpha * v + (1 - alpha) * g^2
        avg = sqrt(v - gbar^2) + eps, gbar = lerp(gbar, g, 1 - alpha)  (centered)
        avg = sqrt(v) + eps                                         (otherwise)
        buf = momentum * buf + g / avg;  p -= lr * buf              (momentum > 0)
        p -= lr * g / avg                                           (otherwise)
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def step(self, closure=None):
        loss = self._evaluate(closure)
        with _no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        self._init_step_state(state)
                        state["square_avg"] = _C.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = _C.zeros_like(p)
                        if centered:
                            state["grad_avg"] = _C.zeros_like(p)
                    grad = -p.grad if group["maximize"] else p.grad
                    state["step"] += 1
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.lerp_(grad, 1 - alpha)
                        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg = avg.add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).addcdiv_(grad, avg)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.addcdiv_(grad, avg, value=-lr)
        return loss

"""gradcheck / gradgradcheck: compare autograd's gradients with finite differences
(central differences, in the inputs' dtype: use float64 or complex128).

A complex tensor counts as its real and imaginary parts, as torch's gradcheck does: an
input's part is perturbed by eps and eps*1j, an output's parts are two real outputs,
and autograd's gradient of a real L, dL/dx + i dL/dy (torch's convention), gives the
rows of both parts; grad_output 1j at element m makes L the imaginary part of that
element."""
from __future__ import annotations

from .. import _C
from .grad_mode import no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _tuple(x):
    return (x,) if isinstance(x, _C.TensorBase) else tuple(x)


def _diff_outputs(out):
    return [o for o in _tuple(out) if isinstance(o, _C.TensorBase) and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _width(t):
    """How many real numbers t holds: a complex element counts twice."""
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _parts(t):
    """t's elements as a float64 vector; a complex t's real parts, then its imaginary parts."""
    from .. import cat

    flat = t.detach().reshape(-1)
    if flat.dtype.is_complex:
        return cat([flat.real, flat.imag]).to(_C.float64)
    return flat.to(_C.float64)


def _unravel(i, shape):
    idx = []
    for s in reversed(shape):
        idx.append(i % s)
        i //= s
    return tuple(reversed(idx))


def _numerical(func, inputs, targets, outputs, eps):
    """jac[k][j] is a (numel of input j, numel of output k) float64 matrix."""
    from .. import zeros

    jac = [[zeros(_width(t), _width(o), dtype=_C.float64) for t in targets] for o in outputs]
    for j, t in enumerate(targets):
        steps = [eps, eps * 1j] if t.dtype.is_complex else [eps]
        for i in range(t.numel()):
            idx = _unravel(i, t.shape)
            orig = t[idx].item()

            def at(value):
                with no_grad():  # the write only; func runs in the caller's grad mode
                    t[idx] = value
                return [_parts(o).clone() for o in _diff_outputs(func(*inputs))]

            for part, step in enumerate(steps):
                plus, minus = at(orig + step), at(orig - step)
                at(orig)
                for k in range(len(outputs)):
                    jac[k][j][i + part * t.numel()] = (plus[k] - minus[k]) / (2 * eps)
    return jac


def _analytical(outputs, targets):
    from .. import zeros, zeros_like
    from . import grad

    jac = [[zeros(_width(t), _width(o), dtype=_C.float64) for t in targets] for o in outputs]
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for m in range(_width(o)):
            g = zeros_like(o).reshape(-1)
            g[m % o.numel()] = 1 if m < o.numel() else 1j  # L = the real, then the imaginary part
            grads = grad(o, targets, g.reshape(o.shape), retain_graph=True, allow_unused=True)
            for j, gj in enumerate(grads):
                if gj is not None:
                    if gj.shape != targets[j].shape:
                        raise GradcheckError(f"Gradient has incorrect size: {tuple(gj.shape)} for an input "
                                             f"of size {tuple(targets[j].shape)}")
                    jac[k][j][:, m] = _parts(gj)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """True if the gradients autograd computes for func at inputs match central finite
    differences; else raises GradcheckError (or returns False)."""
    inputs = _tuple(inputs)
    targets = [t for t in inputs if isinstance(t, _C.TensorBase) and t.requires_grad]
    if not targets:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    outputs = _diff_outputs(func(*inputs))
    checks = []  # (jacobians, what a mismatch is called); first: the finite differences write into the inputs
    if check_backward_ad:
        checks.append((_analytical(outputs, targets), "Jacobian mismatch"))
    if check_forward_ad:
        checks.append((_forward(func, inputs, targets, outputs), "Jacobian computed with forward mode mismatch"))
    numerical = _numerical(func, inputs, targets, outputs, eps)
    for analytical, what in checks:
        for k in range(len(outputs)):
            for j in range(len(targets)):
                a, n = analytical[k][j], numerical[k][j]
                if not ((a - n).abs() <= atol + rtol * n.abs()).all():
                    if raise_exception:
                        raise GradcheckError(f"{what} for output {k} with respect to input {j},\n"
                                             f"numerical:{n}\nanalytical:{a}\n")
                    return False
    return True


def _forward(func, inputs, targets, outputs):
    """The Jacobians by forward-mode AD: one jvp per element of each target, laid out as
    _analytical's (input elements x output elements)."""
    from .. import zeros, zeros_like
    from . import forward_ad as fwAD

    jac = [[zeros(t.numel(), o.numel(), dtype=_C.float64) for t in targets] for o in outputs]
    for j, t in enumerate(targets):
        for i in range(t.numel()):
            tangent = zeros_like(t)
            tangent.view(-1)[i] = 1
            with fwAD.dual_level():
                args = [fwAD.make_dual(x.detach(), tangent if x is t else zeros_like(x))
                        if any(x is y for y in targets) else x for x in inputs]
                outs = _diff_outputs(func(*args))
                for k, o in enumerate(outs):
                    d = fwAD.unpack_dual(o).tangent
                    if d is not None:
                        jac[k][j][i] = d.to(_C.float64).reshape(-1)
    return jac


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the gradients themselves (second derivatives), through create_graph."""
    from .. import randn_like
    from . import grad

    inputs = _tuple(inputs)
    outputs = _diff_outputs(func(*inputs))
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outputs)
    else:
        grad_outputs = _tuple(grad_outputs)
    n_in = len(inputs)
    targets = [t for t in inputs if isinstance(t, _C.TensorBase) and t.requires_grad]

    def first_derivatives(*args):
        ins, gouts = args[:n_in], args[n_in:]
        outs = _diff_outputs(func(*ins))
        tgts = [t for t in ins if isinstance(t, _C.TensorBase) and t.requires_grad]
        gs = grad(outs, tgts, gouts, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    del targets
    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

"""Forward-mode AD is not implemented in ember; the module exists so that imports of
ember.autograd.forward_ad succeed and fail clearly at use."""


def dual_level():
    raise NotImplementedError("ember does not implement forward-mode automatic differentiation")


def make_dual(tensor, tangent, *, level=None):
    raise NotImplementedError("ember does not implement forward-mode automatic differentiation")


def unpack_dual(tensor, *, level=None):
    raise NotImplementedError("ember does not implement forward-mode automatic differentiation")

"""ember.autograd.graph: the Node type of grad_fn objects."""
from .. import _C

Node = _C._Node

"""How ember's tensors, Parameters and storages cross process boundaries through
multiprocessing (Queue, Pipe, Process arguments under spawn/forkserver): registered with
multiprocessing.reduction.ForkingPickler, so only those channels share; pickle.dumps and
ember.save still copy the bytes.

A storage is moved into shared memory on send (share_memory_(), in place, as torch does)
and sent as a duplicate of its memory file's descriptor (multiprocessing.reduction.DupFd).
The receiver maps it with UntypedStorage._new_shared_fd_cpu, which keeps one storage per
memory file and process (Note [One storage per shared memory file] in
csrc/core/storage.cpp): a storage sent twice, or sent back, is the same storage there, so
views of it alias as they did in the sender. A tensor travels as its storage plus dtype,
offset, sizes, strides and requires_grad."""
import os
from multiprocessing import reduction

from .. import _C
from .._tensor import Tensor, _rebuild_tensor
from ..storage import STORAGE_CLASSES, TypedStorage, UntypedStorage

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
             "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
             "the tensor before serializing (e.g., putting it on the queue).")


def rebuild_storage_fd(cls, df, nbytes):
    fd = df.detach()
    try:
        return cls._new_shared_fd_cpu(fd, nbytes)  # maps a dup of fd: ours is closed here
    finally:
        os.close(fd)


def rebuild_storage_empty(cls):
    return cls()


def reduce_storage(storage):
    if storage.nbytes() == 0:  # nothing to map, as in torch
        return (rebuild_storage_empty, (type(storage),))
    fd, nbytes = storage._share_fd_cpu_()
    return (rebuild_storage_fd, (type(storage), reduction.DupFd(fd), nbytes))


def rebuild_typed_storage(untyped, dtype):
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


def reduce_typed_storage(storage):
    return (rebuild_typed_storage, (storage.untyped(), storage.dtype))


def rebuild_tensor(cls, storage, dtype, offset, size, stride, requires_grad):
    t = _rebuild_tensor(storage, offset, size, stride, dtype)
    if cls is not Tensor:  # a Parameter stays one
        return cls(t, requires_grad)
    return t.requires_grad_(requires_grad)


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NON_LEAF)
    return (rebuild_tensor, (type(tensor), tensor.untyped_storage(), tensor.dtype, tensor.storage_offset(),
                             tuple(tensor.size()), tuple(tensor.stride()), tensor.requires_grad))


def init_reductions():
    """Registers the reductions above with multiprocessing's ForkingPickler (done on import)."""
    from ..nn.parameter import Parameter

    reduction.register(UntypedStorage, reduce_storage)
    reduction.register(TypedStorage, reduce_typed_storage)
    for cls in STORAGE_CLASSES.values():
        reduction.register(cls, reduce_typed_storage)
    for cls in (Tensor, Parameter):
        reduction.register(cls, reduce_tensor)

"""DistributedDataParallel: one model replica per process, gradients averaged across the
processes during backward, as torch.nn.parallel.DistributedDataParallel.

How it works (DESIGN.md, "Many processes"): the parameters are split into buckets of
about bucket_cap_mb, last parameters first (backward produces their gradients first).
Each parameter's post-accumulate-grad hook copies its gradient into its bucket's flat
buffer; a bucket whose gradients are all in is divided by the world size and all-reduced
with async_op=True at once, in bucket order, so communication runs while backward
computes the earlier layers. The hook that completes the last bucket waits for all of
them and writes the averages back into .grad.
"""
from __future__ import annotations

import time
import weakref
from contextlib import contextmanager

import ember

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024  # a small first bucket starts communication early, as torch's
_DEFAULT_BUCKET_MB = 25


def _dist():
    from ... import distributed
    return distributed


def _tensors_in(value, found):
    """The tensors inside a forward's output (nested tuples, lists, dicts, dataclasses,
    named tuples)."""
    if isinstance(value, ember.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors_in(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors_in(v, found)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _tensors_in(getattr(value, name), found)
    return found


def _reachable_leaves(outputs):
    """The leaves whose AccumulateGrad nodes backward from outputs can reach (by id)."""
    seen = set()
    leaves = {id(t) for t in outputs if t.grad_fn is None and t.requires_grad}  # a parameter returned as is
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and type(node).__name__ == "AccumulateGrad":
            leaves.add(id(variable))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return leaves


class _Bucket:
    """Parameters of one dtype whose gradients travel in one all_reduce of `buffer`."""

    def __init__(self, params):
        self.params = params
        numel = sum(p.numel() for p in params)
        self.buffer = ember.zeros(numel, dtype=params[0].dtype, device=params[0].device)
        self.views, offset = [], 0
        for p in params:
            self.views.append(self.buffer[offset:offset + p.numel()].view(p.shape))
            offset += p.numel()
        self.pending = len(params)
        self.work = None


def _assign_buckets(params, cap_bytes):
    """Buckets over params in reverse order, per dtype: the first of each dtype closes at
    1 MiB, the others at cap_bytes (a bucket closes once it reaches its cap)."""
    open_, sizes, caps, done = {}, {}, {}, []
    for p in reversed(params):
        group = open_.setdefault(p.dtype, [])
        group.append(p)
        sizes[p.dtype] = sizes.get(p.dtype, 0) + p.numel() * p.element_size()
        if sizes[p.dtype] >= caps.get(p.dtype, _FIRST_BUCKET_BYTES):
            done.append(_Bucket(group))
            open_[p.dtype], sizes[p.dtype], caps[p.dtype] = [], 0, cap_bytes
    done.extend(_Bucket(g) for g in open_.values() if g)
    return done


class DistributedDataParallel(Module):
    """Wraps module so that, run in every process of a process group on its own share of
    the batch, backward leaves in each parameter's .grad the average over the processes
    (so the optimizers stay in step). Rank 0's parameters and buffers are copied to all
    at construction, and its buffers again before each forward (broadcast_buffers).
    `no_sync()` skips the averaging (gradients accumulate locally until the next synced
    backward). State dict keys are the module's with the prefix `module.`, as torch's.

    >>> # in each process, after ember.distributed.init_process_group("gloo", ...)
    >>> # model = DistributedDataParallel(net)
    >>> # loss_fn(model(x_share), y_share).backward()   # .grad: the average over processes
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        if device_ids is not None or output_device is not None:
            devices = {p.device for p in module.parameters()}
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        dist = _dist()
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.process_group = process_group if process_group is not None else dist.distributed_c10d._get_default_group()
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.world_size = dist.get_world_size(process_group)
        # collectives name the source by its global rank: the group's first member's
        self._authoritative_rank = 0 if process_group is None else dist.get_global_rank(process_group, 0)
        self._params = [p for p in dict.fromkeys(module.parameters()) if p.requires_grad]
        self._buffers_to_sync = list(dict.fromkeys(module.buffers()))
        if init_sync:
            with ember.no_grad():
                for t in list(dict.fromkeys(module.parameters())) + self._buffers_to_sync:
                    dist.broadcast(t.detach(), self._authoritative_rank, group=process_group)
        self._buckets = _assign_buckets(self._params, self.bucket_bytes_cap)
        self._slot = {}  # id(param) -> (bucket, index in bucket)
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._slot[id(p)] = (b, i)
        self._armed = False       # a synced forward ran: the hooks reduce its backward
        self._started = False     # a hook fired in this backward
        self._ready = set()
        self._next_launch = 0
        self._locally_used = set()
        # comm_stats: seconds spent launching all_reduces in hooks and waiting for them at
        # the end of backward (the exposed part), summed until reset, and the last wait
        # with the wall time it began (benchmarks read them: a rank that arrives early
        # also waits for the others, so the exposed communication is the last arrival's wait)
        self.comm_stats = {"launch_s": 0.0, "wait_s": 0.0, "reductions": 0, "last_wait_s": 0.0, "last_arrival": 0.0}
        # The hooks hold this module weakly: the parameters' accumulators live as long as
        # the parameters, which must not keep a dropped wrapper (and its buckets) alive.
        me = weakref.ref(self)

        def grad_ready(param):
            ddp = me()
            if ddp is not None:
                ddp._grad_ready(param)

        self._hook_handles = [p.register_post_accumulate_grad_hook(grad_ready) for p in self._params]

    def __del__(self):
        for h in getattr(self, "_hook_handles", ()):
            try:
                h.remove()
            except Exception:  # at interpreter exit the native side may be gone already
                pass

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        self._check_prior_reduction_finished()
        if self.require_forward_param_sync and self.broadcast_buffers and self._buffers_to_sync \
                and self.world_size > 1:
            self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self._prepare_for_backward(output)
        else:
            self.require_forward_param_sync = False
        return output

    def _sync_buffers(self):
        dist = _dist()
        with ember.no_grad():
            for b in self._buffers_to_sync:
                dist.broadcast(b.detach(), self._authoritative_rank, group=self.process_group)

    def _check_prior_reduction_finished(self):
        if not self._started:
            return
        missing = " ".join(str(i) for i, p in enumerate(self._params) if id(p) not in self._ready)
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. This error "
            "indicates that your module has parameters that were not used in producing loss. You can enable unused "
            "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs "
            "participate in calculating loss. \nIf you already have done the above, then the distributed data "
            "parallel module wasn't able to locate the output tensors in the return value of your module's "
            "`forward` function. Please include the loss function and the structure of the return value of "
            "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\nParameter indices "
            f"which did not receive grad for rank {_dist().get_rank(self.process_group)}: {missing}")

    def _prepare_for_backward(self, output):
        self._armed, self._started = True, False
        self._ready, self._next_launch = set(), 0
        for b in self._buckets:
            b.pending, b.work = len(b.params), None
        if self.find_unused_parameters:
            used = _reachable_leaves(_tensors_in(output, []))
            self._locally_used = {id(p) for p in self._params if id(p) in used}
            for p in self._params:
                if id(p) not in used:
                    self._mark_ready(p, None)

    # ------------------------------------------------------------------ backward
    def _grad_ready(self, param):
        if not self._armed or id(param) in self._ready:
            return
        self._started = True
        self._mark_ready(param, param.grad)

    def _mark_ready(self, param, grad):
        bucket, i = self._slot[id(param)]
        view = bucket.views[i]
        if grad is None:
            view.zero_()  # an unused parameter contributes zeros
        elif grad.data_ptr() != view.data_ptr():
            view.copy_(grad)
        self._ready.add(id(param))
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        # in bucket order on every rank, whatever order the buckets filled in
        dist = _dist()
        start = time.perf_counter()
        while self._next_launch < len(self._buckets) and self._buckets[self._next_launch].pending == 0:
            bucket = self._buckets[self._next_launch]
            bucket.buffer.div_(self.world_size)
            bucket.work = dist.all_reduce(bucket.buffer, group=self.process_group, async_op=True)
            self._next_launch += 1
        self.comm_stats["launch_s"] += time.perf_counter() - start
        if self._next_launch == len(self._buckets):
            self._finalize()

    def _finalize(self):
        dist = _dist()
        self.comm_stats["last_arrival"] = time.time()
        start = time.perf_counter()
        for bucket in self._buckets:
            bucket.work.wait()
        globally_used = None
        if self.find_unused_parameters:
            flags = ember.tensor([id(p) in self._locally_used for p in self._params], dtype=ember.int32)
            dist.all_reduce(flags, group=self.process_group)
            globally_used = flags.tolist()
        self.comm_stats["last_wait_s"] = time.perf_counter() - start
        self.comm_stats["wait_s"] += self.comm_stats["last_wait_s"]
        self.comm_stats["reductions"] += 1
        with ember.no_grad():
            for k, p in enumerate(self._params):
                if globally_used is not None and not globally_used[k]:
                    continue  # nobody used it: its .grad stays as it was, as torch's
                bucket, i = self._slot[id(p)]
                view = bucket.views[i]
                if self.gradient_as_bucket_view:
                    if p.grad is None or p.grad.data_ptr() != view.data_ptr():
                        p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)
        self._armed = self._started = False

    # ------------------------------------------------------------------ API
    @contextmanager
    def no_sync(self):
        """Within this context the gradients are not averaged: they accumulate in each
        process's .grad, and the first synced backward after it averages the sum. The
        forward must run inside the context too.

        >>> # with ddp.no_sync():
        >>> #     ddp(x1).sum().backward()   # local only
        >>> # ddp(x2).sum().backward()       # averages the accumulated gradients
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_name(self):
        return "DistributedDataParallel"

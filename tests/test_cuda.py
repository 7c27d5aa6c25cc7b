"""ember.cuda on a GPU: device queries, the caching allocator (through ember.cuda, through
the device table's entry as the core calls it, and through tensors made on 'cuda'),
copies between the host and the device compared with the CPU, and running out of memory.
Every test is marked `cuda`: tests/conftest.py skips them where ember.cuda.is_available()
is False (ember built without EMBER_CUDA=1, no driver, or no GPU)."""
import ctypes
import multiprocessing

import pytest

import ember
import ember.cuda as cuda
from cuda_entry import DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE, OK, OUT_OF_MEMORY, alloc, cuda_entry

pytestmark = pytest.mark.cuda

MiB = 1 << 20
TOO_MUCH = 10 << 40  # 10 TiB: more than any GPU has


# ---------------------------------------------------------------- device queries
def test_device_queries():
    assert cuda.is_available() and cuda.device_count() >= 1
    cuda.init()
    assert cuda.is_initialized() and 0 <= cuda.current_device() < cuda.device_count()
    name = cuda.get_device_name()
    assert isinstance(name, str) and name == cuda.get_device_name(0) == cuda.get_device_name("cuda:0")
    capability = cuda.get_device_capability(0)
    assert capability >= (9, 0)  # the build's SASS is sm_90a, its PTX compute_90
    if "H100" in name or "H200" in name:
        assert capability == (9, 0)
    props = cuda.get_device_properties(0)
    assert (props.name, (props.major, props.minor)) == (name, capability)
    assert props.total_memory > 0 and props.multi_processor_count > 0 and name in repr(props)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == props.total_memory
    assert cuda._lib._runtime_version() == 13000 and cuda._lib._driver_version() >= 13000


def test_bad_devices():
    count = cuda.device_count()
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(count)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(count)
    with pytest.raises(RuntimeError, match="Invalid device argument"):
        cuda.memory_allocated(count)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.synchronize("cpu")


def test_set_device_and_the_device_context():
    cuda.set_device(0)
    assert cuda.current_device() == 0
    for d in [0, "cuda:0", ember.device("cuda:0"), None, -1]:
        with cuda.device(d):
            assert cuda.current_device() == 0
    assert cuda.current_device() == 0
    cuda.synchronize()
    cuda.synchronize(0)
    cuda.synchronize("cuda:0")


# ---------------------------------------------------------------- the caching allocator
def test_allocator_counts_rounds_and_reuses_blocks():
    cuda.init()
    allocated, reserved = cuda.memory_allocated(), cuda.memory_reserved()
    block = cuda.caching_allocator_alloc(1000)
    assert cuda.memory_allocated() == allocated + 1024  # rounded up to 512 bytes
    assert cuda.memory_reserved() >= reserved + 1024 and cuda.memory_reserved() >= cuda.memory_allocated()
    reserved = cuda.memory_reserved()
    cuda.caching_allocator_delete(block)
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (allocated, reserved)  # cached, not freed
    again = cuda.caching_allocator_alloc(1024)
    assert again == block and cuda.memory_reserved() == reserved  # the cached block, no cudaMalloc
    cuda.caching_allocator_delete(again)
    large = cuda.caching_allocator_alloc(3 * MiB + 1)
    assert cuda.memory_allocated() == allocated + 4 * MiB  # rounded up to 2 MiB
    cuda.caching_allocator_delete(large)


def test_peaks():
    cuda.init()
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    assert cuda.max_memory_allocated() == base and cuda.max_memory_reserved() == cuda.memory_reserved()
    block = cuda.caching_allocator_alloc(8 * MiB)
    cuda.caching_allocator_delete(block)
    assert cuda.memory_allocated() == base and cuda.max_memory_allocated() == base + 8 * MiB
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == base + 8 * MiB and stats["allocated_bytes.all.current"] == base
    cuda.reset_peak_memory_stats(0)
    assert cuda.max_memory_allocated(0) == base


def test_empty_cache_returns_cached_blocks():
    cuda.init()
    block = cuda.caching_allocator_alloc(64 * MiB)
    cuda.caching_allocator_delete(block)
    reserved = cuda.memory_reserved()
    free_before = cuda.mem_get_info()[0]
    cuda.empty_cache()
    assert cuda.memory_reserved() <= reserved - 64 * MiB
    assert cuda.mem_get_info()[0] >= free_before + 64 * MiB


def test_out_of_memory_is_an_error_and_the_process_goes_on():
    cuda.init()
    allocated = cuda.memory_allocated()
    with pytest.raises(RuntimeError, match=r"^CUDA out of memory\. Tried to allocate 10240\.00 GiB\. GPU 0 has a "
                                           r"total capacity of .* of which .* is free\."):
        cuda.caching_allocator_alloc(TOO_MUCH)
    assert cuda.memory_allocated() == allocated
    block = cuda.caching_allocator_alloc(MiB)
    cuda.caching_allocator_delete(block)


# ---------------------------------------------------------------- the device table's entry
def test_entry_allocates_and_copies():
    cuda.init()
    entry = cuda_entry()
    count, current = ctypes.c_int(), ctypes.c_int()
    assert entry.device_count(count) == OK and count.value == cuda.device_count()
    assert entry.current_device(current) == OK and current.value == cuda.current_device()
    data = bytes(range(256)) * 64
    status, a = alloc(entry, -1, len(data))
    assert status == OK and a
    status, b = alloc(entry, 0, len(data))
    assert status == OK and b and b != a
    back = ctypes.create_string_buffer(len(data))
    assert entry.copy_bytes(0, a, data, len(data), HOST_TO_DEVICE) == OK
    assert entry.copy_bytes(0, b, a, len(data), DEVICE_TO_DEVICE) == OK
    assert entry.copy_bytes(-1, back, b, len(data), DEVICE_TO_HOST) == OK
    assert back.raw == data
    assert entry.copy_bytes(0, back, b, 0, DEVICE_TO_HOST) == OK  # nothing to copy
    assert entry.copy_bytes(0, back, b, 1, 7) != OK and b"copy kind" in entry.error_message()
    assert entry.synchronize(0) == OK and entry.synchronize(-1) == OK
    entry.free(0, a, len(data))
    entry.free(-1, b, len(data))
    status, none = alloc(entry, 0, TOO_MUCH)
    assert (status, none) == (OUT_OF_MEMORY, None) and entry.error_message().startswith(b"CUDA out of memory.")
    status, _ = alloc(entry, cuda.device_count(), 16)
    assert status != OK and b"invalid device ordinal" in entry.error_message()


# ---------------------------------------------------------------- tensors on 'cuda' (the core's device dimension)
DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64, ember.int32, ember.uint8,
          ember.bool]


def test_empty_on_cuda_allocates_through_the_allocator():
    cuda.init()
    before = cuda.memory_allocated()
    x = ember.empty(1000, device="cuda")
    assert x.device == ember.device("cuda", 0) and x.is_cuda and x.get_device() == 0
    assert cuda.memory_allocated() >= before + 4000
    del x
    assert cuda.memory_allocated() == before


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_through_the_gpu(dtype):
    values = [[0, 1, 2, 3], [4, 5, 6, 7], [1, 0, 1, 0]]
    cpu = ember.tensor(values, dtype=dtype)
    assert cpu.cuda().cpu().tolist() == cpu.tolist()
    assert ember.tensor(values, dtype=dtype, device="cuda").cpu().tolist() == cpu.tolist()
    on_gpu = cpu.to("cuda:0")
    assert (on_gpu.device.type, on_gpu.dtype, on_gpu.shape) == ("cuda", dtype, cpu.shape)
    assert on_gpu.to("cpu").tolist() == cpu.tolist()


def test_copy_between_devices():
    src = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    dst = ember.empty(3, 4, device="cuda")
    dst.copy_(src)
    back = ember.empty(3, 4)
    back.copy_(dst)
    assert back.tolist() == src.tolist()
    assert src.t().cuda().cpu().tolist() == src.t().tolist()  # a non-contiguous source


def test_tensors_on_two_devices_do_not_mix():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.ones(2) + ember.empty(2, device="cuda")


def test_out_of_memory_through_a_tensor():
    cuda.init()
    allocated = cuda.memory_allocated()
    with pytest.raises(RuntimeError, match="CUDA out of memory"):
        ember.empty(TOO_MUCH // 4, device="cuda")
    assert cuda.memory_allocated() == allocated
    assert ember.tensor([1.0, 2.0], device="cuda").cpu().tolist() == [1.0, 2.0]


def _in_forked_child(queue):
    outcomes = []
    for call in [ember.cuda.init, lambda: ember.empty(2, device="cuda")]:
        try:
            call()
            outcomes.append("no error")
        except RuntimeError as exc:
            outcomes.append(str(exc))
    queue.put(outcomes)


def test_a_forked_child_cannot_use_cuda():
    cuda.init()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_forked_child, args=(queue,))
    child.start()
    outcomes = queue.get(timeout=60)
    child.join(timeout=60)
    assert all("Cannot re-initialize CUDA in forked subprocess" in o for o in outcomes), outcomes

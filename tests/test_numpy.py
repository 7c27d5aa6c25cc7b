"""numpy interop: .numpy()/numpy.asarray share memory both ways, strides of non-contiguous
tensors, from_numpy (sharing, lifetime, errors), ember.tensor(ndarray) copies, and resizing a
storage numpy still uses. Against torch."""
import gc

import pytest

import ember
from helpers import DTYPE_NAMES, check, make_sample as make, sample_values, sample_view, torch

np = pytest.importorskip("numpy")

NUMPY_NAMES = [n for n in DTYPE_NAMES if n != "bfloat16"]
LAYOUTS = ["contiguous", "transposed", "sliced", "empty", "scalar", "expanded"]


def as_array(x):
    """A numpy array of a result, or an exception's type, for comparing ember and torch."""
    try:
        a = np.asarray(x)
    except Exception as exc:  # noqa: BLE001
        return type(exc)
    return a


def same_array(a, b):
    assert type(a) is type(b) or (isinstance(a, type) and a is b)
    if isinstance(a, type):
        return
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.size:  # strides of an empty array carry no meaning
        assert a.strides == b.strides
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- tensor -> numpy
@pytest.mark.parametrize("name", NUMPY_NAMES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_asarray_every_dtype_and_layout(name, layout):
    e = as_array(make(ember, name, layout))
    t = as_array(make(torch, name, layout))
    same_array(e, t)
    e2 = make(ember, name, layout).numpy()
    same_array(e2, make(torch, name, layout).numpy())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_bfloat16_to_numpy_raises(layout):
    check(lambda lib: np.asarray(make(lib, "bfloat16", layout)))
    check(lambda lib: make(lib, "bfloat16", layout).numpy())


@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_numpy_shares_memory_both_ways(name):
    x = make(ember, name, "contiguous")
    a = x.numpy()
    assert a.ctypes.data == x.data_ptr()
    one = True if name == "bool" else 1
    a[0, 0] = one
    assert x[0, 0].item() == one
    x[2, 3] = 0
    assert a[2, 3] == 0
    b = np.asarray(x)
    b[1, 1] = one
    assert x[1, 1].item() == one and a[1, 1] == one


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_numpy_of_views_shares(layout):
    base = ember.tensor(sample_values("float32"))
    view = sample_view(base, layout)
    a = view.numpy()
    assert a.ctypes.data == view.data_ptr()
    assert a.strides == tuple(s * 4 for s in view.stride())
    a[0, 1] = 42
    assert view[0, 1].item() == 42
    assert 42 in base.view(-1).tolist()


def test_numpy_of_view_keeps_storage_alive():
    x = ember.arange(6.0).view(2, 3)
    a = x.t().numpy()
    del x
    gc.collect()
    junk = [ember.full((6,), 7.0) for _ in range(10)]
    assert a.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    del junk


def test_numpy_scalar_and_empty():
    a = ember.tensor(3.5).numpy()
    assert a.shape == () and a.dtype == np.float32 and a == 3.5
    b = ember.zeros(0, 3, dtype=ember.int16).numpy()
    assert b.shape == (0, 3) and b.dtype == np.int16
    check(lambda lib: lib.tensor(2).numpy().tolist())


def test_float16_round_trip():
    vals = [0.0, -0.0, 1.0009765625, 65504.0, -65504.0, 6e-8, float("inf"), float("-inf"), 0.333]
    x = ember.tensor(vals, dtype=ember.float16)
    a = x.numpy()
    assert a.dtype == np.float16
    np.testing.assert_array_equal(a, torch.tensor(vals, dtype=torch.float16).numpy())
    y = ember.from_numpy(a.copy())
    assert y.dtype is ember.float16 and y.tolist() == x.tolist()
    nan = ember.from_numpy(np.array([np.nan], dtype=np.float16))
    assert nan.dtype is ember.float16 and np.isnan(nan.tolist()[0])


def test_array_dtype_argument():
    a = np.asarray(ember.tensor([1, 2]), dtype=np.float64)
    assert a.dtype == np.float64 and a.tolist() == [1.0, 2.0]
    b = np.array(ember.tensor([1.5, 2.5]))
    assert b.dtype == np.float32 and b.tolist() == [1.5, 2.5]


def test_numpy_array_copy_is_independent():
    x = ember.tensor([1.0, 2.0])
    b = np.array(x, copy=True)
    b[0] = 9
    assert x.tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- numpy -> tensor (from_numpy)
@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_from_numpy_every_dtype(name):
    arr = np.array(sample_values(name), dtype=name)
    check(lambda lib: lib.from_numpy(arr.copy()), strides=True)
    check(lambda lib: lib.from_numpy(arr.copy().T), strides=True)
    check(lambda lib: lib.from_numpy(arr[1:, ::2].copy()), strides=True)
    check(lambda lib: lib.from_numpy(arr[1:, ::2]), strides=True)
    check(lambda lib: lib.from_numpy(arr[:0]), strides=True)
    check(lambda lib: lib.from_numpy(np.array(arr[1, 2])), strides=True)


@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_from_numpy_shares_memory(name):
    arr = np.array(sample_values(name), dtype=name)
    t = ember.from_numpy(arr)
    assert t.data_ptr() == arr.ctypes.data
    one = True if name == "bool" else 1
    arr[0, 0] = one
    assert t[0, 0].item() == one
    t[2, 3] = 0
    assert arr[2, 3] == 0


def test_from_numpy_view_offsets():
    arr = np.arange(12, dtype=np.int8).reshape(3, 4)[:, 1::2]
    t = ember.from_numpy(arr)
    assert t.stride() == (4, 2) and t.tolist() == [[1, 3], [5, 7], [9, 11]]
    assert t.data_ptr() == arr.ctypes.data
    t[0, 0] = 100
    assert arr[0, 0] == 100


def test_from_numpy_keeps_array_alive():
    arr = np.arange(1000, dtype=np.float64)
    t = ember.from_numpy(arr)
    del arr
    gc.collect()
    junk = [np.full(1000, 7.0) for _ in range(20)]
    assert t.tolist() == [float(i) for i in range(1000)]
    t[0] = 5
    assert t[0].item() == 5
    del junk
    u = ember.from_numpy(np.arange(4, dtype=np.int32)[1:])
    gc.collect()
    assert u.tolist() == [1, 2, 3]
    s = ember.from_numpy(np.arange(4, dtype=np.int16)).untyped_storage()
    gc.collect()
    assert s.tolist() == [0, 0, 1, 0, 2, 0, 3, 0]


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_from_numpy_broadcast_and_readonly():
    check(lambda lib: lib.from_numpy(np.broadcast_to(np.arange(3), (2, 3))), strides=True)
    ro = np.ones((2, 3), dtype=np.int32)
    ro.setflags(write=False)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib: lib.from_numpy(ro))


@pytest.mark.parametrize("arr", [np.arange(5)[::-1], np.arange(6).reshape(2, 3)[:, ::-1],
                                 np.arange(6.0).reshape(2, 3)[::-1]], ids=["1d", "2d_cols", "2d_rows"])
def test_from_numpy_negative_strides(arr):
    check(lambda lib: lib.from_numpy(arr))
    with pytest.raises(ValueError):
        ember.from_numpy(arr)


@pytest.mark.parametrize("np_dtype", ["uint16", "uint32", "uint64", "float128"])
def test_from_numpy_unsupported_dtypes(np_dtype):
    if not hasattr(np, np_dtype):
        pytest.skip(f"numpy has no {np_dtype}")
    with pytest.raises(TypeError):
        ember.from_numpy(np.zeros(3, dtype=np_dtype))


def test_from_numpy_errors():
    check(lambda lib: lib.from_numpy(np.zeros(3, dtype=object)))
    check(lambda lib: lib.from_numpy([1, 2]))
    check(lambda lib: lib.from_numpy(3.0))


def test_from_numpy_non_native_byte_order():
    check(lambda lib: lib.from_numpy(np.zeros(3, dtype=">f4")))


# ---------------------------------------------------------------- ember.tensor(ndarray)
@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_tensor_from_ndarray_copies(name):
    arr = np.array(sample_values(name), dtype=name)
    check(lambda lib: lib.tensor(arr), strides=True)
    check(lambda lib: lib.tensor(arr.T))
    check(lambda lib: lib.tensor(arr[:, ::-2]))
    t = ember.tensor(arr)
    assert t.data_ptr() != arr.ctypes.data
    arr[0, 0] = arr[1, 1]
    assert t.tolist() == sample_values(name)


def test_tensor_from_ndarray_keeps_strides():
    # torch.tensor(ndarray) copies the array as it is laid out
    check(lambda lib: lib.tensor(np.arange(6.0).reshape(2, 3).T).stride())
    check(lambda lib: lib.tensor(np.arange(6).reshape(2, 3)[:, ::-2]).stride())


def test_tensor_from_ndarray_zero_dim_and_empty():
    check(lambda lib: lib.tensor(np.array(3)))
    check(lambda lib: lib.tensor(np.array(2.5, dtype=np.float16)))
    check(lambda lib: lib.tensor(np.zeros((0, 2), np.int16)))
    check(lambda lib: lib.tensor(np.zeros((2, 0, 3), np.bool_)))
    check(lambda lib: lib.from_numpy(np.array(7, dtype=np.int8)))
    check(lambda lib: lib.from_numpy(np.zeros((0, 4), np.float64)))


def test_tensor_from_ndarray_with_dtype():
    check(lambda lib: lib.tensor(np.arange(4), dtype=lib.float16))
    check(lambda lib: lib.tensor(np.array([1.7, -1.7]), dtype=lib.int32))
    check(lambda lib: lib.as_tensor(np.arange(4), dtype=lib.float32))


def test_tensor_from_numpy_scalars():
    check(lambda lib: lib.tensor(np.float64(2.5)))
    check(lambda lib: lib.tensor(np.float32(2.5)))
    check(lambda lib: lib.tensor(np.int16(3)))
    check(lambda lib: lib.tensor(np.bool_(True)))


@pytest.mark.parametrize("case", ["float32_int64", "int64", "float16", "int16", "float64"])
def test_tensor_from_list_of_numpy_scalars(case):
    data = {"float32_int64": [np.float32(1.5), np.int64(2)], "int64": [np.int64(1), np.int64(2)],
            "float16": [np.float16(1.5)], "int16": [np.int16(1), 2], "float64": [np.float64(0.1)]}[case]
    check(lambda lib: lib.tensor(data))


def test_tensor_from_list_of_ndarrays():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib: lib.tensor([np.array([1, 2]), np.array([3, 4])]))


# ---------------------------------------------------------------- numpy at the edges
def edge_arrays():
    """Arrays of every kind torch takes as data: dtypes ember has and lacks, layouts, 0-d."""
    base = np.arange(12).reshape(3, 4)
    return {
        **{f"{n}_2d": base.astype(n) for n in NUMPY_NAMES},
        "int32_2d": np.arange(6, dtype=np.int32).reshape(2, 3),  # the case
        "transposed": base.astype(np.float32).T, "stepped": base.astype(np.int8)[::2, ::3],
        "fortran": np.asfortranarray(base.astype(np.float64)), "empty": np.zeros((0, 3), np.float32),
        "zero_dim_float": np.array(2.5), "readonly": np.arange(3.0).copy(),
        "uint16": np.arange(4, dtype=np.uint16), "uint32": np.arange(4, dtype=np.uint32),
        "uint64": np.arange(4, dtype=np.uint64),
    }


EDGE = edge_arrays()
EDGE["readonly"].setflags(write=False)


@pytest.mark.parametrize("ctor", ["FloatTensor", "LongTensor", "DoubleTensor", "ByteTensor", "Tensor"])
@pytest.mark.parametrize("case", sorted(EDGE))
def test_legacy_constructor_takes_arrays(ctor, case):
    check(lambda lib: getattr(lib, ctor)(EDGE[case]), strides=EDGE[case].size > 0)  # empty: no meaning


@pytest.mark.parametrize("ctor", ["FloatTensor", "Tensor", "LongTensor"])
@pytest.mark.parametrize("case", ["int", "zero_dim_int", "float", "bool", "object", "big_endian"])
def test_legacy_constructor_numpy_scalars_and_refusals(ctor, case):
    # numpy integers (and 0-d integer arrays) are sizes; other numpy scalars are no data
    value = {"int": np.int64(3), "zero_dim_int": np.array(2), "float": np.float32(2.5), "bool": np.bool_(True),
             "object": np.array([1, 2], dtype=object), "big_endian": np.arange(3, dtype=">f4")}[case]
    t = check(lambda lib: getattr(lib, ctor)(value).shape)
    if case == "int":
        assert t == (3,)


@pytest.mark.parametrize("ctor", ["FloatTensor", "Tensor", "DoubleTensor", "LongTensor"])
@pytest.mark.parametrize("np_dtype", ["float32", "float64", "int64"])
def test_legacy_constructor_shares_when_the_dtype_matches(ctor, np_dtype):
    for lib in (torch, ember):
        a = np.arange(4).astype(np_dtype)
        t = getattr(lib, ctor)(a)
        a[0] = 9
        shares = float(t[0]) == 9
        if lib is torch:
            expected = shares
    assert shares == expected


@pytest.mark.parametrize("fn", ["tensor", "as_tensor", "new_tensor"])
@pytest.mark.parametrize("case", ["uint16", "uint32", "uint64", "complex", "object"])
def test_foreign_array_dtypes_convert_to_a_requested_dtype(fn, case):
    value = {"uint16": np.arange(4, dtype=np.uint16), "uint32": np.arange(4, dtype=np.uint32),
             "uint64": np.arange(4, dtype=np.uint64), "complex": np.arange(4, dtype=np.complex64).real.copy(),
             "object": np.array([1, 2], dtype=object)}[case]

    def make_it(lib):
        if fn == "new_tensor":
            return lib.ones(1, dtype=lib.float64).new_tensor(value)
        return getattr(lib, fn)(value, dtype=lib.float32)
    check(make_it)
    if case != "object":  # ember has no uint16..uint64: without a dtype it refuses them
        assert ember.tensor(value, dtype=ember.bfloat16).dtype == ember.bfloat16


@pytest.mark.parametrize("case", ["transposed", "bool_2d", "float64_2d", "empty", "zero_dim_float"])
@pytest.mark.parametrize("op", ["add", "mul", "pow", "rsub", "sin"])
def test_numpy_arrays_in_tensor_expressions(case, op):
    import warnings
    arr = EDGE[case]

    def run(lib):
        t = lib.ones(arr.shape, dtype=lib.float32) if arr.ndim else lib.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's deprecation of __array_wrap__'s old signature
            return {"add": lambda: t + arr, "mul": lambda: t * arr, "pow": lambda: t ** arr,
                    "rsub": lambda: arr - t, "sin": lambda: np.sin(t)}[op]()
    got = check(run)  # None where torch raises (arr - t: numpy's Concatenation TypeError)
    assert isinstance(got, ember.Tensor) or (got is None and op == "rsub")


@pytest.mark.filterwarnings("ignore:__array_wrap__ must accept")  # torch's own __array_wrap__ (numpy 2)
def test_ufunc_on_tensors_gives_a_tensor():
    got = check(lambda lib: np.equal(lib.ones(2), np.ones(2)))  # bool results come back as uint8
    assert isinstance(got, ember.Tensor) and got.dtype == ember.uint8


# ---------------------------------------------------------------- resizing shared storage
def test_resize_storage_of_from_numpy_raises():
    check(lambda lib: lib.from_numpy(np.arange(4, dtype=np.float32)).untyped_storage().resize_(100))
    t = ember.from_numpy(np.arange(4, dtype=np.float32))
    with pytest.raises(RuntimeError):
        t.untyped_storage().resize_(0)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_resize_storage_exported_to_numpy_raises():
    # the array still points at the storage's memory: resizing it would free that memory
    def fn(lib):
        t = lib.arange(4.0)
        a = t.numpy()
        t.untyped_storage().resize_(100)
        return a
    check(fn)


def test_resize_storage_exported_by_asarray_raises():
    def fn(lib):
        t = lib.arange(4.0)
        a = np.asarray(t)
        t.untyped_storage().resize_(0)
        return a
    check(fn)


def test_set_on_from_numpy_tensor_keeps_array():
    arr = np.arange(4, dtype=np.float32)
    t = ember.from_numpy(arr)
    t.set_(ember.zeros(2))
    assert arr.tolist() == [0.0, 1.0, 2.0, 3.0] and t.tolist() == [0.0, 0.0]


NUMPY_SCALAR_KEYS = {
    **{n: getattr(np, n)(1) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    "negative_int16": np.int16(-1), "float32": np.float32(1), "float64": np.float64(1), "bool": np.bool_(True),
    "pair": (np.int8(1), np.uint8(2)), "after_slice": (slice(None), np.int32(-1)),
}


@pytest.mark.parametrize("case", sorted(NUMPY_SCALAR_KEYS))
def test_numpy_scalar_as_index(case):
    # an integer numpy scalar is an int (np.uint8(1) was a mask, np.int8(1) refused);
    # a float or bool one is no index (np.float32(1) indexed as 1)
    key = NUMPY_SCALAR_KEYS[case]
    check(lambda lib: lib.arange(6).view(2, 3)[key])

    def assign(lib):
        t = lib.zeros(2, 3)
        t[key] = 7.0
        return t
    check(assign)


@pytest.mark.parametrize("make", ["list", "mul", "full", "add_"])
@pytest.mark.parametrize("np_type", ["complex64", "complex128"])
def test_numpy_complex_scalars_are_complex_not_truncated(make, np_type):
    # torch reads a numpy complex scalar as a float (numpy's __float__, which drops the
    # imaginary part with only a ComplexWarning) except inside a list; ember reads it as
    # the complex number it is everywhere, as it reads Python's complex
    value = getattr(np, np_type)(1 + 2j)
    if make == "list":
        check(lambda lib: lib.tensor([value, 2]))
    elif make == "add_":
        with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
            ember.ones(2).add_(value)
    else:
        got = ember.ones(2) * value if make == "mul" else ember.full((2,), value)
        assert got.dtype is ember.complex64 and got.tolist() == [1 + 2j, 1 + 2j]


@pytest.mark.parametrize("np_dtype", ["complex64", "complex128"])
def test_from_numpy_complex_shares_memory(np_dtype):
    a = np.array([[1 + 2j, 3], [-1j, 0.5]], dtype=np_dtype)
    t = ember.from_numpy(a[:, ::-1].copy().T)
    check(lambda lib: lib.from_numpy(a.T), strides=True)
    e = ember.from_numpy(a)
    e[1, 1] = 7j
    assert a[1, 1] == 7j and str(e.dtype) == f"ember.{np_dtype}" and t.shape == (2, 2)

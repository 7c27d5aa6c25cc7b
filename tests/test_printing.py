"""Tensor printing: ember/_tensor_str.py must reproduce torch's repr character for character.

The module is loaded from its file so that these tests run on torch tensors before the
ember package itself can be imported. Every tensor goes through ``Restricted``, which
exposes only the tensor API the module is allowed to use.
"""

import contextlib
import importlib.util
import math
import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

MODULE_PATH = pathlib.Path(__file__).resolve().parents[1] / "ember" / "_tensor_str.py"


def load_module():
    spec = importlib.util.spec_from_file_location("_ember_tensor_str_under_test", MODULE_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ts = load_module()

ALL_DTYPES = [
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
]
FLOAT_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
NAN, INF = math.nan, math.inf


class Restricted:
    """A torch tensor seen only through the API ember's printing may use."""

    def __init__(self, tensor):
        self._t = tensor

    def dim(self):
        return self._t.dim()

    @property
    def shape(self):
        return tuple(self._t.shape)

    def numel(self):
        return self._t.numel()

    @property
    def dtype(self):
        return self._t.dtype

    @property
    def requires_grad(self):
        return self._t.requires_grad

    @property
    def grad_fn(self):
        return self._t.grad_fn

    def __getitem__(self, key):
        assert type(key) is int or (type(key) is slice and key.step is None), key
        return Restricted(self._t[key])

    def tolist(self):
        return self._t.tolist()


@pytest.fixture(autouse=True)
def restore_state():
    saved_torch = torch._tensor_str.get_printoptions()
    saved_ours = ts.get_printoptions()
    saved_dtype = torch.get_default_dtype()
    yield
    torch.set_printoptions(**saved_torch)
    ts.set_printoptions(**saved_ours)
    torch.set_default_dtype(saved_dtype)


@contextlib.contextmanager
def options(**kwargs):
    """Apply the same print options to torch and to the module under test."""
    with torch._tensor_str.printoptions(**kwargs), ts.printoptions(**kwargs):
        yield


def check(t):
    expected = repr(t)
    got = ts.format_tensor(Restricted(t), torch.get_default_dtype())
    assert got == expected, f"\n--- ember\n{got}\n--- torch\n{expected}"


def sample(shape, dtype, seed=0):
    """Deterministic values suited to ``dtype``: signed where the dtype allows it."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(dtype)
    low = 0 if dtype == torch.uint8 else -100
    return torch.randint(low, 100, shape, generator=g).to(dtype)


SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (1, 1, 1, 1, 2)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dtypes_and_ranks(dtype, shape):
    check(sample(shape, dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (1, 0), (2, 0, 4), (0, 0)], ids=str)
def test_empty(dtype, shape):
    check(torch.zeros(shape, dtype=dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize(
    "values",
    [
        [1.0, 2.0, 3.0],
        [0.0, 0.0],
        [0.0],
        [-0.0],
        [-0.0, 1.0],
        [100.0, -0.0],
        [-0.0, 1.5],
        [NAN],
        [INF, -INF],
        [0.0, NAN, -INF],
        [1.0, INF],
        [1.5, NAN, 0.0],
        [NAN, 1.5e10],
        [1e10, 1.0],
        [1000.0, 1.0],
        [1001.0, 1.0],
        [1e8],
        [1e9],
        [123456789.0],
        [1.5, 2e-5],
        [1e-4, 1.0],
        [1e-5, 0.0],
        [1e-5, -0.0, INF],
        [0.1, 0.2, 0.3],
        [-1.25, 2.5, -300.125],
        [1.0 / 3, -2.0 / 3],
        [0.00011, 0.1],
        [65504.0, -65504.0],
        [1e30, -1e-30],
        [3e38, 1.0],
        [1e-40, 1.0],
        [99999.5, 0.5],
        [-5.0, 5.0, -5000.0],
    ],
    ids=str,
)
def test_float_values(dtype, values):
    t = torch.tensor(values, dtype=dtype)
    check(t)
    check(t.reshape(len(values), 1))
    check(t[0])


@pytest.mark.parametrize(
    "values",
    [[1e300, 1.0], [1e-300, 2.5], [2.0**60, 1.0], [1.0 + 2**-40, 3.0], [5e-324, 1.0]],
    ids=str,
)
def test_float64_extremes(values):
    check(torch.tensor(values, dtype=torch.float64))


@pytest.mark.parametrize(
    "t",
    [
        torch.tensor([-128, 0, 127], dtype=torch.int8),
        torch.tensor([0, 255], dtype=torch.uint8),
        torch.tensor([-(2**15), 2**15 - 1], dtype=torch.int16),
        torch.tensor([-(2**31), 7], dtype=torch.int32),
        torch.tensor([-(2**63), 2**63 - 1]),
        torch.tensor([[True], [False]]),
        torch.tensor(True),
        torch.tensor(-7),
        torch.tensor(0, dtype=torch.uint8),
    ],
    ids=str,
)
def test_integer_and_bool_values(t):
    check(t)


@pytest.mark.parametrize(
    "t",
    [
        torch.arange(2000),
        torch.arange(1001.0),
        torch.arange(1000.0),
        torch.randn(50, 50),
        torch.arange(3000.0).reshape(3, 1000),
        torch.arange(2000.0).reshape(2, 1000),
        torch.arange(10000).reshape(10, 10, 100),
        torch.arange(6000, dtype=torch.int16).reshape(2, 3, 1000),
        torch.randn(7, 7, 7, 7),
        torch.randn(6, 6, 6, 6),
        torch.zeros(2000, dtype=torch.bool),
        torch.randn(2000, dtype=torch.float64) * 1e6,
        torch.randn(1200, dtype=torch.float16),
        torch.randn(1200, dtype=torch.bfloat16),
        torch.randn(1001, 1),
        torch.randn(1, 1001),
        # The formatter only looks at the edges that are shown: no switch to sci mode.
        torch.cat([torch.ones(5), torch.full((1000,), 1e10), torch.ones(5) * 2.5]),
    ],
    ids=lambda t: f"{tuple(t.shape)}-{t.dtype}",
)
def test_summarized(t):
    check(t)


def test_non_contiguous():
    base = torch.arange(60.0).reshape(3, 4, 5) / 7
    check(base.transpose(0, 2))
    check(base[:, ::2, 1:])
    check(base.permute(1, 2, 0)[1])
    check(torch.arange(3000).reshape(1000, 3).t())


@pytest.mark.parametrize("precision", [0, 1, 2, 6, 10])
def test_precision(precision):
    with options(precision=precision):
        check(torch.tensor([1.0 / 3, 2.5, -7.0]))
        check(torch.tensor([1e-7, 1.0]))
        check(torch.tensor([1.0, 20000.0]))
        check(torch.tensor(2.0 / 3, dtype=torch.float64))


@pytest.mark.parametrize("sci_mode", [True, False])
@pytest.mark.parametrize(
    "values",
    [
        [0.0, 0.0],
        [1.0, 2.0],
        [1.0, -2.0],
        [1.5, -2.0, NAN],
        [1e-20, -2.0, NAN],
        [1.0, -2e10],
        [1e20, 0.0],
        [1e-5, -0.0],
        [1e-20, 1.0],
        [12345.678, 0.001],
    ],
    ids=str,
)
def test_sci_mode_forced(sci_mode, values):
    with options(sci_mode=sci_mode):
        check(torch.tensor(values))
        check(torch.tensor(values, dtype=torch.float64).reshape(-1, 1))


@pytest.mark.parametrize("linewidth", [1, 10, 20, 33, 40, 79, 81, 120, 200])
def test_linewidth(linewidth):
    with options(linewidth=linewidth):
        check(torch.arange(40.0) * 1.5)
        check(torch.arange(30).reshape(3, 10))
        check(torch.arange(2000.0).reshape(2, 1000))
        check(torch.zeros(30))
        check(torch.tensor([1.0, INF, NAN] * 10))


@pytest.mark.parametrize("threshold", [0, 1, 5, 20, 100, math.inf])
@pytest.mark.parametrize("edgeitems", [0, 1, 2, 3, 5])
def test_threshold_and_edgeitems(threshold, edgeitems):
    with options(threshold=threshold, edgeitems=edgeitems):
        check(torch.tensor(2.5))
        check(torch.arange(3))
        check(torch.arange(12, dtype=torch.int32))
        check(torch.arange(120.0).reshape(4, 5, 6) / 3)
        check(torch.arange(27).reshape(3, 3, 3))
        check(torch.zeros(0, 7))
        check(torch.arange(10.0, requires_grad=True).reshape(5, 2))


@pytest.mark.parametrize("profile", ["default", "short", "full"])
def test_profiles(profile):
    with options(profile=profile):
        check(torch.arange(2000.0) / 3)
        check(torch.arange(1200).reshape(40, 30))
        check(torch.tensor([1.0 / 3, 1e-6]))


def test_set_printoptions_semantics():
    calls = [
        {},
        {"precision": 2, "sci_mode": True},
        {"precision": 3},  # sci_mode goes back to None when omitted
        {"profile": "short", "linewidth": 50},
        {"profile": "bogus"},  # unknown profiles are ignored
        {"profile": "full"},
        {"profile": "default", "edgeitems": 0, "threshold": 5},
        {"threshold": 10, "sci_mode": False},
    ]
    for kwargs in calls:
        torch.set_printoptions(**kwargs)
        ts.set_printoptions(**kwargs)
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions(), kwargs


def test_defaults():
    fresh = load_module()
    assert fresh.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    assert fresh.get_printoptions() == fresh.PrintOptions().as_dict()


def test_printoptions_restores_even_on_error():
    ts.set_printoptions(precision=6, sci_mode=True)
    before = ts.get_printoptions()
    with pytest.raises(KeyError):
        with ts.printoptions(precision=1, linewidth=30):
            assert ts.get_printoptions()["precision"] == 1
            assert ts.get_printoptions()["sci_mode"] is None
            raise KeyError
    assert ts.get_printoptions() == before


def leaf(*args, **kwargs):
    return torch.tensor(*args, **kwargs).requires_grad_()


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: leaf([1.0, 2.0]),
        lambda: leaf(1.5),
        lambda: leaf([1.0, 2.0], dtype=torch.float64),
        lambda: leaf([1.0, 2.0], dtype=torch.float16),
        lambda: leaf([1.0, 2.0]) * 2,
        lambda: leaf([1.0, 2.0]).sum(),
        lambda: leaf([[1.0, 2.0]])[0],
        lambda: leaf([1.0, 2.0]).to(torch.float64),
        lambda: leaf([[1.0, 2.0]]).exp(),
        lambda: Twice.apply(leaf([1.0, 2.0])),
        lambda: torch.zeros(0, 3, requires_grad=True),
        lambda: torch.zeros(0, requires_grad=True).to(torch.float64),
        lambda: torch.arange(24.0, requires_grad=True) * 1.5,
        lambda: torch.arange(2000.0, requires_grad=True).reshape(2, 1000) + 1,
        lambda: torch.randn(3, 3, dtype=torch.float64, requires_grad=True),
    ],
)
def test_autograd_suffixes(make):
    check(make())


@pytest.mark.parametrize("linewidth", range(20, 90))
def test_suffix_wrapping(linewidth):
    with options(linewidth=linewidth):
        check(torch.tensor([5], dtype=torch.int32))
        check(leaf([5.0], dtype=torch.float64))
        check(torch.zeros(0, 3, dtype=torch.float64, requires_grad=True) * 1)
        check(leaf([1.25, 2.5, 3.75] * 4, dtype=torch.float16) * 2)
        check(torch.arange(30, dtype=torch.int8).reshape(3, 10))


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    check(torch.tensor([1.5, 2.0]))
    check(torch.tensor([1.5, 2.0], dtype=torch.float32))
    check(torch.zeros(0, dtype=torch.float32))
    check(torch.zeros(0, 2))
    check(torch.tensor(3.0, dtype=torch.float16))


def test_custom_prefix_indents_continuation_lines():
    t = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    got = ts.format_tensor(Restricted(t), torch.float32, prefix="Param(")
    assert got == "Param([[1, 2],\n       [3, 4]], dtype=torch.int32)"


def test_dtype_suffix_uses_str_of_dtype():
    class FakeDtype:
        is_floating_point = False

        def __str__(self):
            return "ember.int16"

    class FakeTensor(Restricted):
        @property
        def dtype(self):
            return FakeDtype()

    got = ts.format_tensor(FakeTensor(torch.tensor([1, 2])), torch.float32)
    assert got == "tensor([1, 2], dtype=ember.int16)"


def test_str_uses_embers_default_dtype(monkeypatch):
    class FakeEmber:
        @staticmethod
        def get_default_dtype():
            return torch.float64

    monkeypatch.setitem(sys.modules, "ember", FakeEmber)
    assert ts._str(Restricted(torch.tensor([1.5]))) == "tensor([1.5000], dtype=torch.float32)"
    assert ts._str(Restricted(torch.tensor([1.5], dtype=torch.float64))) == "tensor([1.5000])"


def test_module_does_not_import_ember(monkeypatch):
    monkeypatch.setitem(sys.modules, "ember", None)  # any `import ember` now fails
    fresh = load_module()
    assert fresh.format_tensor(Restricted(torch.tensor([1])), torch.float32) == "tensor([1])"


SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, NAN, INF, -INF, 1e-6, 1e9, 1.0, -3.0])
FLOATS = st.one_of(
    SPECIAL_FLOATS,
    st.integers(-2000, 2000).map(float),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(-1e-3, 1e-3, allow_nan=False),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)


@st.composite
def tensors(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), max_size=4)))
    dtype = draw(st.sampled_from(ALL_DTYPES))
    n = math.prod(shape)
    if dtype == torch.bool:
        values = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype.is_floating_point:
        values = draw(st.lists(FLOATS, min_size=n, max_size=n))
    else:
        info = torch.iinfo(dtype)
        values = draw(st.lists(st.integers(info.min, info.max), min_size=n, max_size=n))
    # float16/bfloat16 overflow to inf on conversion, which is a case worth printing too.
    return torch.tensor(values, dtype=dtype).reshape(shape)


PRINT_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 8),
        "threshold": st.integers(0, 200),
        "edgeitems": st.integers(0, 4),
        "linewidth": st.integers(10, 150),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=tensors(), kwargs=PRINT_OPTIONS, requires_grad=st.booleans())
def test_random_tensors_match_torch(t, kwargs, requires_grad):
    if requires_grad and t.dtype.is_floating_point:
        t = t.requires_grad_()
    with options(**kwargs):
        check(t)

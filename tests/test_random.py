"""Random numbers: reproducibility under manual_seed and Generator objects, generator state,
loose statistical checks on ~100k samples, dtype/shape defaults and errors against torch.
Values need not match torch's stream; shapes, dtypes and exception types must."""
import math

import pytest

import ember
from helpers import DTYPE_NAMES, FLOAT_NAMES, check, torch

# The declared ops this module tests (random.yaml): see test_op_coverage.py.
TESTED_OPS = {"normal", "normal_", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
    "randperm", "uniform_", "bernoulli", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
    "log_normal_", "multinomial"}

N = 100_000


@pytest.fixture(autouse=True)
def restore_rng():
    state = ember.get_rng_state()
    yield
    ember.set_rng_state(state)


def mean_std(values):
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return m, math.sqrt(var)


# every sampler, called with the default generator (gen=None) or a given one
SAMPLERS = {
    "rand": lambda gen: ember.rand(3, 4, generator=gen),
    "rand_float64": lambda gen: ember.rand(5, dtype=ember.float64, generator=gen),
    "randn": lambda gen: ember.randn(3, 4, generator=gen),
    "randn_float16": lambda gen: ember.randn(6, dtype=ember.float16, generator=gen),
    "randint_high": lambda gen: ember.randint(10, (3, 4), generator=gen),
    "randint_low_high": lambda gen: ember.randint(-5, 5, (7,), generator=gen),
    "randint_int16": lambda gen: ember.randint(0, 100, (7,), dtype=ember.int16, generator=gen),
    "randperm": lambda gen: ember.randperm(20, generator=gen),
    "normal_floats": lambda gen: ember.normal(1.0, 2.0, (3, 4), generator=gen),
    "normal_tensor_float": lambda gen: ember.normal(ember.arange(6.0), 0.5, generator=gen),
    "normal_float_tensor": lambda gen: ember.normal(2.0, ember.arange(1.0, 7.0), generator=gen),
    "normal_tensor_tensor": lambda gen: ember.normal(ember.zeros(2, 3), ember.ones(2, 3), generator=gen),
    "uniform_": lambda gen: ember.empty(3, 4).uniform_(-2, 3, generator=gen),
    "normal_": lambda gen: ember.empty(3, 4).normal_(1, 3, generator=gen),
    "uniform_float64": lambda gen: ember.empty(5, dtype=ember.float64).uniform_(generator=gen),
    "normal_bfloat16": lambda gen: ember.empty(5, dtype=ember.bfloat16).normal_(generator=gen),
}

# the *_like functions take no generator in torch: default generator only
LIKE_SAMPLERS = {
    "rand_like": lambda: ember.rand_like(ember.zeros(3, 4)),
    "randn_like": lambda: ember.randn_like(ember.zeros(3, 4, dtype=ember.float64)),
    "randint_like_high": lambda: ember.randint_like(ember.zeros(3, 4), 10),
    "randint_like_low_high": lambda: ember.randint_like(ember.zeros(3, 4, dtype=ember.int32), -3, 3),
    "rand_like_transposed": lambda: ember.rand_like(ember.zeros(3, 4).t()),
}


# ---------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproducible(name):
    fn = SAMPLERS[name]
    ember.manual_seed(1234)
    a = fn(None).tolist()
    b = fn(None).tolist()
    ember.manual_seed(1234)
    assert fn(None).tolist() == a
    assert fn(None).tolist() == b
    assert a != b, "two draws in a row gave the same values"
    ember.manual_seed(4321)
    assert fn(None).tolist() != a


@pytest.mark.parametrize("name", sorted(LIKE_SAMPLERS))
def test_manual_seed_reproducible_like(name):
    fn = LIKE_SAMPLERS[name]
    ember.manual_seed(7)
    a = fn().tolist()
    b = fn().tolist()
    ember.manual_seed(7)
    assert fn().tolist() == a and fn().tolist() == b
    assert a != b


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generator_keyword(name):
    fn = SAMPLERS[name]
    g = ember.Generator().manual_seed(99)
    a = fn(g).tolist()
    g.manual_seed(99)
    assert fn(g).tolist() == a
    # a separate generator with the same seed gives the same stream
    assert fn(ember.Generator().manual_seed(99)).tolist() == a


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generator_independent_of_default(name):
    fn = SAMPLERS[name]
    ember.manual_seed(5)
    ref_default = [fn(None).tolist() for _ in range(2)]
    g = ember.Generator().manual_seed(6)
    ref_g = fn(g).tolist()

    ember.manual_seed(5)
    g.manual_seed(6)
    first = fn(None).tolist()
    assert fn(g).tolist() == ref_g  # drawing from g ...
    second = fn(None).tolist()      # ... does not advance the default generator
    assert [first, second] == ref_default


def test_manual_seed_returns_default_generator():
    assert ember.manual_seed(3) is ember.default_generator
    assert ember.initial_seed() == 3
    g = ember.Generator()
    assert g.manual_seed(11) is g and g.initial_seed() == 11


def test_manual_seed_accepts_big_and_negative_seeds():
    check(lambda lib: lib.Generator().manual_seed(-1).initial_seed())
    check(lambda lib: lib.Generator().manual_seed(2 ** 64 - 1).initial_seed())
    check(lambda lib: lib.Generator().manual_seed(2 ** 63).initial_seed())
    ember.manual_seed(2 ** 64 - 1)
    a = ember.rand(3).tolist()
    ember.manual_seed(-1)
    assert ember.rand(3).tolist() == a


@pytest.mark.parametrize("seed", [2 ** 64, -(2 ** 63) - 1, "a", None], ids=str)
def test_manual_seed_errors(seed):
    check(lambda lib: lib.Generator().manual_seed(seed))


def test_manual_seed_float():
    check(lambda lib: lib.Generator().manual_seed(1.5).initial_seed())


def test_generator_initial_seed_default():
    check(lambda lib: lib.Generator().initial_seed())
    check(lambda lib: str(lib.Generator("cpu").device))
    check(lambda lib: lib.Generator(device="cpu").initial_seed())
    assert ember.Generator().device == ember.device("cpu")


def test_generator_seed():
    g = ember.Generator()
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64
    assert g.initial_seed() == s
    a = ember.rand(4, generator=g).tolist()
    g.manual_seed(s)
    assert ember.rand(4, generator=g).tolist() == a
    assert len({g.seed() for _ in range(3)}) > 1  # fresh seeds differ (almost surely)
    t = ember.seed()
    assert isinstance(t, int) and ember.initial_seed() == t


# ---------------------------------------------------------------- state
def test_get_set_state_round_trip():
    g = ember.Generator().manual_seed(17)
    ember.rand(10, generator=g)
    state = g.get_state()
    assert isinstance(state, ember.Tensor) and state.dtype is ember.uint8 and state.dim() == 1
    a = ember.randn(20, generator=g).tolist()
    b = ember.randint(100, (20,), generator=g).tolist()
    g.set_state(state)
    assert ember.randn(20, generator=g).tolist() == a
    assert ember.randint(100, (20,), generator=g).tolist() == b
    # the state is a copy: drawing afterwards does not change it
    before = state.tolist()
    ember.rand(5, generator=g)
    assert state.tolist() == before


def test_state_transfers_between_generators():
    g = ember.Generator().manual_seed(1)
    ember.randn(7, generator=g)
    h = ember.Generator().manual_seed(2)
    h.set_state(g.get_state())
    assert ember.rand(9, generator=h).tolist() == ember.rand(9, generator=g).tolist()
    assert h.initial_seed() == g.initial_seed()


def test_state_keeps_normal_cache():
    # a normal draw of odd length may leave a cached value: the state must carry it
    g = ember.Generator().manual_seed(3)
    ember.randn(3, generator=g)
    st = g.get_state()
    a = ember.randn(5, generator=g).tolist()
    g.set_state(st)
    assert ember.randn(5, generator=g).tolist() == a


def test_get_set_rng_state():
    ember.manual_seed(42)
    st = ember.get_rng_state()
    assert st.dtype is ember.uint8
    a = ember.rand(8).tolist()
    b = ember.randperm(8).tolist()
    ember.set_rng_state(st)
    assert ember.rand(8).tolist() == a and ember.randperm(8).tolist() == b
    assert ember.get_rng_state().tolist() == ember.default_generator.get_state().tolist()


def test_set_state_errors():
    check(lambda lib: lib.Generator().set_state(lib.zeros(3, dtype=lib.uint8)))
    check(lambda lib: lib.Generator().set_state(lib.zeros(3)))
    check(lambda lib: lib.Generator().set_state([1, 2]))
    check(lambda lib: lib.set_rng_state(lib.zeros(3)))


def test_set_state_non_contiguous_raises():
    def fn(lib):
        g = lib.Generator().manual_seed(8)
        st = g.get_state()
        doubled = lib.zeros(st.numel(), 2, dtype=lib.uint8)
        doubled[:, 0].copy_(st)
        g.set_state(doubled[:, 0])
    check(fn)


# ---------------------------------------------------------------- distributions
def test_randn_mean_std():
    ember.manual_seed(0)
    m, s = mean_std(ember.randn(N).tolist())
    assert abs(m) < 0.02 and abs(s - 1) < 0.02
    m, s = mean_std(ember.randn(N, dtype=ember.float64).tolist())
    assert abs(m) < 0.02 and abs(s - 1) < 0.02


def test_randn_tails():
    ember.manual_seed(1)
    v = ember.randn(N).tolist()
    frac_1 = sum(abs(x) < 1 for x in v) / N
    frac_2 = sum(abs(x) < 2 for x in v) / N
    assert abs(frac_1 - 0.6827) < 0.01 and abs(frac_2 - 0.9545) < 0.005
    assert all(math.isfinite(x) for x in v)


def test_rand_range_and_mean():
    ember.manual_seed(2)
    for dtype in (ember.float32, ember.float64):
        v = ember.rand(N, dtype=dtype).tolist()
        assert min(v) >= 0.0 and max(v) < 1.0
        m, s = mean_std(v)
        assert abs(m - 0.5) < 0.01 and abs(s - math.sqrt(1 / 12)) < 0.01
        buckets = [0] * 10
        for x in v:
            buckets[int(x * 10)] += 1
        assert all(abs(b - N / 10) < N / 100 for b in buckets)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_rand_low_precision_range(name):
    ember.manual_seed(3)
    v = ember.rand(20_000, dtype=getattr(ember, name)).tolist()
    assert min(v) >= 0.0 and max(v) < 1.0
    assert abs(sum(v) / len(v) - 0.5) < 0.02


def test_uniform_range_and_mean():
    ember.manual_seed(4)
    v = ember.empty(N).uniform_(-3, 5).tolist()
    assert min(v) >= -3 and max(v) < 5
    m, s = mean_std(v)
    assert abs(m - 1) < 0.05 and abs(s - 8 / math.sqrt(12)) < 0.05


def test_normal_mean_std():
    ember.manual_seed(5)
    m, s = mean_std(ember.normal(3.0, 2.0, (N,)).tolist())
    assert abs(m - 3) < 0.04 and abs(s - 2) < 0.04
    m, s = mean_std(ember.empty(N).normal_(-1, 0.5).tolist())
    assert abs(m + 1) < 0.01 and abs(s - 0.5) < 0.01


def test_normal_tensor_overloads_use_each_element():
    ember.manual_seed(6)
    mean = ember.tensor([0.0, 100.0]).expand(N // 2, 2).contiguous()
    v = ember.normal(mean, 1.0).t().tolist()
    for row, mu in zip(v, (0.0, 100.0)):
        m, s = mean_std(row)
        assert abs(m - mu) < 0.05 and abs(s - 1) < 0.05
    std = ember.tensor([1.0, 10.0]).expand(N // 2, 2).contiguous()
    v = ember.normal(5.0, std).t().tolist()
    for row, sd in zip(v, (1.0, 10.0)):
        m, s = mean_std(row)
        assert abs(m - 5) < 0.1 * sd and abs(s - sd) < 0.05 * sd
    v = ember.normal(mean, std).t().tolist()
    for row, mu, sd in zip(v, (0.0, 100.0), (1.0, 10.0)):
        m, s = mean_std(row)
        assert abs(m - mu) < 0.1 * sd and abs(s - sd) < 0.05 * sd


def test_normal_zero_std_is_mean():
    check(lambda lib: lib.normal(lib.arange(4.0), 0.0))
    check(lambda lib: lib.normal(2.0, lib.zeros(3)))
    check(lambda lib: lib.normal(1.5, 0.0, (2, 2)))
    check(lambda lib: lib.zeros(3).normal_(4, 0))
    check(lambda lib: lib.zeros(3).uniform_(1, 1))


def test_randint_range_and_all_values():
    ember.manual_seed(7)
    v = ember.randint(-3, 7, (N,)).tolist()
    assert min(v) == -3 and max(v) == 6 and set(v) == set(range(-3, 7))
    counts = [v.count(k) for k in range(-3, 7)]
    assert all(abs(c - N / 10) < N / 100 for c in counts)
    v = ember.randint(5, (1000,)).tolist()
    assert set(v) == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("name", [n for n in DTYPE_NAMES if n != "bool"])
def test_randint_dtypes_range(name):
    ember.manual_seed(8)
    x = ember.randint(0, 50, (5000,), dtype=getattr(ember, name))
    assert x.dtype is getattr(ember, name)
    v = x.tolist()
    assert min(v) == 0 and max(v) == 49 and all(float(t).is_integer() for t in v)


def test_randint_bool():
    ember.manual_seed(9)
    v = ember.randint(0, 2, (1000,), dtype=ember.bool).tolist()
    assert set(v) == {True, False}


def test_randint_large_bounds():
    ember.manual_seed(10)
    lo = 2 ** 62
    v = ember.randint(lo, lo + 5, (1000,)).tolist()
    assert set(v) == set(range(lo, lo + 5))
    v = ember.randint(-(2 ** 63), 2 ** 63 - 1, (1000,)).tolist()
    assert min(v) < -(2 ** 61) and max(v) > 2 ** 61


def test_randint_like_range():
    ember.manual_seed(11)
    v = ember.randint_like(ember.zeros(N, dtype=ember.int16), -2, 3).tolist()
    assert set(v) == {-2, -1, 0, 1, 2}
    v = ember.randint_like(ember.zeros(1000), 4).tolist()
    assert set(v) == {0.0, 1.0, 2.0, 3.0}


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 100_000])
def test_randperm_is_permutation(n):
    ember.manual_seed(12)
    v = ember.randperm(n).tolist()
    assert sorted(v) == list(range(n))
    if n >= 10:
        assert v != list(range(n))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                                  "float64"])
def test_randperm_dtypes(name):
    ember.manual_seed(13)
    x = ember.randperm(100, dtype=getattr(ember, name))
    assert x.dtype is getattr(ember, name)
    assert sorted(x.tolist()) == list(range(100))


def test_randperm_first_element_uniform():
    ember.manual_seed(14)
    counts = [0] * 4
    for _ in range(4000):
        counts[ember.randperm(4)[0].item()] += 1
    assert all(abs(c - 1000) < 150 for c in counts)


def test_fill_in_place_views():
    ember.manual_seed(15)
    x = ember.zeros(4, 6)
    x[:, ::2].uniform_(10, 11)
    v = x.tolist()
    assert all(10 <= v[i][j] < 11 for i in range(4) for j in range(0, 6, 2))
    assert all(v[i][j] == 0 for i in range(4) for j in range(1, 6, 2))
    y = ember.zeros(3, 4)
    r = y.t().normal_(100, 1)
    assert r.shape == (4, 3) and all(90 < t < 110 for t in y.view(-1).tolist())


# ---------------------------------------------------------------- dtypes, shapes, defaults vs torch
def meta(t):
    return t.shape, t.dtype, t.stride()


@pytest.mark.parametrize("expr", [
    lambda lib: meta(lib.rand(2, 3)),
    lambda lib: meta(lib.rand((2, 3))),
    lambda lib: meta(lib.rand([4])),
    lambda lib: meta(lib.rand(())),
    lambda lib: meta(lib.rand(0, 3)),
    lambda lib: meta(lib.rand(2, dtype=lib.float64)),
    lambda lib: meta(lib.rand(2, dtype=lib.float16)),
    lambda lib: meta(lib.rand(2, dtype=lib.bfloat16)),
    lambda lib: meta(lib.randn(3, 1)),
    lambda lib: meta(lib.randn(2, dtype=lib.float64)),
    lambda lib: meta(lib.randn(size=(2,))),
    lambda lib: meta(lib.randint(10, (2, 3))),
    lambda lib: meta(lib.randint(3, 10, (2,))),
    lambda lib: meta(lib.randint(3, 10, [2, 2])),
    lambda lib: meta(lib.randint(10, ())),
    lambda lib: meta(lib.randint(10, (2,), dtype=lib.float32)),
    lambda lib: meta(lib.randint(10, (2,), dtype=lib.int8)),
    lambda lib: meta(lib.randint(0, 2, (2,), dtype=lib.bool)),
    lambda lib: meta(lib.randint(low=0, high=3, size=(2,))),
    lambda lib: meta(lib.randperm(5)),
    lambda lib: meta(lib.randperm(0)),
    lambda lib: meta(lib.randperm(5, dtype=lib.float32)),
    lambda lib: meta(lib.randperm(5, dtype=lib.int16)),
    lambda lib: meta(lib.normal(0.0, 1.0, (2, 3))),
    lambda lib: meta(lib.normal(0, 1, (2,))),
    lambda lib: meta(lib.normal(0.0, 1.0, (2,), dtype=lib.float64)),
    lambda lib: meta(lib.normal(0.0, 1.0, size=(2,))),
    lambda lib: meta(lib.normal(lib.zeros(2, 3))),
    lambda lib: meta(lib.normal(lib.zeros(2, 3, dtype=lib.float64), 1.0)),
    lambda lib: meta(lib.normal(lib.zeros(2, 3).t(), 1.0)),
    lambda lib: meta(lib.normal(1.0, lib.ones(2, dtype=lib.float64))),
    lambda lib: meta(lib.normal(lib.zeros(2, 3), lib.ones(3))),
    lambda lib: meta(lib.normal(lib.zeros(2, 1), lib.ones(3))),
    lambda lib: meta(lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2))),
    lambda lib: meta(lib.normal(lib.zeros(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16))),
    lambda lib: meta(lib.rand_like(lib.zeros(2, 3, dtype=lib.float64))),
    lambda lib: meta(lib.rand_like(lib.zeros(2, 3).t())),
    lambda lib: meta(lib.randn_like(lib.zeros(2, 3).t())),
    lambda lib: meta(lib.randn_like(lib.zeros(2, 3), dtype=lib.float16)),
    lambda lib: meta(lib.randint_like(lib.zeros(2, 3), 5)),
    lambda lib: meta(lib.randint_like(lib.zeros(2, 3, dtype=lib.int16), 5)),
    lambda lib: meta(lib.randint_like(lib.zeros(2, 3).t(), 3, 5)),
    lambda lib: meta(lib.randint_like(lib.zeros(2, 3), 5, dtype=lib.int64)),
    lambda lib: meta(lib.zeros(2, 3).t().uniform_()),
    lambda lib: meta(lib.zeros(2, 3, dtype=lib.float16).normal_()),
    lambda lib: meta(lib.rand(2, device="cpu")),
], ids=lambda f: None)
def test_shape_dtype_defaults(expr):
    check(expr)


def test_uniform_normal_return_self():
    for lib in (ember, torch):
        x = lib.zeros(3)
        assert x.uniform_() is x and x.normal_() is x


def test_default_dtype_followed():
    old_e, old_t = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        check(lambda lib: lib.rand(2).dtype)
        check(lambda lib: lib.randn(2).dtype)
        check(lambda lib: lib.normal(0.0, 1.0, (2,)).dtype)
        check(lambda lib: lib.randint(3, (2,)).dtype)
        check(lambda lib: lib.randperm(3).dtype)
    finally:
        ember.set_default_dtype(old_e)
        torch.set_default_dtype(old_t)


# ---------------------------------------------------------------- errors vs torch
ERRORS = {
    "rand_int64": lambda lib: lib.rand(2, dtype=lib.int64),
    "rand_bool": lambda lib: lib.rand(2, dtype=lib.bool),
    "randn_int32": lambda lib: lib.randn(2, dtype=lib.int32),
    "rand_negative": lambda lib: lib.rand(-1),
    "randn_negative": lambda lib: lib.randn(2, -1),
    "rand_float_size": lambda lib: lib.rand(2.5),
    "randint_empty_range": lambda lib: lib.randint(5, 5, (2,)),
    "randint_reversed_range": lambda lib: lib.randint(6, 5, (2,)),
    "randint_high_zero": lambda lib: lib.randint(0, (2,)),
    "randint_no_size": lambda lib: lib.randint(3, 5),
    "randint_negative_size": lambda lib: lib.randint(3, (-1,)),
    "randint_uint8_overflow": lambda lib: lib.randint(0, 300, (2,), dtype=lib.uint8),
    "randint_uint8_negative": lambda lib: lib.randint(-1, 3, (2,), dtype=lib.uint8),
    "randint_int8_overflow": lambda lib: lib.randint(0, 200, (2,), dtype=lib.int8),
    "randint_bool_overflow": lambda lib: lib.randint(10, (2,), dtype=lib.bool),
    "normal_negative_std": lambda lib: lib.normal(0, -1, (2,)),
    "normal_tensor_negative_std": lambda lib: lib.normal(lib.zeros(2), -1.0),
    "normal_tensor_std_negative_element": lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    "normal_float_std_negative_element": lambda lib: lib.normal(0.0, lib.tensor([1.0, -1.0])),
    "normal_shape_mismatch": lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    "normal_int_dtype": lambda lib: lib.normal(0.0, 1.0, (2, 3), dtype=lib.int64),
    "normal_int_mean_tensor": lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
    "normal_no_size": lambda lib: lib.normal(0.0, 1.0),
    "randperm_negative": lambda lib: lib.randperm(-1),
    "randperm_int8_overflow": lambda lib: lib.randperm(300, dtype=lib.int8),
    "randperm_bool": lambda lib: lib.randperm(3, dtype=lib.bool),
    "uniform_int": lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    "normal__int": lambda lib: lib.zeros(3, dtype=lib.int64).normal_(),
    "uniform_reversed": lambda lib: lib.zeros(3).uniform_(2, 1),
    "normal__negative_std": lambda lib: lib.zeros(3).normal_(0, -1),
    "rand_like_int": lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    "randn_like_bool": lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.bool)),
    "randint_like_empty_range": lambda lib: lib.randint_like(lib.zeros(2, 3), 5, 5),
    "generator_not_a_generator": lambda lib: lib.rand(2, generator=3),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    check(ERRORS[case])


# ---- distributions drawn in place and sampling: moments, supports and torch's errors

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_distribution_moments(dtype):
    d = getattr(ember, dtype)
    tol = 0.05 if dtype == "float16" else 0.02
    assert abs(ember.empty(N, dtype=d).bernoulli_(0.3).float().mean().item() - 0.3) < tol
    x = ember.empty(N, dtype=d).exponential_(2.0).double()
    assert abs(x.mean().item() - 0.5) < tol and x.min().item() >= 0
    g = ember.empty(N, dtype=d).geometric_(0.25).double()
    assert abs(g.mean().item() - 4.0) < 0.1 and g.min().item() >= 1 and bool((g == g.round()).all())
    c = ember.empty(N, dtype=ember.float64).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1  # the median (the mean does not exist)
    ln = ember.empty(N, dtype=ember.float64).log_normal_(0.5, 0.25)
    assert abs(ln.log().mean().item() - 0.5) < tol and abs(ln.log().std().item() - 0.25) < tol


def test_bernoulli_forms_and_random_ranges():
    p = ember.tensor([0.0, 1.0, 0.0, 1.0])
    assert ember.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert p.bernoulli(1.0).tolist() == [1.0] * 4
    assert ember.empty(4, dtype=ember.int64).bernoulli_(p).tolist() == [0, 1, 0, 1]
    r = ember.empty(N, dtype=ember.int64).random_(-3, 5)
    assert r.min().item() == -3 and r.max().item() == 4
    assert set(ember.empty(1000, dtype=ember.uint8).random_(4).tolist()) == {0, 1, 2, 3}
    assert ember.empty(1000, dtype=ember.bool).random_().any().item()
    u8 = ember.empty(N, dtype=ember.uint8).random_()
    assert u8.max().item() == 255 and u8.min().item() == 0


def test_multinomial():
    w = ember.tensor([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]])
    s = ember.multinomial(w, 2)
    assert s.shape == (2, 2) and s.dtype == ember.int64
    # no category twice; zero weights only once the others are used up (as torch 2.13)
    assert sorted(s[0].tolist()) == [0, 2] and s[1, 0].item() == 1
    assert sorted(ember.multinomial(ember.tensor([1.0, 0.0]), 2).tolist()) == [0, 1]
    draws = ember.multinomial(ember.tensor([1.0, 3.0]), N, replacement=True)
    assert abs(draws.double().mean().item() - 0.75) < 0.01
    assert (ember.multinomial(ember.tensor([0.0, 2.0, 0.0]), 50, replacement=True) == 1).all().item()


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).bernoulli_(1.5),
    lambda lib: lib.empty(3).exponential_(-1.0),
    lambda lib: lib.empty(3).geometric_(0.0),
    lambda lib: lib.empty(3).cauchy_(0.0, -1.0),
    lambda lib: lib.empty(3).log_normal_(0.0, -1.0),
    lambda lib: lib.empty(3).random_(5, 2),
    lambda lib: lib.multinomial(lib.tensor([1.0, 0.0]), 3),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.bernoulli(lib.tensor([1, 0])),
])
def test_distribution_errors(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)):
        call(ember)

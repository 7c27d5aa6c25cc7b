"""The benchmark cases: one table row each.

A setup receives the library module (ember, torch or numpy), builds its inputs, and
returns the zero-argument callable to time, or None when the library lacks the op.
ember's API is torch's, so `ember` defaults to the torch setup: write the torch
version as if `import ember as torch`, and give `ember=` only where they must differ.

Adding a case is a setup function (or a lambda) per API and one row in CASES:

    def matmul_1024(lib):  # torch and numpy spell this one alike
        a = lib.ones((1024, 1024), dtype=lib.float32)
        return lambda: a @ a

    Case("matmul 1024²", torch=matmul_1024, numpy=matmul_1024, flops=2 * 1024**3)

`bytes=` (memory traffic per call) reports GB/s, `flops=` reports GFLOP/s; without
either the report shows time per call. Inputs are built with ones/full rather than
zeros so their pages are really written before timing (zeroed memory can be backed by
one shared page). A setup that raises AttributeError or NotImplementedError, or whose
callable does, shows the op as missing ("n/a") for that library.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from . import small_gpt

Setup = Callable[[object], Optional[Callable[[], object]]]
LIBRARIES = ("ember", "torch", "numpy")


def SAME_AS_TORCH(module):
    """Default for Case.ember: use the case's torch setup (a marker, never called)."""
    raise AssertionError("SAME_AS_TORCH is a marker, not a setup")


@dataclass(frozen=True)
class Case:
    name: str
    torch: Setup | None = None
    numpy: Setup | None = None
    ember: Setup | None = SAME_AS_TORCH
    bytes: int = 0  # memory read + written per call -> report GB/s
    flops: int = 0  # floating point operations per call -> report GFLOP/s
    # Measures fresh processes instead of an in-process callable (import time).
    import_time: bool = False
    # A line for the report's notes beside a library's timing: note(library) or None.
    note: Callable[[object], Optional[str]] | None = None

    def setup_for(self, library: str) -> Setup | None:
        if library == "ember" and self.ember is SAME_AS_TORCH:
            return self.torch
        return getattr(self, library)


# --- setups --------------------------------------------------------------------------

# autograd (issue 4)

def mul_scalar_1_grad(torch):
    x = torch.ones(1, requires_grad=True)
    return lambda: 2 * x


def mlp_64_fwd_bwd(torch):
    a = torch.ones(64, 64, requires_grad=True)
    b = torch.full((64, 64), 0.5, requires_grad=True)

    def step():
        (a @ b).relu().sum().backward()
    return step


def chain_100(torch):
    """A 100-op elementwise chain on 1 element, recorded once; each call runs its backward."""
    x = torch.full((1,), 0.5, requires_grad=True)
    y = x
    for i in range(25):
        y = ((y * 1.01 + 0.1).sin()).tanh()
    return lambda: y.backward(retain_graph=True)


def tensor_3(torch):
    return lambda: torch.tensor([1.0, 2.0, 3.0])


def array_3(np):
    return lambda: np.array([1.0, 2.0, 3.0], dtype=np.float32)


def ten_floats(lib):
    return lib.ones(10, dtype=lib.float32)  # torch and numpy spell this alike


def read_first(lib):
    x = ten_floats(lib)
    return lambda: x[0]


def write_first(lib):
    x = ten_floats(lib)

    def write():
        x[0] = 1

    return write


def view_flat(torch):
    x = torch.ones(2, 3)
    return lambda: x.view(-1)


def reshape_flat(np):
    x = np.ones((2, 3), dtype=np.float32)
    return lambda: x.reshape(-1)


N_T = 4096  # square float32 matrix for the transpose copy


def transpose_copy(torch):
    x = torch.ones(N_T, N_T, dtype=torch.float32)
    return lambda: x.t().contiguous()


def transpose_copy_numpy(np):
    x = np.ones((N_T, N_T), dtype=np.float32)
    return lambda: np.ascontiguousarray(x.T)


N_CAST = 16 * 2**20  # float32 elements cast to float64


def cast_f64(torch):
    x = torch.ones(N_CAST, dtype=torch.float32)
    return lambda: x.to(torch.float64)


def cast_f64_numpy(np):
    x = np.ones(N_CAST, dtype=np.float32)
    return lambda: x.astype(np.float64)


# --- elementwise and reductions (issue 3) ---------------------------------------------------

def one_element(lib):
    return lib.ones(1, dtype=lib.float32), lib.ones(1, dtype=lib.float32)


def add_1(lib):
    a, b = one_element(lib)
    return lambda: a + b


def add_inplace_1(torch):
    a, b = one_element(torch)
    return lambda: a.add_(b)


def add_inplace_1_numpy(np):
    a, b = one_element(np)
    return lambda: np.add(a, b, out=a)


def sum_1(lib):
    a, _ = one_element(lib)
    return lambda: a.sum()


def mul_scalar_1(lib):
    a, _ = one_element(lib)
    return lambda: a * 2.0


def where_1(lib):
    a, b = one_element(lib)
    m = a > 0
    return lambda: lib.where(m, a, b)


N_EW = 16 * 2**20  # float32 elements for the elementwise throughput cases


def big_pair(lib):
    return lib.full((N_EW,), 1.5, dtype=lib.float32), lib.full((N_EW,), 2.5, dtype=lib.float32)


def add_big(lib):
    a, b = big_pair(lib)
    return lambda: a + b


def mul_inplace_big(torch):
    a, _ = big_pair(torch)
    return lambda: a.mul_(1.0)


def mul_inplace_big_numpy(np):
    a, _ = big_pair(np)
    return lambda: np.multiply(a, 1.0, out=a)


def exp_big(lib):
    a, _ = big_pair(lib)
    return lambda: lib.exp(a)


def sum_big(lib):
    a, _ = big_pair(lib)
    return lambda: a.sum()


def max_dim(torch):
    a = torch.full((4096, 4096), 1.5, dtype=torch.float32)
    return lambda: a.max(1)


def max_dim_numpy(np):
    a = np.full((4096, 4096), 1.5, dtype=np.float32)
    return lambda: (a.max(1), a.argmax(1))


def add_transposed(torch):
    a = torch.full((4096, 4096), 1.5, dtype=torch.float32)
    b = torch.full((4096, 4096), 2.5, dtype=torch.float32)
    return lambda: a.t() + b


def add_transposed_numpy(np):
    a = np.full((4096, 4096), 1.5, dtype=np.float32)
    b = np.full((4096, 4096), 2.5, dtype=np.float32)
    return lambda: a.T + b


# --- matrix products (issue 3) ------------------------------------------------------

def matmul_square(n, dtype):
    def setup(lib):  # torch and numpy spell this alike
        a = lib.full((n, n), 0.5, dtype=getattr(lib, dtype))
        b = lib.full((n, n), 0.25, dtype=getattr(lib, dtype))
        return lambda: lib.matmul(a, b)
    return setup


BMM_BATCH, BMM_N = 64, 128


def bmm_batch(torch):
    a = torch.full((BMM_BATCH, BMM_N, BMM_N), 0.5, dtype=torch.float32)
    return lambda: torch.bmm(a, a)


def bmm_batch_numpy(np):
    a = np.full((BMM_BATCH, BMM_N, BMM_N), 0.5, dtype=np.float32)
    return lambda: np.matmul(a, a)


N_MOVE = 2**20  # elements moved by the cat / index_select / gather cases


def cat_1m(torch):
    a = torch.full((N_MOVE // 2,), 1.5, dtype=torch.float32)
    return lambda: torch.cat([a, a])


def cat_1m_numpy(np):
    a = np.full((N_MOVE // 2,), 1.5, dtype=np.float32)
    return lambda: np.concatenate([a, a])


def index_select_1m(torch):
    a = torch.full((N_MOVE,), 1.5, dtype=torch.float32)
    idx = torch.randperm(N_MOVE)
    return lambda: a.index_select(0, idx)


def index_select_1m_numpy(np):
    a = np.full((N_MOVE,), 1.5, dtype=np.float32)
    idx = np.random.permutation(N_MOVE)
    return lambda: a.take(idx)


def gather_1m(torch):
    a = torch.full((1024, 1024), 1.5, dtype=torch.float32)
    idx = torch.randint(0, 1024, (1024, 1024))
    return lambda: a.gather(1, idx)


def gather_1m_numpy(np):
    a = np.full((1024, 1024), 1.5, dtype=np.float32)
    idx = np.random.randint(0, 1024, (1024, 1024))
    return lambda: np.take_along_axis(a, idx, 1)


# nn (issue 5): a ResNet-stage convolution, torch.convolution's signature in both
CONV = dict(n=32, c=64, hw=56, k=3)
CONV_FLOPS = 2 * CONV["n"] * CONV["c"] * CONV["c"] * CONV["k"] ** 2 * CONV["hw"] ** 2


def conv2d_inputs(torch, requires_grad=False):
    n, c, hw, k = CONV["n"], CONV["c"], CONV["hw"], CONV["k"]
    x = torch.full((n, c, hw, hw), 0.5, requires_grad=requires_grad)
    w = torch.full((c, c, k, k), 0.01, requires_grad=requires_grad)
    return x, w


def conv2d_forward(torch):
    x, w = conv2d_inputs(torch)
    return lambda: torch.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)


def conv2d_backward(torch):
    """The gradients of input and weight (the forward is recorded once)."""
    x, w = conv2d_inputs(torch, requires_grad=True)
    y = torch.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    g = torch.full(tuple(y.shape), 0.25)
    return lambda: y.backward(g, retain_graph=True)


EBAG = {"rows": 1_000_000, "dim": 64, "bags": 4096, "per_bag": 20}


def embedding_bag_inputs(torch, requires_grad=False):
    """A 1M x 64 float32 table and 4096 bags of 20 scattered rows (a multiplicative hash)."""
    n = EBAG["bags"] * EBAG["per_bag"]
    w = torch.full((EBAG["rows"], EBAG["dim"]), 0.5, requires_grad=requires_grad)
    idx = torch.arange(n, dtype=torch.int64) * 2654435761 % EBAG["rows"]
    return w, idx, torch.arange(0, n, EBAG["per_bag"], dtype=torch.int64)


def embedding_bag_forward(torch):
    w, idx, off = embedding_bag_inputs(torch)
    return lambda: torch.nn.functional.embedding_bag(idx, w, off, mode="mean")


def embedding_bag_fwd_bwd(torch):
    """Forward, then backward into the (dense) weight gradient."""
    w, idx, off = embedding_bag_inputs(torch, requires_grad=True)

    def step():
        w.grad = None
        torch.nn.functional.embedding_bag(idx, w, off, mode="mean").sum().backward()
    return step


# nn (issue 16): a 3-d convolution, forward and backward (input, weight, bias) in one call
CONV3D = dict(n=4, c=16, d=16, hw=32, cout=32, k=3)
CONV3D_FLOPS = 2 * CONV3D["n"] * CONV3D["c"] * CONV3D["cout"] * CONV3D["k"] ** 3 * CONV3D["d"] * CONV3D["hw"] ** 2


def conv3d_train(torch):
    n, c, d, hw, cout, k = (CONV3D[key] for key in ("n", "c", "d", "hw", "cout", "k"))
    x = torch.full((n, c, d, hw, hw), 0.5, requires_grad=True)
    w = torch.full((cout, c, k, k, k), 0.01, requires_grad=True)
    b = torch.zeros(cout, requires_grad=True)

    def step():
        x.grad = w.grad = b.grad = None
        torch.nn.functional.conv3d(x, w, b, padding=1).sum().backward()
    return step


# channels_last (issue 16): the same convolution at batch 8, forward + backward of input
# and weight, with input and weight laid out contiguous or channels_last
CONV_CL = dict(n=8, c=64, hw=56, k=3)
CONV_CL_FLOPS = 3 * 2 * CONV_CL["n"] * CONV_CL["c"] ** 2 * CONV_CL["k"] ** 2 * CONV_CL["hw"] ** 2


def conv2d_fwd_bwd(format_name):
    def setup(torch):
        fmt = getattr(torch, format_name)
        n, c, hw, k = CONV_CL["n"], CONV_CL["c"], CONV_CL["hw"], CONV_CL["k"]
        x = torch.full((n, c, hw, hw), 0.5).to(memory_format=fmt).requires_grad_()
        w = torch.full((c, c, k, k), 0.01).to(memory_format=fmt).requires_grad_()
        g = torch.full((n, c, hw, hw), 0.25).to(memory_format=fmt)

        def step():
            x.grad = w.grad = None
            torch.nn.functional.conv2d(x, w, padding=1).backward(g)
        return step
    return setup


MLP_BATCH = 64


def max_pool_fwd_bwd(format_name):
    """max_pool2d 3x3 stride 2 (a ResNet stem's) forward + backward, in a memory format."""
    def setup(torch):
        x = torch.linspace(-1, 1, 8 * 64 * 112 * 112).reshape(8, 64, 112, 112).sin()
        x = x.to(memory_format=getattr(torch, format_name)).requires_grad_()
        g = torch.ones(8, 64, 56, 56).to(memory_format=getattr(torch, format_name))

        def step():
            x.grad = None
            torch.nn.functional.max_pool2d(x, 3, 2, 1).backward(g)
        return step
    return setup


# forward-mode AD (issue 16): a Jacobian-vector product through a tanh MLP, and a forward
# Jacobian of a small function (one jvp per input element)
def mlp_jvp(torch):
    torch.manual_seed(0)
    ws = [torch.randn(256, 256) / 16 for _ in range(3)]
    x, v = torch.randn(64, 256), torch.randn(64, 256)

    def f(x):
        for w in ws:
            x = torch.tanh(x @ w)
        return x.sum()

    def step():
        torch.func.jvp(f, (x,), (v,))
    return step


def softmax_rows(dtype, dim=-1, shape=(1024, 4096)):
    """softmax of a (1024, 4096) block along `dim` (issue 20's kernels)."""
    def setup(torch):
        x = torch.randn(*shape).to(getattr(torch, dtype))
        return lambda: torch.softmax(x, dim)
    return setup


def small_jacfwd(torch):
    x = torch.linspace(-1, 1, 16)
    w = torch.linspace(0, 1, 16 * 16).reshape(16, 16)

    def step():
        torch.func.jacfwd(lambda x: torch.softmax(w @ torch.sin(x), 0))(x)
    return step


# complex numbers (issue 15): a complex64 product of 16M elements, and its sum
def complex_pair(lib):
    return lib.full((N_EW,), 1.5 - 0.5j, dtype=lib.complex64), lib.full((N_EW,), 2.5 + 1j, dtype=lib.complex64)


def complex_mul_big(lib):
    a, b = complex_pair(lib)
    return lambda: a * b


def complex_sum_big(lib):
    a, _ = complex_pair(lib)
    return lambda: a.sum()


def mlp_train_step(sizes, batch, loss_name):
    """The setup of one SGD step of an MLP of the given layer sizes (ReLU between) on a
    fixed batch: forward, the loss, backward, update (nn, autograd and optim together)."""
    def setup(torch):
        torch.manual_seed(0)
        layers = []
        for n_in, n_out in zip(sizes, sizes[1:]):
            layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x = torch.linspace(-1, 1, batch * sizes[0]).reshape(batch, sizes[0])
        if loss_name == "cross_entropy":  # class indices
            y = torch.arange(batch) % sizes[-1]
        else:
            y = torch.linspace(0, 1, batch * sizes[-1]).reshape(batch, sizes[-1])
        loss_fn = getattr(torch.nn.functional, loss_name)

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        return step
    return setup


def char_transformer_step(torch):
    """One training step (forward, cross_entropy, backward, clipping, AdamW) of the
    example's model at its defaults: 16 sequences of 64 characters."""
    path = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
    spec = importlib.util.spec_from_file_location("char_transformer_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    _, _, step, _ = example.make_training(torch, steps=10**6)
    return step


def onnx_export_char_transformer(torch):
    """ONNX export (issue 13) of the example's model in eval mode, batch axis dynamic:
    torch's TorchScript exporter (dynamo=False) against ember's tracer."""
    import io

    path = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
    spec = importlib.util.spec_from_file_location("char_transformer_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    torch.manual_seed(0)
    model = example.make_model_class(torch)(40, 64).eval()
    idx = torch.randint(0, 40, (2, 64))
    export = torch.onnx.export
    return lambda: export(model, (idx,), io.BytesIO(), dynamo=False, input_names=["idx"],
                                     dynamic_axes={"idx": {0: "batch"}})


# toward the hardware (issue 20): transcendental functions and reductions of 16M floats
# (against the machine's bandwidth), the fused row kernels, recurrent layers, attention,
# reduced-precision products and the example's step under bfloat16 autocast

def spread(lib):
    """16M float32 spread over [-8, 8): varied arguments, as a real tensor's are (a constant
    lets a libm call take one branch every time)."""
    return lib.arange(N_EW, dtype=lib.float32) * (16.0 / N_EW) - 8.0


def unary_big(name, positive=False):
    def setup(lib):  # torch and numpy spell these alike
        a = spread(lib)
        if positive:
            a = abs(a) + 0.5
        fn = getattr(lib, name)
        return lambda: fn(a)
    return setup


def sigmoid_big(torch):
    a = spread(torch)
    return lambda: torch.sigmoid(a)


def gelu_big(torch):
    a = spread(torch)
    gelu = torch.nn.functional.gelu
    return lambda: gelu(a)


def reduce_big(name):
    def setup(torch):
        a = spread(torch)
        fn = {"mean": lambda: a.mean(), "amax": lambda: a.amax(), "norm": lambda: torch.linalg.vector_norm(a),
              "var": lambda: a.var()}[name]
        return fn
    return setup


def sum_half(dtype):
    """The sum of 16M elements of a half type (ember and torch accumulate in float)."""
    def setup(torch):
        a = spread(torch).to(getattr(torch, dtype))
        return lambda: a.sum()
    return setup


def reduce_big_numpy(name):
    def setup(np):
        a = spread(np)
        return {"mean": lambda: a.mean(), "amax": lambda: a.max(), "norm": lambda: np.linalg.norm(a),
                "var": lambda: a.var(ddof=1)}[name]
    return setup


SOFTMAX_SHAPE = (1024, 4096)
LAYER_NORM_SHAPE = (8192, 1024)


def softmax_forward(torch):
    x = torch.randn(*SOFTMAX_SHAPE)
    return lambda: torch.softmax(x, -1)


def softmax_fwd_bwd(torch):
    x = torch.randn(*SOFTMAX_SHAPE, requires_grad=True)
    g = torch.randn(*SOFTMAX_SHAPE)

    def step():
        torch.softmax(x, -1).backward(g)
        x.grad = None
    return step


def layer_norm_forward(torch):
    x = torch.randn(*LAYER_NORM_SHAPE)
    w, b = torch.ones(LAYER_NORM_SHAPE[1]), torch.zeros(LAYER_NORM_SHAPE[1])
    layer_norm = torch.nn.functional.layer_norm
    return lambda: layer_norm(x, LAYER_NORM_SHAPE[1:], w, b)


def layer_norm_fwd_bwd(torch):
    x = torch.randn(*LAYER_NORM_SHAPE, requires_grad=True)
    w = torch.ones(LAYER_NORM_SHAPE[1], requires_grad=True)
    b = torch.zeros(LAYER_NORM_SHAPE[1], requires_grad=True)
    g = torch.randn(*LAYER_NORM_SHAPE)
    layer_norm = torch.nn.functional.layer_norm

    def step():
        layer_norm(x, LAYER_NORM_SHAPE[1:], w, b).backward(g)
        x.grad = w.grad = b.grad = None
    return step


def cross_entropy_fwd_bwd(n, classes):
    def setup(torch):
        logits = torch.randn(n, classes, requires_grad=True)
        target = torch.randint(0, classes, (n,))
        cross_entropy = torch.nn.functional.cross_entropy

        def step():
            cross_entropy(logits, target).backward()
            logits.grad = None
        return step
    return setup


def recurrent_fwd_bwd(kind):
    """An LSTM or GRU of 256 inputs and 512 hidden units over 50 steps of a batch of 32."""
    def setup(torch):
        torch.manual_seed(0)
        module = getattr(torch.nn, kind)(256, 512)
        x = torch.randn(50, 32, 256, requires_grad=True)

        def step():
            out, _ = module(x)
            out.sum().backward()
            x.grad = None
            module.zero_grad(set_to_none=True)
        return step
    return setup


def recurrent_inference(kind):
    """The same layer's forward under no_grad."""
    def setup(torch):
        torch.manual_seed(0)
        module = getattr(torch.nn, kind)(256, 512)
        x = torch.randn(50, 32, 256)

        def step():
            with torch.no_grad():
                module(x)
        return step
    return setup


def sdpa_fwd_bwd(torch):
    """Causal attention, batch 8, 8 heads, 256 tokens, head dim 64."""
    q, k, v = (torch.randn(8, 8, 256, 64, requires_grad=True) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def step():
        sdpa(q, k, v, is_causal=True).sum().backward()
        q.grad = k.grad = v.grad = None
    return step


def has_bf16_hardware() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def matmul_reduced(n, dtype):
    def setup(torch):
        if n > 1024 and torch.__name__ == "torch" and not has_bf16_hardware():
            return None  # torch converts element by element without bf16 hardware: minutes per call
        a = torch.full((n, n), 0.5, dtype=getattr(torch, dtype))
        b = torch.full((n, n), 0.25, dtype=getattr(torch, dtype))
        return lambda: a @ b
    return setup


def bf16_gemm_path(lib):
    """Which instructions ember's bfloat16 products used (kernels/gemm_bf16.h)."""
    path = getattr(getattr(lib, "_C", None), "_bf16_gemm_path", None)
    return f"bfloat16 products on the {path()} path" if lib.__name__ == "ember" and path else None


def char_transformer_step_autocast(torch):
    """The example's training step with its forward and loss under CPU autocast in bfloat16."""
    path = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
    spec = importlib.util.spec_from_file_location("char_transformer_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    _, _, step, _ = example.make_training(torch, steps=10**6, autocast_dtype=torch.bfloat16)
    return step


def pow_big(lib):
    """x ** 1.7, the scalar exponent that no special case catches (x*x, sqrt, ...)."""
    x = lib.ones(N_EW, dtype=lib.float32) * 1.5
    return lambda: x ** 1.7


# --- the table -------------------------------------------------------------------------


# FFT (issue 15): the engine of csrc/kernels/fft.cpp against torch's (pocketfft) and numpy's

FFT_N = 2**20
FFT_PRIME = 1_000_003  # prime: Bluestein's chirp-z through a power-of-two FFT


def rfft_2_20(lib):
    x = lib.ones(FFT_N, dtype=lib.float32) * 0.5
    return lambda: lib.fft.rfft(x)


def fft_prime(torch):
    x = (torch.ones(FFT_PRIME) * 0.5).to(torch.complex64)
    return lambda: torch.fft.fft(x)


def fft_prime_numpy(np):
    x = np.full(FFT_PRIME, 0.5, dtype=np.complex64)
    return lambda: np.fft.fft(x)

CASES: list[Case] = [
    Case("import", import_time=True),
    Case("tensor([1., 2., 3.])", torch=tensor_3, numpy=array_3),
    Case("x[0] read (10 floats)", torch=read_first, numpy=read_first),
    Case("x[0] = 1 (10 floats)", torch=write_first, numpy=write_first),
    Case("view(-1) on 2x3", torch=view_flat, numpy=reshape_flat),
    Case("t().contiguous() 4096²", torch=transpose_copy, numpy=transpose_copy_numpy,
         bytes=2 * 4 * N_T * N_T),
    Case("to(float64) 16M float32", torch=cast_f64, numpy=cast_f64_numpy,
         bytes=(4 + 8) * N_CAST),
    Case("a + b (1 element)", torch=add_1, numpy=add_1),
    Case("a.add_(b) (1 element)", torch=add_inplace_1, numpy=add_inplace_1_numpy),
    Case("a.sum() (1 element)", torch=sum_1, numpy=sum_1),
    Case("a * 2.0 (1 element)", torch=mul_scalar_1, numpy=mul_scalar_1),
    Case("where(m, a, b) (1 element)", torch=where_1, numpy=where_1),
    Case("2 * x, x requires grad (1 element)", torch=mul_scalar_1_grad),
    Case("(a @ b).relu().sum() fwd+bwd 64²", torch=mlp_64_fwd_bwd),
    Case("backward of a 100-op chain (1 element)", torch=chain_100),
    Case("a + b 16M float32", torch=add_big, numpy=add_big, bytes=3 * 4 * N_EW),
    Case("a.mul_(2) 16M float32", torch=mul_inplace_big, numpy=mul_inplace_big_numpy, bytes=2 * 4 * N_EW),
    Case("a.exp() 16M float32", torch=exp_big, numpy=exp_big, bytes=2 * 4 * N_EW),
    Case("a.sum() 16M float32", torch=sum_big, numpy=sum_big, bytes=4 * N_EW),
    Case("a.max(1) 4096²", torch=max_dim, numpy=max_dim_numpy, bytes=4 * 4096 * 4096),
    Case("a.t() + b 4096²", torch=add_transposed, numpy=add_transposed_numpy, bytes=3 * 4 * 4096 * 4096),
    Case("cat 2 x 512K float32", torch=cat_1m, numpy=cat_1m_numpy, bytes=2 * 4 * N_MOVE),
    Case("index_select 1M float32", torch=index_select_1m, numpy=index_select_1m_numpy, bytes=(4 + 8 + 4) * N_MOVE),
    Case("gather 1024² float32", torch=gather_1m, numpy=gather_1m_numpy, bytes=(4 + 8 + 4) * N_MOVE),
    Case("matmul float32 1024²", torch=matmul_square(1024, "float32"), numpy=matmul_square(1024, "float32"),
         flops=2 * 1024**3),
    Case("matmul float32 4096²", torch=matmul_square(4096, "float32"), numpy=matmul_square(4096, "float32"),
         flops=2 * 4096**3),
    Case("matmul float64 1024²", torch=matmul_square(1024, "float64"), numpy=matmul_square(1024, "float64"),
         flops=2 * 1024**3),
    Case(f"bmm float32 {BMM_BATCH}x{BMM_N}²", torch=bmm_batch, numpy=bmm_batch_numpy,
         flops=2 * BMM_BATCH * BMM_N**3),
    Case("conv2d fwd 32x64x56² 3x3 float32", torch=conv2d_forward, flops=CONV_FLOPS),
    Case("conv2d bwd 32x64x56² 3x3 float32 (input + weight)", torch=conv2d_backward, flops=2 * CONV_FLOPS),
    Case("embedding_bag mean fwd 1M x 64 float32, 4096 bags of 20", torch=embedding_bag_forward),
    Case("embedding_bag mean fwd+bwd 1M x 64 float32, 4096 bags of 20", torch=embedding_bag_fwd_bwd),
    Case("conv3d fwd+bwd 4x16x16x32² -> 32, 3x3x3 float32", torch=conv3d_train, flops=3 * CONV3D_FLOPS),
    Case("conv2d fwd+bwd 8x64x56² 3x3 float32 contiguous", torch=conv2d_fwd_bwd("contiguous_format"),
         flops=CONV_CL_FLOPS),
    Case("conv2d fwd+bwd 8x64x56² 3x3 float32 channels_last", torch=conv2d_fwd_bwd("channels_last"),
         flops=CONV_CL_FLOPS),
    Case("max_pool2d fwd+bwd 8x64x112² 3x3/2 float32 contiguous", torch=max_pool_fwd_bwd("contiguous_format")),
    Case("max_pool2d fwd+bwd 8x64x112² 3x3/2 float32 channels_last", torch=max_pool_fwd_bwd("channels_last")),
    Case("func.jvp through a 3-layer tanh MLP 256 wide (batch 64)", torch=mlp_jvp),
    Case("a * b 16M complex64", torch=complex_mul_big, numpy=complex_mul_big, bytes=3 * 8 * N_EW),
    Case("a.sum() 16M complex64", torch=complex_sum_big, numpy=complex_sum_big, bytes=8 * N_EW),
    Case("complex64 matmul 1024²", torch=matmul_square(1024, "complex64"), numpy=matmul_square(1024, "complex64"),
         flops=8 * 1024**3),  # a complex multiply-add is 8 real flops
    Case("softmax 1024x4096 bfloat16", torch=softmax_rows("bfloat16"), bytes=2 * 2 * 1024 * 4096),
    Case("softmax dim 0 of 4096x1024 float32", torch=softmax_rows("float32", 0, (4096, 1024)),
         bytes=2 * 4 * 1024 * 4096),
    Case("cross_entropy fwd+bwd 8192x65 float32", torch=cross_entropy_fwd_bwd(8192, 65)),
    Case("func.jacfwd of softmax(W sin x), 16 inputs", torch=small_jacfwd),
    Case(f"MLP 784-256-10 train step with cross_entropy (batch {MLP_BATCH})",
         torch=mlp_train_step((784, 256, 10), MLP_BATCH, "cross_entropy")),
    Case("MLP 16-32-1 train step with mse_loss (batch 8)", torch=mlp_train_step((16, 32, 1), 8, "mse_loss")),
    Case("char transformer train step (examples/, 16x64 chars)", torch=char_transformer_step),
    Case("onnx.export of the char transformer (examples/, dynamic batch)", torch=onnx_export_char_transformer),
    Case("fft.rfft 2^20 float32", torch=rfft_2_20, numpy=rfft_2_20),
    Case("fft.fft 1,000,003 (prime) complex64", torch=fft_prime, numpy=fft_prime_numpy),
    Case("a.log() 16M float32", torch=unary_big("log", True), numpy=unary_big("log", True), bytes=2 * 4 * N_EW),
    Case("a.sin() 16M float32", torch=unary_big("sin"), numpy=unary_big("sin"), bytes=2 * 4 * N_EW),
    Case("a.sigmoid() 16M float32", torch=sigmoid_big, bytes=2 * 4 * N_EW),
    Case("gelu 16M float32", torch=gelu_big, bytes=2 * 4 * N_EW),
    Case("a.mean() 16M float32", torch=reduce_big("mean"), numpy=reduce_big_numpy("mean"), bytes=4 * N_EW),
    Case("a.amax() 16M float32", torch=reduce_big("amax"), numpy=reduce_big_numpy("amax"), bytes=4 * N_EW),
    Case("vector_norm 16M float32", torch=reduce_big("norm"), numpy=reduce_big_numpy("norm"), bytes=4 * N_EW),
    Case("a.var() 16M float32", torch=reduce_big("var"), numpy=reduce_big_numpy("var"), bytes=4 * N_EW),
    Case("softmax fwd 1024x4096 float32", torch=softmax_forward, bytes=2 * 4 * 1024 * 4096),
    Case("softmax fwd+bwd 1024x4096 float32", torch=softmax_fwd_bwd),
    Case("layer_norm fwd 8192x1024 float32", torch=layer_norm_forward, bytes=2 * 4 * 8192 * 1024),
    Case("layer_norm fwd+bwd 8192x1024 float32", torch=layer_norm_fwd_bwd),
    Case("cross_entropy fwd+bwd 4096x1000 float32", torch=cross_entropy_fwd_bwd(4096, 1000)),
    Case("LSTM(256, 512) fwd+bwd, 50 steps, batch 32", torch=recurrent_fwd_bwd("LSTM")),
    Case("GRU(256, 512) fwd+bwd, 50 steps, batch 32", torch=recurrent_fwd_bwd("GRU")),
    Case("LSTM(256, 512) inference (no_grad), 50 steps, batch 32", torch=recurrent_inference("LSTM")),
    Case("sdpa fwd+bwd causal 8x8x256x64 float32", torch=sdpa_fwd_bwd),
    Case("matmul bfloat16 1024²", torch=matmul_reduced(1024, "bfloat16"), flops=2 * 1024**3, note=bf16_gemm_path),
    Case("matmul float16 1024²", torch=matmul_reduced(1024, "float16"), flops=2 * 1024**3),
    Case("matmul bfloat16 4096² (torch: only with bf16 hardware)", torch=matmul_reduced(4096, "bfloat16"),
         flops=2 * 4096**3, note=bf16_gemm_path),
    Case("char transformer train step, bfloat16 autocast", torch=char_transformer_step_autocast),
    Case("nanoGPT Shakespeare-char train step (README CPU settings: 4x128, 12x64 tokens)",
         torch=small_gpt.nanogpt_shakespeare_char),
    Case("makemore transformer train step (4x64, 32 names of 16)", torch=small_gpt.makemore_transformer),
    Case("a ** 1.7 16M float32", torch=pow_big, numpy=pow_big, bytes=2 * 4 * N_EW),
    Case("a.sum() 16M bfloat16", torch=sum_half("bfloat16"), bytes=2 * N_EW),
    Case("a.sum() 16M float16", torch=sum_half("float16"), bytes=2 * N_EW),
]

"""A tour of ember's tensors: creation, dtypes, views, indexing, numpy, storages.

Run: python examples/tour.py
"""
import pickle

import ember as torch  # ember answers to torch's API

torch.manual_seed(0)

# Creation: dtypes are inferred as torch infers them.
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("a =", a, a.dtype, a.shape)
print("arange:", torch.arange(0, 1, 0.25), " linspace:", torch.linspace(0, 1, 3))
print("eye:\n", torch.eye(2, 3, dtype=torch.int32))

# Views share memory: no copy until you ask for one.
t = a.t()
print("a.t() strides", t.stride(), "contiguous?", t.is_contiguous(), "-> contiguous strides", t.contiguous().stride())
v = a.view(3, 2)
v[0, 0] = 100.0
print("after writing through a view, a[0, 0] =", a[0, 0].item())

# Indexing: ints, slices, None, Ellipsis, integer tensors and boolean masks.
x = torch.arange(24).reshape(2, 3, 4)
print("x[1, :, ::2] =", x[1, :, ::2])
print("x[..., [0, 3]].shape =", x[..., [0, 3]].shape)
mask = torch.tensor([[True, False, False, True], [False, True, False, False], [False, False, False, True]])
x[0][mask] = -1
print("x[0] after x[0][mask] = -1:\n", x[0])

# Random numbers are reproducible from a seed.
torch.manual_seed(42)
r1 = torch.rand(3)
torch.manual_seed(42)
print("same stream after reseeding:", r1.tolist() == torch.rand(3).tolist())

# numpy shares memory both ways (numpy is optional; imported only here).
try:
    import numpy as np

    n = np.arange(4, dtype=np.float32)
    tn = torch.from_numpy(n)
    tn[0] = 42
    print("numpy sees ember's write:", n[0])
except ImportError:
    print("numpy not installed: skipping the numpy part")

# Storages and pickling: views of one storage still share it after a round trip.
base = torch.zeros(4)
pair = pickle.loads(pickle.dumps((base, base[1:])))
pair[1][0] = 7.0
print("pickled views still share memory:", pair[0].tolist())
print(torch.__config__.show())

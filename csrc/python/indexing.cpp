// The [] operator: basic indexing (ints, slices, None, ...) makes views; tensors, lists
// and masks index through ops::index / index_put_. Ints select before any advanced
// index is applied, as torch does.
#include <vector>
#include "api_decl.h"
#include "autograd/formulas.h"
#include "autograd/record.h"
#include "autograd/trace.h"
#include "ops/internal.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {
namespace {

Tensor select_checked(const Tensor& t, int64_t dim, int64_t index) {
  EMBER_CHECK(t.dim() > 0, Index, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  int64_t size = t.sizes()[dim];
  EMBER_CHECK(index >= -size && index < size, Index, "index ", index, " is out of bounds for dimension ", dim,
              " with size ", size);
  return api::select(t, dim, index);
}

Tensor slice_of(const Tensor& t, int64_t dim, PyObject* key) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) throw PythonError{};
  EMBER_CHECK(step > 0, Value, "step must be greater than zero");
  return api::slice(t, dim, start, stop, step);
}

bool is_index_tensor_like(PyObject* item) {
  return is_tensor(item) || PyList_Check(item) || PyUnicode_Check(item) ||
         (!PyTuple_Check(item) && !PySlice_Check(item) && item != Py_None && item != Py_Ellipsis &&
          !PyLong_Check(item) && !PyBool_Check(item) && PyObject_HasAttrString(item, "__array_interface__"));
}

// numpy's scalars have __array_interface__ but, unlike its arrays, are no sequences.
bool is_numpy_scalar(PyObject* item) {
  return !is_tensor(item) && !PySequence_Check(item) && PyObject_HasAttrString(item, "__array_interface__");
}

bool is_zero_dim_integer_tensor(PyObject* item) {
  return is_tensor(item) && unwrap(item).dim() == 0 && is_integral(unwrap(item).dtype(), false) &&
         unwrap(item).dtype() != ScalarType::UInt8;
}

// How many dims of self an index item consumes.
int64_t consumed(PyObject* item) {
  if (item == Py_None || item == Py_Ellipsis || PyBool_Check(item)) return 0;
  if (is_tensor(item)) {
    const Tensor& t = unwrap(item);
    if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8) return t.dim();
    return 1;
  }
  return 1;
}

// A list (or numpy array, or str, which fails there) used as an index becomes a tensor;
// an empty list or a list of floats indexes as int64, as torch does.
Tensor index_tensor_from(PyObject* item) {
  if (PyList_Check(item)) {  // torch reads a list key as a tuple first, which meets a self-reference at once
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(item); ++i)
      EMBER_CHECK(PyList_GET_ITEM(item, i) != item, Type, "new(): self-referential lists are incompatible");
  }
  Tensor t = tensor_from_data(item, std::nullopt);
  if (t.numel() == 0 || is_floating(t.dtype())) t = ops::to_dtype(t, ScalarType::Int64, false, false, std::nullopt);
  return t;
}

// An int key; too large for int64 is torch's ValueError.
int64_t index_int(PyObject* item) {
  if (PyLong_Check(item)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow) fail(ErrorKind::Value, "Overflow when unpacking long long");
    return v;
  }
  return unpack_int(item);
}

struct Indexed {
  Tensor view;                  // after basic indexing
  std::vector<Tensor> indices;  // per dim of view; undefined = full slice
  bool advanced = false;
  // How a tensor value of another dtype is treated, as torch does: converted when the
  // advanced indices are all Python bools (any value) or all masks (0-dim values only);
  // otherwise index_put_ refuses it.
  bool python_bools_only = true;
  bool masks_only = true;
};

Indexed apply_index(const Tensor& self, PyObject* key) {
  Owned items_holder;
  PyObject* const* items;
  Py_ssize_t n;
  if (PyTuple_Check(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
  } else {
    items = &key;
    n = 1;
  }
  int64_t used = 0;
  for (Py_ssize_t i = 0; i < n; ++i) used += consumed(items[i]);
  EMBER_CHECK(used <= self.dim(), Index, "too many indices for tensor of dimension ", self.dim());
  bool ellipsis_seen = false;  // the first ... spans the unindexed dims; later ones span none (torch)

  Indexed r;
  r.view = self;
  int64_t dim = 0;
  // r.indices has one slot per index item: a k-dim mask spans k dims of the view but one
  // slot (ops::index expands it), so slot = dim - mask_extra, with mask_extra the sum of
  // (k - 1) over the masks so far (-1 for a 0-dim one).
  int64_t mask_extra = 0;
  auto add_index = [&](Tensor t) {
    const int64_t slot = dim - mask_extra;
    r.indices.resize(slot + 1);
    r.indices[slot] = std::move(t);
    r.advanced = true;
  };
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    if (item == Py_None) {
      r.view = api::unsqueeze(r.view, dim++);
    } else if (item == Py_Ellipsis) {
      if (!ellipsis_seen) dim += self.dim() - used;
      ellipsis_seen = true;
    } else if (PyBool_Check(item) || (is_tensor(item) && unwrap(item).dim() == 0 &&
                                      unwrap(item).dtype() == ScalarType::Bool)) {
      // x[True] adds a dim of size 1, x[False] one of size 0: ops::index does it for a
      // 0-dim boolean index (a copy, as in torch). It takes a slot but no dim of the view.
      r.python_bools_only &= PyBool_Check(item) != 0;
      r.masks_only = false;
      add_index(PyBool_Check(item) ? ops::scalar_tensor(Scalar(item == Py_True), ScalarType::Bool) : unwrap(item));
      mask_extra -= 1;
    } else if (PyLong_Check(item) || is_zero_dim_integer_tensor(item)) {  // 0-dim int tensors select (a view)
      r.view = select_checked(r.view, dim, index_int(item));
    } else if (PySlice_Check(item)) {
      r.view = slice_of(r.view, dim++, item);
    } else if (is_numpy_scalar(item)) {
      // np.int8(1), np.uint64(1): an int, as torch reads them; np.float32(1) and np.bool_
      // (neither has __index__) are no index (as 0-d tensors they indexed as an int and as
      // a uint8 mask)
      EMBER_CHECK(is_int_like(item), Index, "only integers, slices (`:`), ellipsis "
                  "(`...`), None and long or byte Variables are valid indices (got ", Py_TYPE(item)->tp_name, ")");
      r.view = select_checked(r.view, dim, index_int(item));
    } else if (is_index_tensor_like(item)) {
      Tensor t = is_tensor(item) ? unwrap(item) : index_tensor_from(item);
      const bool mask = t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8;
      r.masks_only &= mask;
      r.python_bools_only = false;
      int64_t span = mask ? t.dim() : 1;
      add_index(t);
      dim += span;
      mask_extra += span - 1;
    } else if (is_int_like(item)) {
      r.view = select_checked(r.view, dim, index_int(item));
    } else {
      fail(ErrorKind::Index, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
           "are valid indices (got ", Py_TYPE(item)->tp_name, ")");
    }
  }
  return r;
}

// Index tensors follow the indexed tensor to its device, as torch moves CPU indices.
void move_indices(const Tensor& view, std::vector<Tensor>& indices) {
  if (view.is_cpu()) return;
  for (Tensor& i : indices)
    if (i.defined()) i = ops::to_device_of(i, view.device());
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* key) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = unwrap(self);
    if (PyLong_CheckExact(key)) return wrap(select_checked(t, 0, index_int(key)));  // x[0]: the fast path
    Indexed r = apply_index(t, key);
    if (!r.advanced) {
      if (r.view.is_same(t)) r.view = api::view(t, t.sizes());
      return wrap(r.view);
    }
    move_indices(r.view, r.indices);
    return wrap(api::index(r.view, r.indices));
  });
}

int tensor_setitem(PyObject* self, PyObject* key, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
    return -1;
  }
  return guarded_int([&]() -> int {
    const Tensor& t = unwrap(self);
    Indexed r;
    if (PyLong_CheckExact(key)) {
      r.view = select_checked(t, 0, index_int(key));
    } else {
      r = apply_index(t, key);
    }
    // Only numbers and tensors can be assigned (torch refuses lists). A number converts
    // like a copy; only integer dtypes check it for overflow.
    const bool number = !is_tensor(value) && (PyLong_Check(value) || PyFloat_Check(value) || is_scalar_like(value));
    // Assigning a value that requires grad into a tensor that does not: the indexed view
    // must know its base, whose history the assignment rewrites.
    const bool record = autograd::grad_enabled() && (autograd::requires_grad(t) ||
                                                    (is_tensor(value) && autograd::requires_grad(unwrap(value))));
    if (record) autograd::track_view(r.view, t);
    EMBER_CHECK(number || is_tensor(value), Type, "can't assign a ", Py_TYPE(value)->tp_name, " to a ember.",
                type_name(t.dtype()), "Tensor");
    Tensor v;
    if (number) {
      if (PyLong_Check(value)) index_int(value);  // beyond int64: torch's ValueError
      Scalar s = unpack_scalar(value);
      if (t.dtype() != ScalarType::Float16 && t.dtype() != ScalarType::BFloat16)  // those round to inf
        ops::check_convertible(s, t.dtype(), "__setitem__");
      if (!r.advanced) {  // x[0] = 1: the fast path
        if (record || hooks::any()) {  // a trace, or forward AD, must see the write (autograd/hooks.h)
          api::fill_Scalar_(r.view, s);
        } else {
          ops::fill_unchecked(r.view, s);
        }
        return 0;
      }
      v = ops::scalar_tensor(s, t.dtype());
    } else {
      v = unwrap(value);
    }
    if (!r.advanced) {
      while (v.dim() > r.view.dim() && v.sizes()[0] == 1) v = ops::squeeze_dim(v, 0);  // torch drops leading 1s
      api::copy_(r.view, v, false);
      return 0;
    }
    if (v.dtype() != t.dtype() && (r.python_bools_only || (r.masks_only && v.dim() == 0)))
      v = ops::to_dtype(v, t.dtype(), false, false, std::nullopt);
    move_indices(r.view, r.indices);
    api::index_put_(r.view, r.indices, v, false);
    return 0;
  });
}

}  // namespace ember::python

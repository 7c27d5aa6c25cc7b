// The [] operator: basic indexing (ints, slices, None, ...) makes views; tensors, lists
// and masks index through ops::index / index_put_. Ints select before any advanced
// index is applied, as torch does.
#include <vector>
#include "ops/internal.h"
#include "ops_decl.h"
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
  return ops::select(t, dim, index);
}

Tensor slice_of(const Tensor& t, int64_t dim, PyObject* key) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) throw PythonError{};
  EMBER_CHECK(step > 0, Value, "step must be greater than zero");
  return ops::slice(t, dim, start, stop, step);
}

bool is_index_tensor_like(PyObject* item) {
  return is_tensor(item) || PyList_Check(item) ||
         (!PyTuple_Check(item) && !PySlice_Check(item) && item != Py_None && item != Py_Ellipsis &&
          !PyLong_Check(item) && !PyBool_Check(item) && PyObject_HasAttrString(item, "__array_interface__"));
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

struct Indexed {
  Tensor view;                  // after basic indexing
  std::vector<Tensor> indices;  // per dim of view; undefined = full slice
  bool advanced = false;
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
  int64_t used = 0, ellipses = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    used += consumed(items[i]);
    ellipses += items[i] == Py_Ellipsis;
  }
  EMBER_CHECK(ellipses <= 1, Index, "an index can only have a single ellipsis ('...')");
  EMBER_CHECK(used <= self.dim(), Index, "too many indices for tensor of dimension ", self.dim());

  Indexed r;
  r.view = self;
  int64_t dim = 0;
  auto add_index = [&](Tensor t) {
    r.indices.resize(dim + 1);
    r.indices[dim] = std::move(t);
    r.advanced = true;
  };
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    if (item == Py_None) {
      r.view = ops::unsqueeze(r.view, dim++);
    } else if (item == Py_Ellipsis) {
      dim += self.dim() - used;
    } else if (PyBool_Check(item) || (is_tensor(item) && unwrap(item).dim() == 0 &&
                                      unwrap(item).dtype() == ScalarType::Bool)) {
      // x[True] adds a dim of size 1; x[False] one of size 0
      bool keep = PyBool_Check(item) ? item == Py_True : ops::item(unwrap(item)).to_bool();
      r.view = ops::unsqueeze(r.view, dim);
      if (!keep) add_index(empty_tensor({0}, ScalarType::Int64));
      ++dim;
    } else if (PyLong_Check(item)) {
      r.view = select_checked(r.view, dim, unpack_int(item));
    } else if (PySlice_Check(item)) {
      r.view = slice_of(r.view, dim++, item);
    } else if (is_index_tensor_like(item)) {
      Tensor t = is_tensor(item) ? unwrap(item) : tensor_from_data(item, std::nullopt);
      if (!is_tensor(item) && t.numel() == 0) t = ops::to_dtype(t, ScalarType::Int64, false, false, std::nullopt);
      int64_t span = (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8) ? t.dim() : 1;
      add_index(t);
      dim += span;
    } else if (is_int_like(item)) {
      r.view = select_checked(r.view, dim, unpack_int(item));
    } else {
      fail(ErrorKind::Index, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
           "are valid indices (got ", Py_TYPE(item)->tp_name, ")");
    }
  }
  return r;
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* key) {
  try {
    const Tensor& t = unwrap(self);
    if (PyLong_CheckExact(key)) return wrap(select_checked(t, 0, unpack_int(key)));  // x[0]: the fast path
    Indexed r = apply_index(t, key);
    if (!r.advanced) {
      if (r.view.is_same(t)) r.view = make_view(t, Dims(t.sizes()), Dims(t.strides()), t.offset());
      return wrap(r.view);
    }
    return wrap(ops::index(r.view, r.indices));
  } catch (...) {
    return set_python_error();
  }
}

int tensor_setitem(PyObject* self, PyObject* key, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
    return -1;
  }
  try {
    const Tensor& t = unwrap(self);
    Indexed r;
    if (PyLong_CheckExact(key)) {
      r.view = select_checked(t, 0, unpack_int(key));
    } else {
      r = apply_index(t, key);
    }
    const bool number = !is_tensor(value) && is_scalar_like(value);
    if (!r.advanced) {
      if (number) {
        ops::fill_Scalar_(r.view, unpack_scalar(value));
        return 0;
      }
      Tensor v = is_tensor(value) ? unwrap(value) : tensor_from_data(value, t.dtype());
      while (v.dim() > r.view.dim() && v.sizes()[0] == 1) v = ops::squeeze_dim(v, 0);  // torch drops leading 1s
      ops::copy_(r.view, v, false);
      return 0;
    }
    Tensor v = number ? ops::scalar_tensor(unpack_scalar(value), t.dtype())
               : is_tensor(value) ? unwrap(value) : tensor_from_data(value, t.dtype());
    ops::index_put_(r.view, r.indices, v, false);
    return 0;
  } catch (...) {
    return set_python_error_int();
  }
}

}  // namespace ember::python

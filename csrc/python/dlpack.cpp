// DLPack: tensors lent to and borrowed from other libraries (numpy, torch, ...) without
// copying, as PyCapsules holding a DLManagedTensor (legacy) or DLManagedTensorVersioned.
// See the DLPack paragraph of DESIGN.md for who owns what and when the deleters run.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#include "ops/internal.h"
#include "ops_decl.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {
namespace {

// The DLPack ABI, written from the specification (dlpack.h, version 1.1; the legacy
// DLManagedTensor is the 0.x layout, which 1.x keeps). C enums are int-sized.
struct DLDevice {
  int32_t device_type;  // kDLCPU = 1, kDLCUDAHost = 3 (pinned host memory)...
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kFlagIsCopied = 2;  // DLPACK_FLAG_BITMASK_IS_COPIED
constexpr int32_t kDLCPU = 1, kDLCUDAHost = 3;
constexpr uint32_t kMajor = 1, kMinor = 1;
constexpr int32_t kMaxDims = 1024;  // far above any real tensor; bounds what a capsule can make us allocate

// Capsule names (the Python side of the spec): a consumer renames the capsule to the
// used_ name and takes over the deleter call; a capsule still unused when it dies calls
// the deleter itself.
constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

struct DTypeCode {
  ScalarType dtype;
  uint8_t code, bits;
};
constexpr DTypeCode kDTypeCodes[] = {
    {ScalarType::Bool, 6, 8},     {ScalarType::UInt8, 1, 8},     {ScalarType::Int8, 0, 8},
    {ScalarType::Int16, 0, 16},   {ScalarType::Int32, 0, 32},    {ScalarType::Int64, 0, 64},
    {ScalarType::Float16, 2, 16}, {ScalarType::BFloat16, 4, 16}, {ScalarType::Float32, 2, 32},
    {ScalarType::Float64, 2, 64}, {ScalarType::ComplexFloat, 5, 64}, {ScalarType::ComplexDouble, 5, 128}};

[[noreturn]] void buffer_error(const std::string& message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw PythonError{};
}

// ---- export ----

// What a lent tensor holds: the storage (so the memory outlives the ember tensor) and
// the shape and strides the DLTensor points at. The managed struct is a member, and its
// manager_ctx points back here; the deleter deletes the whole Export.
template <class Managed>
struct Export {
  Managed managed{};
  Storage storage;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void delete_export(Managed* self) {
  // Dropping the storage may release a Python owner; release_python_owner takes the GIL.
  delete static_cast<Export<Managed>*>(self->manager_ctx);
}

template <class Managed>
void capsule_destructor(PyObject* capsule) {
  const char* name = std::is_same_v<Managed, DLManagedTensor> ? kLegacyName : kVersionedName;
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: the consumer calls the deleter
  // The capsule may die while an exception propagates; the deleter may run Python code.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m->deleter) m->deleter(m);
  PyErr_Restore(type, value, traceback);
}

template <class Managed>
PyObject* make_capsule(const Tensor& t, uint64_t flags) {
  auto* e = new Export<Managed>();
  e->storage = t.storage();
  // A raw pointer into the storage leaves ember: it must not move.
  e->storage->set_resizable(false);
  e->shape = t.sizes().vec();
  e->strides = t.strides().vec();
  DLTensor& d = e->managed.dl_tensor;
  d.data = t.data();  // the first element: byte_offset stays 0, which every consumer reads
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.dim());
  for (const DTypeCode& c : kDTypeCodes)
    if (c.dtype == t.dtype()) d.dtype = {c.code, c.bits, 1};
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &delete_export<Managed>;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version = {kMajor, kMinor};
    e->managed.flags = flags;
  }
  const char* name = std::is_same_v<Managed, DLManagedTensor> ? kLegacyName : kVersionedName;
  PyObject* capsule = PyCapsule_New(&e->managed, name, &capsule_destructor<Managed>);
  if (!capsule) {
    delete e;
    throw PythonError{};
  }
  return capsule;
}

// _to_dlpack(tensor, versioned, copy): the capsule of tensor's data (of a copy when copy).
PyObject* f_to_dlpack(PyObject*, PyObject* args) {
  PyObject* obj;
  int versioned, copy;
  if (!PyArg_ParseTuple(args, "O!pp", &TensorBaseType, &obj, &versioned, &copy)) return nullptr;
  return guarded([&]() -> PyObject* {
    Tensor t = copy ? ops::clone(unwrap(obj), MemoryFormat::Preserve) : unwrap(obj);
    return versioned ? make_capsule<DLManagedTensorVersioned>(t, copy ? kFlagIsCopied : 0)
                     : make_capsule<DLManagedTensor>(t, 0);
  });
}

// ---- import ----

template <class Managed>
void release_managed(void* context, void*, size_t) {
  auto* m = static_cast<Managed*>(context);
  if (m->deleter) m->deleter(m);
}

ScalarType dtype_of(DLDataType t) {
  EMBER_CHECK(t.lanes == 1, Runtime, "from_dlpack(): vector dtypes (lanes=", t.lanes, ") are not supported");
  for (const DTypeCode& c : kDTypeCodes)
    if (c.code == t.code && c.bits == t.bits) return c.dtype;
  fail(ErrorKind::Runtime, "from_dlpack(): unsupported dtype (code ", int(t.code), ", bits ", int(t.bits),
       "); ember supports complex128, complex64, float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8 "
       "and bool");
}

// Checks the DLTensor and makes the sizes and strides ember will use; throws (leaving
// the capsule to its producer) when ember cannot view it.
struct Layout {
  ScalarType dtype;
  Dims sizes, strides;
  char* data;
  size_t nbytes;
};

Layout check_layout(const DLTensor& d) {
  if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost)
    buffer_error("from_dlpack(): the tensor is on DLPack device type " + std::to_string(d.device.device_type) +
                 "; ember reads only CPU memory (kDLCPU = 1, kDLCUDAHost = 3): copy it to the CPU first");
  EMBER_CHECK(d.ndim >= 0 && d.ndim <= kMaxDims, Runtime, "from_dlpack(): invalid ndim ", d.ndim, " in DLTensor");
  EMBER_CHECK(d.ndim == 0 || d.shape, Runtime, "from_dlpack(): DLTensor has ndim ", d.ndim, " but no shape");
  Layout l;
  l.dtype = dtype_of(d.dtype);
  for (int32_t i = 0; i < d.ndim; ++i) l.sizes.push_back(d.shape[i]);
  int64_t numel = checked_numel(l.sizes, "from_dlpack");  // refuses negative sizes and overflow
  if (d.strides) {
    for (int32_t i = 0; i < d.ndim; ++i) {
      // A dimension of one element is never stepped along, nor is any of an empty tensor:
      // such a stride is free, and a negative one becomes 0.
      int64_t s = d.strides[i];
      if ((numel == 0 || l.sizes[i] == 1) && s < 0) s = 0;
      EMBER_CHECK(s >= 0, Runtime, "from_dlpack(): negative strides are not supported (stride ", s, " at dim ", i,
                  "); make a copy first");
      l.strides.push_back(s);
    }
  } else {
    l.strides = contiguous_strides(l.sizes);  // DLPack before 1.2 allowed null for row-major
  }
  const int64_t item = itemsize(l.dtype);
  int64_t nbytes = 0;
  EMBER_CHECK(bytes_needed(l.sizes, l.strides, 0, item, &nbytes), Runtime,
              "from_dlpack(): the tensor's extent overflows (sizes ", sizes_str(l.sizes), ", strides ",
              sizes_str(l.strides), ")");
  if (numel == 0) {
    l.data = nullptr;  // nothing is read: an empty tensor's pointer may be anything
    l.nbytes = 0;
    return l;
  }
  EMBER_CHECK(d.data, Runtime, "from_dlpack(): DLTensor has ", numel, " elements but a null data pointer");
  uintptr_t p = reinterpret_cast<uintptr_t>(d.data);
  EMBER_CHECK(d.byte_offset <= UINTPTR_MAX - p, Runtime, "from_dlpack(): byte_offset overflows the data pointer");
  p += d.byte_offset;
  EMBER_CHECK(p % item == 0, Runtime, "from_dlpack(): the data pointer is not aligned to the element size ", item);
  EMBER_CHECK(static_cast<uint64_t>(nbytes) <= UINTPTR_MAX - p, Runtime,
              "from_dlpack(): the tensor's extent overflows the address space");
  l.data = reinterpret_cast<char*>(p);
  l.nbytes = static_cast<size_t>(nbytes);
  return l;
}

// Views the managed tensor (or copies it when it is read-only: ember tensors are always
// writable, and a copy is the only way never to write through a read-only producer).
template <class Managed>
Tensor consume(PyObject* capsule, Managed* m, const char* used, bool read_only, bool refuse_copy) {
  Layout l = check_layout(m->dl_tensor);
  if (read_only && refuse_copy)
    buffer_error("from_dlpack(): the producer's tensor is read-only and copy=False; ember tensors are always "
                 "writable, so it can only be copied");
  // From here on ember owns the managed tensor: the storage's deleter calls its deleter.
  if (PyCapsule_SetName(capsule, used) < 0) throw PythonError{};
  Storage storage = make_ref<StorageImpl>(l.data, l.nbytes, &release_managed<Managed>, m);
  Tensor t(make_ref<TensorImpl>(std::move(storage), 0, std::move(l.sizes), std::move(l.strides), l.dtype));
  return read_only ? ops::clone(t, MemoryFormat::Preserve) : t;  // the view (and the producer) go with t
}

// _from_dlpack(capsule, copy_read_only=True): a tensor over a DLPack capsule's memory.
PyObject* f_from_dlpack(PyObject*, PyObject* args) {
  PyObject* capsule;
  int copy_read_only = 1;
  if (!PyArg_ParseTuple(args, "O|p", &capsule, &copy_read_only)) return nullptr;
  return guarded([&]() -> PyObject* {
    if (PyCapsule_IsValid(capsule, kVersionedName)) {
      auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
      EMBER_CHECK(m, Runtime, "from_dlpack(): the capsule holds a null pointer");
      if (m->version.major > kMajor)
        buffer_error("from_dlpack(): DLPack version " + std::to_string(m->version.major) + "." +
                     std::to_string(m->version.minor) + " is not supported (ember reads 1.x)");
      return wrap(consume(capsule, m, kVersionedUsed, (m->flags & kFlagReadOnly) != 0, !copy_read_only));
    }
    if (PyCapsule_IsValid(capsule, kLegacyName)) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
      EMBER_CHECK(m, Runtime, "from_dlpack(): the capsule holds a null pointer");
      return wrap(consume(capsule, m, kLegacyUsed, false, false));
    }
    fail(ErrorKind::Runtime, "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
         "only once, so you might have already constructed a tensor from it once.");
  });
}

PyMethodDef dlpack_functions[] = {
    {"_to_dlpack", f_to_dlpack, METH_VARARGS,
     "_to_dlpack(tensor, versioned, copy): a DLPack capsule lending tensor's memory (a copy's when copy)."},
    {"_from_dlpack", f_from_dlpack, METH_VARARGS,
     "_from_dlpack(capsule, copy_read_only=True): a tensor over a DLPack capsule's memory."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_dlpack(PyObject* module) {
  if (PyModule_AddFunctions(module, dlpack_functions) < 0) throw PythonError{};
}

}  // namespace ember::python

// ember._C_cuda: the CUDA device, loaded by ember.cuda on first use (never by `import
// ember`). Importing it reaches _C's core through the capsule ember._C._device_api;
// _register() then fills the CUDA entry of the device table (Note [The device table] in
// core/device.h). The other functions are ember.cuda's: device queries and the caching
// allocator's counters. Device indices arrive resolved (ember.cuda turns None into the
// current device).
#include <Python.h>

#include <climits>
#include <cstdio>

#include "cuda/allocator.cuh"
#include "cuda/device.cuh"

namespace ember::cuda {
namespace {

const DeviceApi* g_api = nullptr;  // _C's, from the capsule

PyObject* raise_cuda(cudaError_t err) {
  cudaGetLastError();
  PyErr_Format(PyExc_RuntimeError, "CUDA error: %s", cudaGetErrorString(err));
  return nullptr;
}

bool int_arg(PyObject* arg, int* out) {
  long value = PyLong_AsLong(arg);
  if (value == -1 && PyErr_Occurred()) return false;
  if (value < INT_MIN || value > INT_MAX) {
    PyErr_Format(PyExc_OverflowError, "device index %ld is out of range", value);
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

// A device whose allocator counters are asked for: one that exists.
bool stats_device(PyObject* arg, int* out) {
  if (!int_arg(arg, out)) return false;
  if (*out < 0 || *out >= device_count() || *out >= kMaxDevices) {
    PyErr_Format(PyExc_RuntimeError, "Invalid device argument %d: did you call init?", *out);
    return false;
  }
  return true;
}

PyObject* register_entry(const DeviceInterface* entry) {
  if (g_api->register_device(static_cast<int>(DeviceType::CUDA), entry) != 0) {
    PyErr_SetString(PyExc_RuntimeError, "ember._C refused the CUDA device entry (device ABI mismatch): rebuild ember");
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* f_register(PyObject*, PyObject*) { return register_entry(device_interface()); }
PyObject* f_register_forked(PyObject*, PyObject*) { return register_entry(forked_device_interface()); }

PyObject* f_device_count(PyObject*, PyObject*) { return PyLong_FromLong(device_count()); }

PyObject* f_current_device(PyObject*, PyObject*) {
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return raise_cuda(err);
  return PyLong_FromLong(device);
}

PyObject* f_set_device(PyObject*, PyObject* arg) {
  int device = 0;
  if (!int_arg(arg, &device)) return nullptr;
  if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return raise_cuda(err);
  Py_RETURN_NONE;
}

PyObject* f_get_device_name(PyObject*, PyObject* arg) {
  int device = 0;
  if (!int_arg(arg, &device)) return nullptr;
  cudaDeviceProp prop;
  if (cudaError_t err = cudaGetDeviceProperties(&prop, device); err != cudaSuccess) return raise_cuda(err);
  return PyUnicode_FromString(prop.name);
}

PyObject* f_get_device_capability(PyObject*, PyObject* arg) {
  int device = 0, major = 0, minor = 0;
  if (!int_arg(arg, &device)) return nullptr;
  cudaError_t err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (err != cudaSuccess) return raise_cuda(err);
  return Py_BuildValue("(ii)", major, minor);
}

PyObject* f_get_device_properties(PyObject*, PyObject* arg) {
  int device = 0;
  if (!int_arg(arg, &device)) return nullptr;
  cudaDeviceProp p;
  if (cudaError_t err = cudaGetDeviceProperties(&p, device); err != cudaSuccess) return raise_cuda(err);
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  // torch's attribute names
  return Py_BuildValue(
      "{s:s,s:i,s:i,s:K,s:i,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:K,s:K,s:K,s:i,s:i}", "name", p.name, "major", p.major,
      "minor", p.minor, "total_memory", static_cast<unsigned long long>(p.totalGlobalMem), "multi_processor_count",
      p.multiProcessorCount, "uuid", uuid, "pci_bus_id", p.pciBusID, "pci_device_id", p.pciDeviceID, "pci_domain_id",
      p.pciDomainID, "L2_cache_size", p.l2CacheSize, "warp_size", p.warpSize, "max_threads_per_multi_processor",
      p.maxThreadsPerMultiProcessor, "regs_per_multiprocessor", p.regsPerMultiprocessor, "shared_memory_per_block",
      static_cast<unsigned long long>(p.sharedMemPerBlock), "shared_memory_per_block_optin",
      static_cast<unsigned long long>(p.sharedMemPerBlockOptin), "shared_memory_per_multiprocessor",
      static_cast<unsigned long long>(p.sharedMemPerMultiprocessor), "is_integrated", p.integrated,
      "is_multi_gpu_board", p.isMultiGpuBoard);
}

PyObject* f_synchronize(PyObject*, PyObject* arg) {
  int device = 0;
  if (!int_arg(arg, &device)) return nullptr;
  cudaError_t err;
  Py_BEGIN_ALLOW_THREADS;
  {
    DeviceGuard guard;
    err = guard.set(device);
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
  }
  Py_END_ALLOW_THREADS;
  if (err != cudaSuccess) return raise_cuda(err);
  Py_RETURN_NONE;
}

PyObject* f_mem_get_info(PyObject*, PyObject* arg) {
  int device = 0;
  if (!int_arg(arg, &device)) return nullptr;
  size_t free_bytes = 0, total_bytes = 0;
  DeviceGuard guard;
  cudaError_t err = guard.set(device);
  if (err == cudaSuccess) err = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (err != cudaSuccess) return raise_cuda(err);
  return Py_BuildValue("(KK)", static_cast<unsigned long long>(free_bytes),
                       static_cast<unsigned long long>(total_bytes));
}

PyObject* f_empty_cache(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS;
  empty_cache();
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

template <size_t MemoryStats::*field>
PyObject* f_stat(PyObject*, PyObject* arg) {
  int device = 0;
  if (!stats_device(arg, &device)) return nullptr;
  return PyLong_FromSize_t(memory_stats(device).*field);
}

PyObject* f_reset_peak_memory_stats(PyObject*, PyObject* arg) {
  int device = 0;
  if (!stats_device(arg, &device)) return nullptr;
  reset_peak_memory_stats(device);
  Py_RETURN_NONE;
}

PyObject* f_caching_allocator_alloc(PyObject*, PyObject* args) {
  Py_ssize_t nbytes = 0;
  int device = -1;
  if (!PyArg_ParseTuple(args, "ni", &nbytes, &device)) return nullptr;
  if (nbytes < 0) {
    PyErr_Format(PyExc_ValueError, "caching_allocator_alloc(): size must be non-negative, got %zd", nbytes);
    return nullptr;
  }
  void* ptr = nullptr;
  int status;
  Py_BEGIN_ALLOW_THREADS;
  status = cached_alloc(device, static_cast<size_t>(nbytes), &ptr);
  Py_END_ALLOW_THREADS;
  if (status != kDeviceOk) {
    PyErr_SetString(PyExc_RuntimeError, last_error());
    return nullptr;
  }
  return PyLong_FromVoidPtr(ptr);
}

PyObject* f_caching_allocator_delete(PyObject*, PyObject* arg) {
  void* ptr = PyLong_AsVoidPtr(arg);
  if (!ptr && PyErr_Occurred()) return nullptr;
  cached_free(-1, ptr, 0);
  Py_RETURN_NONE;
}

PyObject* f_driver_version(PyObject*, PyObject*) {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) cudaGetLastError();  // 0: no driver
  return PyLong_FromLong(version);
}

PyObject* f_runtime_version(PyObject*, PyObject*) {
  int version = 0;
  if (cudaError_t err = cudaRuntimeGetVersion(&version); err != cudaSuccess) return raise_cuda(err);
  return PyLong_FromLong(version);
}

PyMethodDef kFunctions[] = {
    {"_register", f_register, METH_NOARGS, "Fills the CUDA entry of ember._C's device table."},
    {"_register_forked", f_register_forked, METH_NOARGS,
     "In a child forked after CUDA was initialized: fills the entry with one whose calls all fail."},
    {"_device_count", f_device_count, METH_NOARGS, "The number of GPUs (0 without a driver or a GPU)."},
    {"_current_device", f_current_device, METH_NOARGS, "This thread's current device."},
    {"_set_device", f_set_device, METH_O, "_set_device(i): makes GPU i this thread's current device."},
    {"_get_device_name", f_get_device_name, METH_O, "_get_device_name(i): the GPU's name."},
    {"_get_device_capability", f_get_device_capability, METH_O, "_get_device_capability(i) -> (major, minor)."},
    {"_get_device_properties", f_get_device_properties, METH_O,
     "_get_device_properties(i) -> dict of the GPU's properties, under torch's attribute names."},
    {"_synchronize", f_synchronize, METH_O, "_synchronize(i): waits for all work on GPU i."},
    {"_mem_get_info", f_mem_get_info, METH_O, "_mem_get_info(i) -> (free, total) bytes of GPU i, as CUDA sees them."},
    {"_empty_cache", f_empty_cache, METH_NOARGS, "Returns the caching allocator's freed blocks to CUDA."},
    {"_memory_allocated", f_stat<&MemoryStats::allocated>, METH_O, "Bytes in blocks handed out on GPU i."},
    {"_memory_reserved", f_stat<&MemoryStats::reserved>, METH_O, "Bytes the allocator holds from CUDA on GPU i."},
    {"_max_memory_allocated", f_stat<&MemoryStats::peak_allocated>, METH_O, "The peak of _memory_allocated(i)."},
    {"_max_memory_reserved", f_stat<&MemoryStats::peak_reserved>, METH_O, "The peak of _memory_reserved(i)."},
    {"_reset_peak_memory_stats", f_reset_peak_memory_stats, METH_O, "Sets GPU i's peaks to the current values."},
    {"_caching_allocator_alloc", f_caching_allocator_alloc, METH_VARARGS,
     "_caching_allocator_alloc(nbytes, i) -> the address of a block from the caching allocator (i = -1: current)."},
    {"_caching_allocator_delete", f_caching_allocator_delete, METH_O,
     "_caching_allocator_delete(address): returns a block to the caching allocator."},
    {"_driver_version", f_driver_version, METH_NOARGS, "The driver's CUDA version (13000 is 13.0; 0: no driver)."},
    {"_runtime_version", f_runtime_version, METH_NOARGS, "The CUDA runtime ember was linked with (13000 is 13.0)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "ember._C_cuda", "ember's CUDA device (see ember.cuda).", -1, kFunctions};

}  // namespace
}  // namespace ember::cuda

PyMODINIT_FUNC PyInit__C_cuda() {
  using namespace ember::cuda;
  const auto* api = static_cast<const ember::DeviceApi*>(PyCapsule_Import("ember._C._device_api", 0));
  if (!api) return nullptr;
  if (api->abi_version != ember::kDeviceAbiVersion) {
    PyErr_Format(PyExc_ImportError, "ember._C_cuda was built for device ABI %d but ember._C has %d: rebuild ember",
                 ember::kDeviceAbiVersion, api->abi_version);
    return nullptr;
  }
  g_api = api;
  PyObject* module = PyModule_Create(&kModule);
  if (!module) return nullptr;
  // The entry itself, for tests that call it as _C will (through ctypes).
  PyObject* entry = PyCapsule_New(const_cast<ember::DeviceInterface*>(device_interface()),
                                  "ember._C_cuda._device_interface", nullptr);
  if (!entry || PyModule_AddObject(module, "_device_interface", entry) < 0) {
    Py_XDECREF(entry);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

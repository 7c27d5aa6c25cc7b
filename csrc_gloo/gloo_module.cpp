// ember._C_gloo: gloo's collectives over raw memory, for ember.distributed. It knows
// nothing of ember's tensors (no ember header): Python passes addresses, element counts
// and a dtype code of contiguous tensors; every collective runs with the GIL released.
// The rendezvous goes through a Python store object (ember.distributed's TCPStore,
// FileStore, HashStore, PrefixStore), called back with the GIL taken.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <sched.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

namespace {

// ---- the Python store as a gloo store ----------------------------------------------

struct PythonError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Called with the GIL held: turns the pending Python exception into a C++ one whose text
// the binding re-raises (gloo catches nothing, so it reaches connectFullMesh's caller).
[[noreturn]] void throw_python_error() {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    std::string text = "store error";
    if (value) {
        PyObject* s = PyObject_Str(value);
        if (s) {
            const char* c = PyUnicode_AsUTF8(s);
            if (c) text = c;
            Py_DECREF(s);
        }
    }
    PyErr_Clear();
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    throw PythonError(text);
}

class PyStore : public gloo::rendezvous::Store {
public:
    explicit PyStore(PyObject* store) : store_(store) { Py_INCREF(store_); }
    ~PyStore() override {
        PyGILState_STATE g = PyGILState_Ensure();
        Py_DECREF(store_);
        PyGILState_Release(g);
    }

    void set(const std::string& key, const std::vector<char>& data) override {
        PyGILState_STATE g = PyGILState_Ensure();
        PyObject* r = PyObject_CallMethod(store_, "set", "s#y#", key.data(), (Py_ssize_t)key.size(),
                                          data.empty() ? "" : data.data(),  // "y#" turns NULL into None
                                          (Py_ssize_t)data.size());
        finish(r, g);
    }

    std::vector<char> get(const std::string& key) override {
        PyGILState_STATE g = PyGILState_Ensure();
        PyObject* r = PyObject_CallMethod(store_, "get", "s#", key.data(), (Py_ssize_t)key.size());
        if (!r || !PyBytes_Check(r)) {
            if (r) {
                Py_DECREF(r);
                PyErr_SetString(PyExc_TypeError, "store.get must return bytes");
            }
            try {
                throw_python_error();
            } catch (...) {
                PyGILState_Release(g);
                throw;
            }
        }
        std::vector<char> out(PyBytes_AS_STRING(r), PyBytes_AS_STRING(r) + PyBytes_GET_SIZE(r));
        Py_DECREF(r);
        PyGILState_Release(g);
        return out;
    }

    void wait(const std::vector<std::string>& keys) override { wait(keys, kDefaultTimeout); }

    void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
        // the Python store's own timeout applies
        PyGILState_STATE g = PyGILState_Ensure();
        PyObject* list = PyList_New((Py_ssize_t)keys.size());
        for (size_t i = 0; list && i < keys.size(); i++)
            PyList_SET_ITEM(list, i, PyUnicode_FromStringAndSize(keys[i].data(), (Py_ssize_t)keys[i].size()));
        PyObject* r = list ? PyObject_CallMethod(store_, "wait", "O", list) : nullptr;
        Py_XDECREF(list);
        finish(r, g);
    }

private:
    void finish(PyObject* r, PyGILState_STATE g) {
        if (!r) {
            try {
                throw_python_error();
            } catch (...) {
                PyGILState_Release(g);
                throw;
            }
        }
        Py_DECREF(r);
        PyGILState_Release(g);
    }
    PyObject* store_;
};

// ---- contexts ------------------------------------------------------------------------

struct Group {
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
};

const char* kCapsule = "ember._C_gloo.Context";

Group* group_of(PyObject* capsule) {
    return static_cast<Group*>(PyCapsule_GetPointer(capsule, kCapsule));
}

void free_group(PyObject* capsule) {
    Group* g = group_of(capsule);
    if (!g) {
        PyErr_Clear();
        return;
    }
#if PY_VERSION_HEX >= 0x030D0000
    if (Py_IsFinalizing()) return;
#else
    if (_Py_IsFinalizing()) return;
#endif
    // (at interpreter exit a daemon thread may still be inside a collective on this
    // context: it is left to the process's end rather than freed under that thread)
    Py_BEGIN_ALLOW_THREADS  // the device's loop thread is joined here
    delete g;
    Py_END_ALLOW_THREADS
}

// Scheduling. gloo's TCP event-loop thread (one per device) handles a readable socket only
// when it can try_lock the pair, and epoll reports the socket again at once when it cannot:
// while the collective's thread holds the pair (its writes wake the peer's threads), the
// loop thread spins. When a woken thread (this process's loop thread, or on loopback the
// peer's) preempts the lock holder on its CPU, the spinner keeps that CPU until the
// scheduler's tick: measured with perf between 2 local processes on 2 cores, a 4 KiB
// all_reduce then took ~4 ms (HZ=250) instead of ~0.3 ms, for runs of thousands of calls.
// SCHED_BATCH (same nice weight, no privilege needed) keeps a woken thread from preempting
// the running one, so the holder leaves its critical section first. The calling thread
// switches to it for the duration of each call (when it runs SCHED_OTHER, the default), and
// the loop thread, created inside new_context's call, inherits it for good.
// (sched_* with pid 0 act on the calling thread; pthread_getschedparam could answer from
// glibc's cache, stale after a policy set by sched_setscheduler, e.g. Python's os module.)
class BatchPolicy {
public:
    BatchPolicy() {
        if (sched_getscheduler(0) != SCHED_OTHER || sched_getparam(0, &param_) != 0) return;
        sched_param batch{};
        switched_ = sched_setscheduler(0, SCHED_BATCH, &batch) == 0;
    }
    ~BatchPolicy() {
        if (switched_) sched_setscheduler(0, SCHED_OTHER, &param_);
    }
    BatchPolicy(const BatchPolicy&) = delete;
    BatchPolicy& operator=(const BatchPolicy&) = delete;

private:
    sched_param param_{};
    bool switched_ = false;
};

// Runs fn with the GIL released (and the thread SCHED_BATCH, above); a C++ exception
// becomes a RuntimeError.
template <typename F>
PyObject* run(F&& fn) {
    std::string error;
    Py_BEGIN_ALLOW_THREADS
    {
        BatchPolicy batch;  // back to the thread's own policy before it waits for the GIL
        try {
            fn();
        } catch (const std::exception& e) {
            error = e.what();
            if (error.empty()) error = "gloo error";
        } catch (...) {
            error = "gloo error (unknown exception)";
        }
    }
    Py_END_ALLOW_THREADS
    if (!error.empty()) {
        PyErr_SetString(PyExc_RuntimeError, error.c_str());
        return nullptr;
    }
    Py_RETURN_NONE;
}

PyObject* new_context(PyObject*, PyObject* args) {
    PyObject* store;
    int rank, size;
    long long timeout_ms;
    const char* hostname;
    if (!PyArg_ParseTuple(args, "OiiLs", &store, &rank, &size, &timeout_ms, &hostname)) return nullptr;
    auto group = std::make_unique<Group>();
    auto py_store = std::make_shared<PyStore>(store);
    std::string host = hostname;
    PyObject* ok = run([&] {
        gloo::transport::tcp::attr attr;
        attr.hostname = host;
        group->device = gloo::transport::tcp::CreateDevice(attr);  // its loop thread inherits SCHED_BATCH
        group->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        group->context->setTimeout(std::chrono::milliseconds(timeout_ms));
        group->context->connectFullMesh(*py_store, group->device);
    });
    if (!ok) return nullptr;
    Py_DECREF(ok);
    return PyCapsule_New(group.release(), kCapsule, free_group);
}

PyObject* set_timeout(PyObject*, PyObject* args) {
    PyObject* cap;
    long long timeout_ms;
    if (!PyArg_ParseTuple(args, "OL", &cap, &timeout_ms)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    g->context->setTimeout(std::chrono::milliseconds(timeout_ms));
    Py_RETURN_NONE;
}

// ---- element types and reductions ------------------------------------------------------

// dtype codes (ember.distributed._DTYPE_CODES): 0 bool, 1 uint8, 2 int8, 3 int16, 4 int32,
// 5 int64, 6 float16 (gloo's), 7 float32, 8 float64. bfloat16 is staged through float32 in
// Python; float16 too for SUM/PRODUCT (so the result is one rounding of a float32 value).
enum Op { SUM = 0, PRODUCT = 1, MIN = 2, MAX = 3, BAND = 4, BOR = 5, BXOR = 6 };

template <typename T>
void band(void* c, const void* a, const void* b, size_t n) {
    for (size_t i = 0; i < n; i++) ((T*)c)[i] = ((const T*)a)[i] & ((const T*)b)[i];
}
template <typename T>
void bor(void* c, const void* a, const void* b, size_t n) {
    for (size_t i = 0; i < n; i++) ((T*)c)[i] = ((const T*)a)[i] | ((const T*)b)[i];
}
template <typename T>
void bxor(void* c, const void* a, const void* b, size_t n) {
    for (size_t i = 0; i < n; i++) ((T*)c)[i] = ((const T*)a)[i] ^ ((const T*)b)[i];
}
// gloo's min/max use < and >, which do not propagate NaN; torch's reductions do
template <typename T>
void fmin_nan(void* c, const void* a, const void* b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        T x = ((const T*)a)[i], y = ((const T*)b)[i];
        ((T*)c)[i] = std::isnan(x) ? x : std::isnan(y) ? y : (y < x ? y : x);
    }
}
template <typename T>
void fmax_nan(void* c, const void* a, const void* b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        T x = ((const T*)a)[i], y = ((const T*)b)[i];
        ((T*)c)[i] = std::isnan(x) ? x : std::isnan(y) ? y : (y > x ? y : x);
    }
}

using Func = gloo::AllreduceOptions::Func;
using RawFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
Func int_func(int op) {
    switch (op) {
        case SUM: return Func(static_cast<RawFn>(&gloo::sum<T>));
        case PRODUCT: return Func(static_cast<RawFn>(&gloo::product<T>));
        case MIN: return Func(static_cast<RawFn>(&gloo::min<T>));
        case MAX: return Func(static_cast<RawFn>(&gloo::max<T>));
        case BAND: return Func(&band<T>);
        case BOR: return Func(&bor<T>);
        case BXOR: return Func(&bxor<T>);
    }
    return nullptr;
}

template <typename T>
Func float_func(int op) {
    switch (op) {
        case SUM: return Func(static_cast<RawFn>(&gloo::sum<T>));
        case PRODUCT: return Func(static_cast<RawFn>(&gloo::product<T>));
        case MIN: return Func(&fmin_nan<T>);
        case MAX: return Func(&fmax_nan<T>);
    }
    return nullptr;
}

Func half_func(int op) {
    switch (op) {
        case SUM: return Func(static_cast<RawFn>(&gloo::sum<gloo::float16>));
        case PRODUCT: return Func(static_cast<RawFn>(&gloo::product<gloo::float16>));
        case MIN: return Func(static_cast<RawFn>(&gloo::min<gloo::float16>));
        case MAX: return Func(static_cast<RawFn>(&gloo::max<gloo::float16>));
    }
    return nullptr;
}

// bool: any/all, as torch's reductions of bool tensors give
Func bool_func(int op) {
    switch (op) {
        case SUM: case MAX: case BOR: return Func(static_cast<RawFn>(&gloo::max<uint8_t>));
        case PRODUCT: case MIN: case BAND: return Func(static_cast<RawFn>(&gloo::min<uint8_t>));
        case BXOR: return Func(&bxor<uint8_t>);
    }
    return nullptr;
}

Func reduce_func(int dtype, int op) {
    switch (dtype) {
        case 0: return bool_func(op);
        case 1: return int_func<uint8_t>(op);
        case 2: return int_func<int8_t>(op);
        case 3: return int_func<int16_t>(op);
        case 4: return int_func<int32_t>(op);
        case 5: return int_func<int64_t>(op);
        case 6: return half_func(op);
        case 7: return float_func<float>(op);
        case 8: return float_func<double>(op);
    }
    return nullptr;
}

size_t element_size(int dtype) {
    static const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 4, 8};
    return dtype >= 0 && dtype <= 8 ? sizes[dtype] : 0;
}

// The options' setInput<T> only record sizeof(T) and a byte count, so one byte-sized or
// element-sized stand-in type per width is all the templates need.
template <size_t N>
struct alignas(N) Bytes {
    char b[N];
};

template <typename F>
bool with_width(size_t width, F&& f) {
    switch (width) {
        case 1: f(Bytes<1>{}); return true;
        case 2: f(Bytes<2>{}); return true;
        case 4: f(Bytes<4>{}); return true;
        case 8: f(Bytes<8>{}); return true;
    }
    return false;
}

void* ptr(unsigned long long p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// ---- tags that describe the call --------------------------------------------------------
// gloo's TCP pair aborts the process (an exception on its event-loop thread) when a message
// is longer than the buffer posted for it, so ranks whose collectives disagree in size
// would crash. The gloo tag of each collective is therefore Python's sequence number mixed
// with what the call is (kind, dtype, count, root, op): ranks that disagree use different
// slots, their messages never meet a buffer of another size, and the group's timeout ends
// the wait with an error. (A first version agreed on a header collective before each one;
// that cost up to 8 ms per collective between 2 local processes.)

enum Kind { K_ALLREDUCE = 1, K_REDUCE, K_BROADCAST, K_ALLGATHER, K_GATHER, K_SCATTER, K_ALLTOALL, K_BARRIER };

uint32_t mixed_tag(uint32_t seq, int64_t kind, int64_t dtype, int64_t count, int64_t root, int64_t op) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ seq;
    for (int64_t v : {kind, dtype, count, root, op}) {  // splitmix64 steps
        h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    return static_cast<uint32_t>(h);
}

// ---- collectives ---------------------------------------------------------------------
// Every pointer is an address of a contiguous buffer Python keeps alive for the call.

PyObject* allreduce(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long p;
    Py_ssize_t n;
    int dtype, op;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKniiI", &cap, &p, &n, &dtype, &op, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    Func fn = reduce_func(dtype, op);
    if (!fn) return PyErr_Format(PyExc_ValueError, "unsupported dtype code %d / op %d", dtype, op);
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_ALLREDUCE, dtype, n, -1, op);
        if (n == 0) return;
        gloo::AllreduceOptions opts(g->context);
        with_width(element_size(dtype), [&](auto t) {
            using T = decltype(t);
            opts.setOutput<T>(static_cast<T*>(ptr(p)), n);
        });
        opts.setReduceFunction(fn);
        opts.setTag(t);
        gloo::allreduce(opts);
    });
}

PyObject* reduce(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long in, out;
    Py_ssize_t n;
    int dtype, op, root;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKKniiiI", &cap, &in, &out, &n, &dtype, &op, &root, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    Func fn = reduce_func(dtype, op);
    if (!fn) return PyErr_Format(PyExc_ValueError, "unsupported dtype code %d / op %d", dtype, op);
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_REDUCE, dtype, n, root, op);
        if (n == 0) return;
        gloo::ReduceOptions opts(g->context);
        with_width(element_size(dtype), [&](auto t) {
            using T = decltype(t);
            opts.setInput<T>(static_cast<T*>(ptr(in)), n);
            opts.setOutput<T>(static_cast<T*>(ptr(out)), n);
        });
        opts.setReduceFunction(fn);
        opts.setRoot(root);
        opts.setTag(t);
        gloo::reduce(opts);
    });
}

// Byte-level collectives: the element type does not matter to them, so Python passes
// byte counts (a multiple of width, the element size, which keeps gloo's alignment).

PyObject* broadcast(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long p;
    Py_ssize_t nbytes;
    int root;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKniI", &cap, &p, &nbytes, &root, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_BROADCAST, -1, nbytes, root, -1);
        if (nbytes == 0) return;
        gloo::BroadcastOptions opts(g->context);
        opts.setOutput<char>(static_cast<char*>(ptr(p)), nbytes);
        opts.setRoot(root);
        opts.setTag(t);
        gloo::broadcast(opts);
    });
}

PyObject* allgather(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long in, out;
    Py_ssize_t nbytes;  // per rank
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKKnI", &cap, &in, &out, &nbytes, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_ALLGATHER, -1, nbytes, -1, -1);
        if (nbytes == 0) return;
        gloo::AllgatherOptions opts(g->context);
        opts.setInput<char>(static_cast<char*>(ptr(in)), nbytes);
        opts.setOutput<char>(static_cast<char*>(ptr(out)), nbytes * g->context->size);
        opts.setTag(t);
        gloo::allgather(opts);
    });
}

PyObject* gather(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long in, out;
    Py_ssize_t nbytes;  // per rank
    int root;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKKniI", &cap, &in, &out, &nbytes, &root, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_GATHER, -1, nbytes, root, -1);
        if (nbytes == 0) return;
        gloo::GatherOptions opts(g->context);
        opts.setInput<char>(static_cast<char*>(ptr(in)), nbytes);
        if (g->context->rank == root) opts.setOutput<char>(static_cast<char*>(ptr(out)), nbytes * g->context->size);
        opts.setRoot(root);
        opts.setTag(t);
        gloo::gather(opts);
    });
}

PyObject* scatter(PyObject*, PyObject* args) {
    PyObject *cap, *ins;
    unsigned long long out;
    Py_ssize_t nbytes;
    int root;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OOKniI", &cap, &ins, &out, &nbytes, &root, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    std::vector<char*> in_ptrs;
    PyObject* seq = PySequence_Fast(ins, "scatter: inputs must be a sequence of addresses");
    if (!seq) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        unsigned long long a = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            return nullptr;
        }
        in_ptrs.push_back(static_cast<char*>(ptr(a)));
    }
    Py_DECREF(seq);
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_SCATTER, -1, nbytes, root, -1);
        if (nbytes == 0) return;
        gloo::ScatterOptions opts(g->context);
        if (g->context->rank == root) opts.setInputs<char>(in_ptrs, nbytes);
        opts.setOutput<char>(static_cast<char*>(ptr(out)), nbytes);
        opts.setRoot(root);
        opts.setTag(t);
        gloo::scatter(opts);
    });
}

std::vector<int64_t> int64_list(PyObject* obj) {
    std::vector<int64_t> v;
    PyObject* seq = PySequence_Fast(obj, "expected a sequence of ints");
    if (!seq) return v;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        v.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i)));
        if (PyErr_Occurred()) break;
    }
    Py_DECREF(seq);
    return v;
}

// all_to_all with per-rank byte counts (equal splits are the special case)
PyObject* alltoallv(PyObject*, PyObject* args) {
    PyObject *cap, *in_counts_obj, *out_counts_obj;
    unsigned long long in, out;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKOKOI", &cap, &in, &in_counts_obj, &out, &out_counts_obj, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    std::vector<int64_t> in_counts = int64_list(in_counts_obj);
    if (PyErr_Occurred()) return nullptr;
    std::vector<int64_t> out_counts = int64_list(out_counts_obj);
    if (PyErr_Occurred()) return nullptr;
    // gloo's alltoallv creates unbound buffers even for zero bytes; give them a byte of room
    static char dummy[8];
    void* in_p = in ? ptr(in) : dummy;
    void* out_p = out ? ptr(out) : dummy;
    if ((int)in_counts.size() != g->context->size || (int)out_counts.size() != g->context->size)
        return PyErr_Format(PyExc_ValueError, "alltoallv: one count per rank expected");
    return run([&] {
        // every rank checks every pair of split sizes (rows summed: an all-gather)
        const uint32_t t = mixed_tag(tag, K_ALLTOALL, -1, g->context->size, -1, -1);
        const int size = g->context->size, me = g->context->rank;
        std::vector<int64_t> all(2 * size * size, 0);
        std::copy(in_counts.begin(), in_counts.end(), all.begin() + 2 * size * me);
        std::copy(out_counts.begin(), out_counts.end(), all.begin() + 2 * size * me + size);
        gloo::AllreduceOptions check(g->context);
        check.setOutput<int64_t>(all.data(), all.size());
        check.setReduceFunction(Func(static_cast<RawFn>(&gloo::sum<int64_t>)));
        check.setTag(t ^ 1u);
        gloo::allreduce(check);
        for (int i = 0; i < size; i++)
            for (int j = 0; j < size; j++) {
                int64_t sent = all[2 * size * i + j], expected = all[2 * size * j + size + i];
                if (sent != expected)
                    throw std::runtime_error("all_to_all split sizes disagree: rank " + std::to_string(i) + " sends " +
                                             std::to_string(sent) + " bytes to rank " + std::to_string(j) +
                                             ", which expects " + std::to_string(expected) + " (seen from rank " +
                                             std::to_string(me) + ")");
            }
        gloo::AlltoallvOptions opts(g->context);
        opts.setInput<char>(static_cast<char*>(in_p), in_counts);
        opts.setOutput<char>(static_cast<char*>(out_p), out_counts);
        opts.setTag(t);
        gloo::alltoallv(opts);
    });
}

PyObject* barrier(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OI", &cap, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    return run([&] {
        const uint32_t t = mixed_tag(tag, K_BARRIER, -1, 0, -1, -1);
        gloo::BarrierOptions opts(g->context);
        opts.setTag(t);
        gloo::barrier(opts);
    });
}

// point to point: the slot keeps user tags apart from the collectives' (whose slots
// carry a collective prefix in the top byte)
// the user's tag in the low 32 bits, the message's length mixed into the 24 above (so a
// receiver whose buffer has another size never meets the message: see mixed_tag)
uint64_t p2p_slot(unsigned int tag, int64_t nbytes) {
    return (uint64_t(0xe0) << 56) | (uint64_t(mixed_tag(0, nbytes, 0, 0, 0, 0) & 0xffffff) << 32) | tag;
}

PyObject* send(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long p;
    Py_ssize_t nbytes;
    int dst;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKniI", &cap, &p, &nbytes, &dst, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    static char dummy[8];
    void* buf = nbytes ? ptr(p) : dummy;
    return run([&] {
        auto ub = g->context->createUnboundBuffer(buf, nbytes);
        ub->send(dst, p2p_slot(tag, nbytes));
        ub->waitSend(g->context->getTimeout());
    });
}

// src < 0: from any rank; returns the rank the data came from
PyObject* recv(PyObject*, PyObject* args) {
    PyObject* cap;
    unsigned long long p;
    Py_ssize_t nbytes;
    int src;
    unsigned int tag;
    if (!PyArg_ParseTuple(args, "OKniI", &cap, &p, &nbytes, &src, &tag)) return nullptr;
    Group* g = group_of(cap);
    if (!g) return nullptr;
    static char dummy[8];
    void* buf = nbytes ? ptr(p) : dummy;
    int from = -1;
    PyObject* r = run([&] {
        auto ub = g->context->createUnboundBuffer(buf, nbytes);
        if (src >= 0) {
            ub->recv(src, p2p_slot(tag, nbytes));
        } else {
            std::vector<int> all;
            for (int i = 0; i < g->context->size; i++)
                if (i != g->context->rank) all.push_back(i);
            ub->recv(all, p2p_slot(tag, nbytes));
        }
        ub->waitRecv(&from, g->context->getTimeout());
    });
    if (!r) return nullptr;
    Py_DECREF(r);
    return PyLong_FromLong(from);
}

PyMethodDef methods[] = {
    {"new_context", new_context, METH_VARARGS,
     "new_context(store, rank, size, timeout_ms, hostname) -> context: connects every rank over TCP"},
    {"set_timeout", set_timeout, METH_VARARGS, "set_timeout(context, timeout_ms)"},
    {"allreduce", allreduce, METH_VARARGS, "allreduce(context, ptr, numel, dtype, op, tag): in place"},
    {"reduce", reduce, METH_VARARGS, "reduce(context, in, out, numel, dtype, op, root, tag)"},
    {"broadcast", broadcast, METH_VARARGS, "broadcast(context, ptr, nbytes, root, tag)"},
    {"allgather", allgather, METH_VARARGS, "allgather(context, in, out, nbytes_per_rank, tag)"},
    {"gather", gather, METH_VARARGS, "gather(context, in, out, nbytes_per_rank, root, tag)"},
    {"scatter", scatter, METH_VARARGS, "scatter(context, [in per rank], out, nbytes, root, tag)"},
    {"alltoallv", alltoallv, METH_VARARGS, "alltoallv(context, in, in_bytes_per_rank, out, out_bytes_per_rank, tag)"},
    {"barrier", barrier, METH_VARARGS, "barrier(context, tag)"},
    {"send", send, METH_VARARGS, "send(context, ptr, nbytes, dst, tag)"},
    {"recv", recv, METH_VARARGS, "recv(context, ptr, nbytes, src, tag) -> source rank (src -1: any)"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "ember._C_gloo", "gloo collectives for ember.distributed", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__C_gloo() { return PyModule_Create(&module); }

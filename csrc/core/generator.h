// Random number generation: one GeneratorImpl per ember.Generator, plus the default one.
// xoshiro256** seeded through splitmix64; streams are reproducible from the seed, not
// equal to torch's (DESIGN.md allows that).
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>
#include "core/refcount.h"

namespace ember {

class GeneratorImpl : public RefCounted {
 public:
  explicit GeneratorImpl(uint64_t seed = 67280421310721ull) { manual_seed(seed); }

  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }
  uint64_t seed();  // reseeds from the system's entropy and returns the new seed

  // The whole state as bytes (get_state/set_state); set_state checks the length.
  std::vector<uint8_t> get_state() const;
  void set_state(const uint8_t* bytes, size_t n);

  // Callers lock mutex() around a run of draws so that a tensor is filled from one
  // contiguous piece of the stream.
  std::mutex& mutex() { return mutex_; }
  uint64_t next_u64() {  // xoshiro256**; inline: kernels call it once per element
    auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double next_double() { return (next_u64() >> 11) * 0x1.0p-53; }       // [0, 1)
  float next_float() { return (next_u64() >> 40) * 0x1.0p-24f; }        // [0, 1)
  uint64_t next_below(uint64_t n);  // uniform in [0, n), unbiased; n > 0
  double next_normal();             // standard normal (Box-Muller, one value kept)

  void* pyobj = nullptr;  // see Note [One Python object per native object]

 private:
  uint64_t seed_ = 0;
  uint64_t s_[4] = {};
  double spare_normal_ = 0;
  bool has_spare_ = false;
  std::mutex mutex_;
};

using Generator = Ref<GeneratorImpl>;
GeneratorImpl& default_generator();
// The generator an op draws from: the given one, or the default.
inline GeneratorImpl& generator_or_default(GeneratorImpl* g) { return g ? *g : default_generator(); }

}  // namespace ember

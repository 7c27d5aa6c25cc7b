#include "core/generator.h"

#include <cmath>
#include <cstring>
#include <random>
#include "core/error.h"

namespace ember {
namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr uint32_t kStateMagic = 0x454d4252;  // "EMBR": refuses states from elsewhere
struct PackedState {
  uint32_t magic;
  uint32_t has_spare;
  uint64_t seed;
  uint64_t s[4];
  double spare;
};
}  // namespace

void GeneratorImpl::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  uint64_t x = seed;
  for (uint64_t& w : s_) w = splitmix64(x);
  has_spare_ = false;
}

uint64_t GeneratorImpl::seed() {
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ rd();
  manual_seed(s);
  return s;
}

std::vector<uint8_t> GeneratorImpl::get_state() const {
  PackedState p{kStateMagic, has_spare_, seed_, {s_[0], s_[1], s_[2], s_[3]}, spare_normal_};
  std::vector<uint8_t> out(sizeof p);
  std::memcpy(out.data(), &p, sizeof p);
  return out;
}

void GeneratorImpl::set_state(const uint8_t* bytes, size_t n) {
  PackedState p;
  EMBER_CHECK(n == sizeof p, Runtime, "set_state(): expected a ByteTensor of ", sizeof p,
              " bytes (from get_state()), got ", n);
  std::memcpy(&p, bytes, sizeof p);
  EMBER_CHECK(p.magic == kStateMagic, Runtime, "set_state(): not a state from ember's get_state()");
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = p.seed;
  std::memcpy(s_, p.s, sizeof s_);
  has_spare_ = p.has_spare != 0;
  spare_normal_ = p.spare;
}

uint64_t GeneratorImpl::next_below(uint64_t n) {
  // Lemire's multiply-and-reject: unbiased without a division in the common case.
  unsigned __int128 m = (unsigned __int128)next_u64() * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      m = (unsigned __int128)next_u64() * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double GeneratorImpl::next_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  double u1 = 1.0 - next_double();  // (0, 1]: log stays finite
  double u2 = next_double();
  double r = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = r * std::sin(2 * M_PI * u2);
  has_spare_ = true;
  return r * std::cos(2 * M_PI * u2);
}

GeneratorImpl& default_generator() {
  static Generator g = make_ref<GeneratorImpl>();
  return *g;
}

}  // namespace ember

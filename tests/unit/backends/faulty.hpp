#pragma once
// A deliberately faulty backend, for tests of isolation and of the oracle only: the reference
// interpreter whose kernel for one layer class misbehaves in a chosen way.
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <thread>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/layers/all.hpp>

namespace test {

enum class fault {
    segfault, abort, hang, nan, wrong_value, memory, error,
    small_error,  // every output x becomes x + 1e-3 (1 + |x|): a zero is no longer a zero
    leak,         // 1 MiB allocated, written and never freed each time the layer runs
    slow,         // 20 % more time: the kernel's own time again, a fifth of it, spent spinning
};

/// The reference interpreter, named `name`, with the kernel of `layer` replaced by a faulty one.
inline memo::reference::interpreter faulty_backend(fault f, std::string layer, std::string name = "faulty") {
    memo::reference::interpreter b(std::nullopt, std::move(name));
    auto install = [&]<class T>(std::type_identity<T>) {
        auto& table = b.kernels<T>();
        const auto* original = table.find(layer);
        if (!original) return;
        memo::reference::kernel<T> good = *original;
        table.set(memo::default_registry().at(layer).name,  // a name that outlives this call
                  [good, f](const memo::node& n, std::span<const memo::reference::array<T>> in,
                            std::span<const memo::reference::array<T>> w) -> memo::expected<memo::reference::array<T>> {
                      switch (f) {
                          case fault::segfault: std::raise(SIGSEGV); break;
                          case fault::abort: std::abort();
                          case fault::hang: for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
                          case fault::memory: {
                              // Grows until the worker is killed for it.
                              for (std::vector<std::vector<char>> hog;;) hog.emplace_back(64 << 20, 1);
                          }
                          case fault::error: return memo::fail("planted error");
                          default: break;
                      }
                      const auto start = std::chrono::steady_clock::now();
                      auto out = good(n, in, w);
                      if (!out) return out;
                      if (f == fault::slow) {
                          const auto took = std::chrono::steady_clock::now() - start;
                          for (const auto until = std::chrono::steady_clock::now() + took / 5; std::chrono::steady_clock::now() < until;) {
                          }
                      }
                      if (f == fault::leak) {
                          static std::vector<char*> kept;  // never freed: the worker's memory grows run after run
                          kept.push_back(new char[1 << 20]);
                          std::memset(kept.back(), 1, 1 << 20);
                      }
                      if (f == fault::small_error)
                          for (auto& x : out->data) x = T(static_cast<float>(x) + 1e-3f * (1 + std::abs(static_cast<float>(x))));
                      if (f == fault::nan) (*out)[0] = T(std::numeric_limits<float>::quiet_NaN());
                      if (f == fault::wrong_value)
                          for (auto& x : out->data) x = T(static_cast<float>(x) * 1.5f + 0.25f);
                      return out;
                  });
    };
    install(std::type_identity<Eigen::half>{});
    install(std::type_identity<Eigen::bfloat16>{});
    install(std::type_identity<float>{});
    install(std::type_identity<double>{});
    return b;
}

}  // namespace test

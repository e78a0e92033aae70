#pragma once
// A deliberately faulty backend, for tests of isolation and of the oracle only: the reference
// interpreter whose kernel for one layer class misbehaves in a chosen way.
#include <csignal>
#include <cstdlib>
#include <thread>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/layers/all.hpp>

namespace test {

enum class fault { segfault, abort, hang, nan, wrong_value, memory, error };

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
                      auto out = good(n, in, w);
                      if (!out) return out;
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

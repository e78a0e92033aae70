#pragma once
// A deliberately faulty backend, for tests of isolation and of the oracle only: the reference
// interpreter whose kernel for one layer class misbehaves in a chosen way.
//
// The first faults are loud (a death, a hang, NaN, every value scaled). The last five are small but
// real: each faulty kernel still computes its layer, wrong in the one way a library has been, and
// only where that way matters (planted_faults_test.cpp shows the oracle catches and localises them).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/layers/all.hpp>

namespace test {

enum class fault {
    segfault,
    abort,
    hang,
    nan,
    wrong_value,
    memory,
    error,
    small_error,  // every output x becomes x + 1e-3 (1 + |x|): a zero is no longer a zero
    leak,         // 1 MiB allocated, written and never freed each time the layer runs
    slow,         // 20 % more time: the kernel's own time again, a fifth of it, spent spinning
    unwritten,    // the output read from memory just allocated and never written
    // Small but real (planted_faults_test.cpp):
    conv_shift,           // Conv1D/2D/3D: the output one position off along the first spatial axis
                          // (out[i] = y[i + 1], the last position repeated), as a kernel whose
                          // output index is off by one
    pool_counts_padding,  // AveragePooling1D/2D/3D: the divisor counts the padded zeros of a window
                          // that overlaps the edge (count_include_pad), which only 'same' has
    softmax_axis,         // Softmax: normalised over axis 1 whatever the node's axis (a
                          // channels-first habit); the same where axis 1 is the node's axis
    gru_gates_swapped,    // GRU: Keras' gate order z, r, h read as r, z, h, so the update and reset
                          // gates exchange their weights (kernel, recurrent kernel and bias)
    bias_twice,           // Dense, Conv*, DepthwiseConv*, SeparableConv*: the bias (the node's last
                          // weight, with use_bias) added twice; the same where the bias is zero
};

/// The fault's name, as a test instance is called.
constexpr std::string_view name_of(fault f) noexcept {
    constexpr std::string_view names[] = {"segfault",
                                          "abort",
                                          "hang",
                                          "nan",
                                          "wrong_value",
                                          "memory",
                                          "error",
                                          "small_error",
                                          "leak",
                                          "slow",
                                          "unwritten",
                                          "conv_shift",
                                          "pool_counts_padding",
                                          "softmax_axis",
                                          "gru_gates_swapped",
                                          "bias_twice"};
    return names[static_cast<int>(f)];
}

/// Whether f is one of the small, real faults (planted by planted_kernel below).
constexpr bool is_planted(fault f) noexcept { return f >= fault::conv_shift; }

namespace detail {

using memo::reference::array;

/// y with every slice along `axis` moved one position back: y[i] = y[i + 1], the last kept.
template <class T>
array<T> shifted_back(array<T> y, int axis) {
    const std::int64_t len = y.dim(axis), inner = y.strides()[static_cast<std::size_t>(axis)], outer = y.size() / std::max<std::int64_t>(1, len * inner);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i + 1 < len; ++i)
            for (std::int64_t k = 0; k < inner; ++k) y[(o * len + i) * inner + k] = y[(o * len + i + 1) * inner + k];
    return y;
}

/// An average pooling's output y (the mean over the window's real elements), divided instead by
/// the window's full size: y * count / taps at every output position.
template <class T>
array<T> counting_padding(array<T> y, const memo::node& n, const array<T>& x) {
    using A = memo::reference::acc_t<T>;
    const auto g = memo::reference::detail::conv::prepare(n, x, "pool_size");
    const std::int64_t C = g.channels, P = g.w.out_volume(), taps = g.w.taps();
    std::vector<std::int64_t> count(static_cast<std::size_t>(P), 0);
    g.w.positions([&](std::int64_t o, const memo::reference::detail::conv::axes& at) {
        g.w.taps_of(at, [&](std::int64_t, std::int64_t) { ++count[static_cast<std::size_t>(o)]; });
    });
    for (std::int64_t b = 0; b < g.batch; ++b)
        for (std::int64_t o = 0; o < P; ++o) {
            const std::int64_t k = count[static_cast<std::size_t>(o)];
            if (k == taps) continue;
            for (std::int64_t c = 0; c < C; ++c) {
                T& v = y[g.channels_first ? (b * C + c) * P + o : (b * P + o) * C + c];
                v = static_cast<T>(static_cast<A>(v) * static_cast<A>(k) / static_cast<A>(taps));
            }
        }
    return y;
}

/// The five small faults: `good` run on a wrong node or wrong weights, or its output moved.
template <class T>
memo::expected<array<T>> planted_kernel(fault f, const memo::reference::kernel_in_context<T>& original, const memo::reference::kernel_context& c,
                                        std::span<const array<T>> in, std::span<const array<T>> w) {
    const memo::node& n = c.n;
    auto good = [&](const memo::node& node, std::span<const array<T>> x, std::span<const array<T>> ws) {
        return original(memo::reference::kernel_context{node, c.m, c.index, c.type}, x, ws);
    };
    using A = memo::reference::acc_t<T>;
    const memo::reference::params p{n};
    switch (f) {
        case fault::conv_shift: {
            auto out = good(n, in, w);
            if (!out) return out;
            return shifted_back(std::move(*out), p.channels_first() ? 2 : 1);
        }
        case fault::pool_counts_padding: {
            auto out = good(n, in, w);
            if (!out) return out;
            return counting_padding(std::move(*out), n, in[0]);
        }
        case fault::softmax_axis: {
            memo::node wrong = n;
            wrong.set("axis", std::int64_t{1});
            return good(wrong, in, w);
        }
        case fault::gru_gates_swapped: {
            const std::int64_t u = p.integer("units");
            std::vector<array<T>> swapped(w.begin(), w.end());
            for (auto& a : swapped) {  // kernel (in, 3u), recurrent kernel (u, 3u), bias (3u) or (2, 3u)
                if (a.dim(-1) != 3 * u) continue;
                for (std::int64_t r = 0; r < a.size() / (3 * u); ++r)
                    std::swap_ranges(a.data.begin() + r * 3 * u, a.data.begin() + r * 3 * u + u, a.data.begin() + r * 3 * u + u);
            }
            return good(n, in, swapped);
        }
        case fault::bias_twice: {
            if (!p.has("use_bias") || !p.flag("use_bias") || w.empty()) return good(n, in, w);
            std::vector<array<T>> twice(w.begin(), w.end());
            for (auto& x : twice.back().data) x = static_cast<T>(static_cast<A>(x) + static_cast<A>(x));
            return good(n, in, twice);
        }
        default: return good(n, in, w);
    }
}

}  // namespace detail

/// The reference interpreter, named `name`, with the kernel of each of `layers` replaced by a
/// faulty one.
inline memo::reference::interpreter faulty_backend(fault f, const std::vector<std::string>& layers, std::string name = "faulty") {
    memo::reference::interpreter b(std::nullopt, std::move(name));
    for (const auto& layer : layers)
        b.wrap_kernel(layer,
                      [f]<class T>(std::type_identity<T>, const memo::reference::kernel_in_context<T>& good, const memo::reference::kernel_context& c,
                                   std::span<const memo::reference::array<T>> in,
                                   std::span<const memo::reference::array<T>> w) -> memo::expected<memo::reference::array<T>> {
                          if (is_planted(f)) return detail::planted_kernel<T>(f, good, c, in, w);
                          switch (f) {
                              case fault::segfault: std::raise(SIGSEGV); break;
                              case fault::abort: std::abort();
                              case fault::hang:
                                  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
                              case fault::memory: {
                                  // Grows until the worker is killed for it.
                                  for (std::vector<std::vector<char>> hog;;) hog.emplace_back(64 << 20, 1);
                              }
                              case fault::error: return memo::fail("planted error");
                              default: break;
                          }
                          const auto start = std::chrono::steady_clock::now();
                          auto out = good(c, in, w);
                          if (!out) return out;
                          if (f == fault::slow) {
                              const auto took = std::chrono::steady_clock::now() - start;
                              for (const auto until = std::chrono::steady_clock::now() + took / 5; std::chrono::steady_clock::now() < until;) {}
                          }
                          if (f == fault::leak) {
                              // Fresh pages, never unmapped: the worker's memory grows run after run. (A
                              // malloc could reuse free heap the worker inherited, resident already by fork
                              // from a test process that ran much before, and its peak would not move.)
                              void* p = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                              if (p != MAP_FAILED) std::memset(p, 1, 1 << 20);
                          }
                          if (f == fault::unwritten) {
                              const std::unique_ptr<float[]> fresh(new float[out->data.size()]);  // never written
                              for (std::size_t i = 0; i < out->data.size(); ++i) out->data[i] = T(fresh[i]);
                          }
                          if (f == fault::small_error)
                              for (auto& x : out->data) x = T(static_cast<float>(x) + 1e-3f * (1 + std::abs(static_cast<float>(x))));
                          if (f == fault::nan) (*out)[0] = T(std::numeric_limits<float>::quiet_NaN());
                          if (f == fault::wrong_value)
                              for (auto& x : out->data) x = T(static_cast<float>(x) * 1.5f + 0.25f);
                          return out;
                      });
    return b;
}
inline memo::reference::interpreter faulty_backend(fault f, std::string layer, std::string name = "faulty") {
    return faulty_backend(f, std::vector<std::string>{std::move(layer)}, std::move(name));
}

}  // namespace test

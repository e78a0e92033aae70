#pragma once
// What a reduction preserves (the items of layer_type, layer_pair, layer_param and layer_input)
// and the data its steps share: configurations, edges, chains and the cover's state.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/model.hpp"
#include "../coverage/universe.hpp"

namespace memo {

/// The items m covers under the four criteria, each tagged with its criterion
/// ((criterion << 32) | item), sorted and without repeats: two models cover the same items
/// exactly when these are equal.
inline std::vector<std::uint64_t> reduction_items(const universe& u, const model& m) {
    std::vector<std::uint64_t> xs;
    u.items(m, [&](criterion c, std::size_t i) {
        if (is_memos(c)) xs.push_back(static_cast<std::uint64_t>(c) << 32 | static_cast<std::uint64_t>(i));
    });
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    return xs;
}

namespace detail::reduction {

inline std::size_t at(int i) { return static_cast<std::size_t>(i); }

template <class V>
auto span_of(const V& v) {
    return std::span<const std::remove_cvref_t<decltype(v[0])>>(v.data(), v.size());
}

/// An item configuration: nodes of one class with the same type, parameter and input items. Any
/// of them stands for all the others, on any input that keeps those items.
struct config {
    int cls = -1;               // universe slot
    std::vector<int> items;     // dense ids, sorted
    std::vector<int> groups;    // original nodes with distinct parameter values or input shapes
    std::vector<int> variants;  // original nodes with distinct parameter values
};

/// A chain of adapters between two universe layers of the original, where the universe counts
/// the pair across it.
struct chain {
    std::vector<int> adapters;  // original nodes, from the producer's side
    int pair = -1;
};

/// An original edge between universe layers: input j of b reads a, through `chain` (or -1).
struct edge {
    int a = -1, b = -1, j = 0, chain = -1;
};

/// A vector of at most N elements, stored inline (states are copied often).
template <class T, std::size_t N>
struct inline_vec {
    std::array<T, N> v{};
    std::size_t n = 0;

    std::size_t size() const noexcept { return n; }
    T& operator[](std::size_t i) noexcept { return v[i]; }
    const T& operator[](std::size_t i) const noexcept { return v[i]; }
    void push_back(const T& x) noexcept {
        if (n < N) v[n++] = x;
    }
    void assign(std::size_t k, const T& x) noexcept {
        n = std::min(k, N);
        for (std::size_t i = 0; i < n; ++i) v[i] = x;
    }
    T* data() noexcept { return v.data(); }
    const T* data() const noexcept { return v.data(); }
    T* begin() noexcept { return v.data(); }
    T* end() noexcept { return v.data() + n; }
    const T* begin() const noexcept { return v.data(); }
    const T* end() const noexcept { return v.data() + n; }
};

/// Input slots a node of the reduced model may have (merges take at most 8 inputs).
inline constexpr std::size_t max_slots = 8;

/// A node of the model under construction: a node of configuration cfg with the parameter values
/// of original node var; each input slot reads a node (through a chain) or an InputLayer.
struct snode {
    int cfg = -1;  // -1: removed
    int var = -1;
    inline_vec<int, max_slots> from, via;  // per slot: the node it reads (-1: an InputLayer), the chain (-1: none)
    inline_vec<shape, max_slots> in;       // per slot: the shape it reads
    inline_vec<dtype, max_slots> in_type;
    shape out;
    dtype type = dtype::float32;
};

struct state {
    std::vector<snode> nodes;
    std::vector<int> cnt;  // per dense item: how many nodes and edges cover it
    int covered = 0;
    double weight = 0;  // of the covered items
};

/// The outcome of a layer (or an adapter chain) on given inputs.
struct outcome {
    bool ok = false;
    shape out;
    dtype type = dtype::float32;
};

/// Outputs: the nodes nobody reads.
inline void set_outputs(model& r) {
    std::vector<char> read(r.nodes.size(), 0);
    for (const auto& nd : r.nodes)
        for (int s : nd.inputs) read[at(s)] = 1;
    r.outputs.clear();
    for (std::size_t i = 0; i < r.nodes.size(); ++i)
        if (!read[i]) r.outputs.push_back(static_cast<int>(i));
}

}  // namespace detail::reduction

}  // namespace memo

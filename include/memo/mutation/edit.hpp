#pragma once
// Graph edits the mutation operators share: inserting and removing nodes in topological order,
// redirecting consumers, and the adapter chains that repair ranks, shapes and dtypes so that a
// change never leaves an invalid model behind.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "../core/model.hpp"

namespace memo::mutation {

/// The adapter layers, looked up once per registry.
struct adapters {
    const layer_def *pad, *crop, *expand, *drop, *cast, *inject;
    explicit adapters(const registry& reg)
        : pad(&reg.at("CustomPadLayer")),
          crop(&reg.at("CustomCropLayer")),
          expand(&reg.at("CustomExpandLayer")),
          drop(&reg.at("CustomDropDimLayer")),
          cast(&reg.at("CustomCastLayer")),
          inject(&reg.at("CustomInjectLayer")) {}
};

/// Inserts `n` at index `pos`; every edge, output and weight edit naming a node at or after `pos`
/// shifts by one.
inline void insert_at(model& m, int pos, node n) {
    for (auto& x : m.nodes)
        for (int& e : x.inputs) e += e >= pos;
    for (int& e : n.inputs) e += e >= pos;
    for (int& o : m.outputs) o += o >= pos;
    for (auto& w : m.weight_edits) w.node += w.node >= pos;
    m.nodes.insert(m.nodes.begin() + pos, std::move(n));
}

/// Removes node `pos`, which nothing may read any more; later indices shift down by one.
inline void erase_at(model& m, int pos) {
    m.nodes.erase(m.nodes.begin() + pos);
    for (auto& x : m.nodes)
        for (int& e : x.inputs) e -= e > pos;
    std::erase(m.outputs, pos);
    for (int& o : m.outputs) o -= o > pos;
    std::erase_if(m.weight_edits, [&](const weight_edit& w) { return w.node == pos; });
    for (auto& w : m.weight_edits) w.node -= w.node > pos;
}

/// Nodes after `to` that read `from` read `to` instead, and an output `from` becomes `to`.
inline void redirect(model& m, int from, int to) {
    for (std::size_t i = static_cast<std::size_t>(to) + 1; i < m.nodes.size(); ++i)
        for (int& e : m.nodes[i].inputs)
            if (e == from) e = to;
    for (int& o : m.outputs)
        if (o == from) o = to;
}

/// Indices of the nodes that read node i.
inline std::vector<int> consumers(const model& m, int i) {
    std::vector<int> r;
    for (std::size_t k = static_cast<std::size_t>(i) + 1; k < m.nodes.size(); ++k)
        if (std::find(m.nodes[k].inputs.begin(), m.nodes[k].inputs.end(), i) != m.nodes[k].inputs.end()) r.push_back(static_cast<int>(k));
    return r;
}

/// Inserts a node of layer L with these parameters reading `inputs`, at `pos`; infers it.
/// Returns its index, or the reason it is invalid (then nothing is inserted).
inline expected<int> add_node(model& m, int pos, const layer_def& L, std::vector<value> params, std::vector<int> inputs, std::string name) {
    node n;
    n.layer = &L;
    n.params = std::move(params);
    n.inputs = std::move(inputs);
    n.name = std::move(name);
    insert_at(m, pos, std::move(n));
    if (auto ok = infer_node(m, static_cast<std::size_t>(pos)); !ok) {
        erase_at(m, pos);
        return ok.error();
    }
    return pos;
}

/// Appends, from index `pos` on, the adapters that turn node src's output into `target` (shape
/// and dtype): drop or add dimensions to reach the rank, then pad or crop every dimension, then
/// cast. Returns the index of the node that carries the result (src itself when nothing was needed).
// `target` is taken by value: callers often pass a shape that lives in the model being edited.
inline expected<int> convert(model& m, const adapters& a, int src, int pos, const shape target, dtype t) {
    int cur = src;
    auto step = [&](const layer_def& L, std::vector<value> params) -> expected<int> {
        auto r = add_node(m, pos, L, std::move(params), {cur}, std::string{});
        if (!r) return r;
        cur = pos++;
        return cur;
    };
    auto out = [&]() -> const shape& { return m.nodes[static_cast<std::size_t>(cur)].out; };
    if (target.rank() < 2) return fail("cannot convert to rank " + std::to_string(target.rank()));
    while (out().rank() > target.rank()) {  // drop the smallest dimension
        const shape& s = out();
        int axis = 1;
        for (int i = 2; i < s.rank(); ++i)
            if (s[i] < s[axis]) axis = i;
        if (auto r = step(*a.drop, {std::int64_t{axis}}); !r) return r;
    }
    while (out().rank() < target.rank())
        if (auto r = step(*a.expand, {std::int64_t{out().rank()}}); !r) return r;
    ints pads, crops;
    bool any_pad = false, any_crop = false;
    for (int i = 1; i < target.rank(); ++i) {
        const std::int64_t d = target[i] - out()[i];
        const std::int64_t grow = std::max<std::int64_t>(d, 0), shrink = std::max<std::int64_t>(-d, 0);
        pads.push(grow / 2), pads.push(grow - grow / 2);
        crops.push(shrink / 2), crops.push(shrink - shrink / 2);
        any_pad |= grow > 0;
        any_crop |= shrink > 0;
    }
    if (any_crop)
        if (auto r = step(*a.crop, {crops}); !r) return r;
    if (any_pad)
        if (auto r = step(*a.pad, {pads, 0.0}); !r) return r;
    if (m.nodes[static_cast<std::size_t>(cur)].type != t)
        if (auto r = step(*a.cast, {std::string(name_of(t))}); !r) return r;
    return cur;
}

/// convert(), inserting at `cursor` and moving the cursor past what it inserted.
inline expected<int> convert_at(model& m, const adapters& a, int src, int& cursor, const shape target, dtype t) {
    const auto before = m.nodes.size();
    auto r = convert(m, a, src, cursor, target, t);
    cursor += static_cast<int>(m.nodes.size() - before);
    return r;
}

/// Per-sample elements of each input-size bucket (coverage/universe.hpp's shape_bucket).
inline constexpr std::int64_t bucket_low[] = {1, 65, 513, 4097, 32769};
inline constexpr std::int64_t bucket_high[] = {64, 512, 4096, 32768, 131072};

/// A shape of this rank whose elements per sample fall into `bucket`, channels last and small,
/// spatial dimensions near equal.
inline shape shape_in_bucket(int rank, int bucket, rng& r) {
    const double lo = std::log(static_cast<double>(bucket_low[bucket])), hi = std::log(static_cast<double>(bucket_high[bucket]));
    for (int tries = 0; tries < 16; ++tries) {
        const auto e = static_cast<std::int64_t>(std::exp(r.uniform_real(lo, hi)));
        const int n = rank - 1;
        shape s;
        s.push(shape::unknown);
        if (n == 1) {
            s.push(std::max<std::int64_t>(1, e));
        } else {
            const std::int64_t c = std::min<std::int64_t>(r.uniform(1, 8), std::max<std::int64_t>(1, e));
            const double side = std::pow(static_cast<double>(e) / static_cast<double>(c), 1.0 / (n - 1));
            std::int64_t prod = c;
            for (int i = 0; i < n - 2; ++i) {
                const auto d = std::max<std::int64_t>(1, std::llround(side));
                s.push(d);
                prod *= d;
            }
            s.push(std::max<std::int64_t>(1, e / prod));
            s.push(c);
        }
        std::int64_t el = s.elements();
        if (el >= bucket_low[bucket] && el <= (bucket == 4 ? bucket_high[4] * 2 : bucket_high[bucket])) return s;
    }
    shape s;  // fall back to a flat vector of the bucket's lowest size, widened to the rank
    s.push(shape::unknown);
    s.push(bucket_low[bucket]);
    while (s.rank() < rank) s.push(1);
    return s;
}

}  // namespace memo::mutation

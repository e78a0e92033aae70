#pragma once
// Minimisation of a verdict's model: the smaller models it is checked on, and the order they are
// tried in. `holds(candidate, best)` runs a candidate, and where it gives the same verdict (kind,
// culprits, layer) makes it `best` and says so; it also keeps the budget of checks.
#include <string>
#include <string_view>
#include <vector>

#include "../core/model.hpp"
#include "../tensors/weights.hpp"
#include "tester.hpp"

namespace memo::oracle {

/// The first `k + 1` nodes of m, with node k as the only output.
inline model prefix(const model& m, int k) {
    model p = m;
    p.nodes.resize(static_cast<std::size_t>(k) + 1);
    p.outputs = {k};
    std::erase_if(p.weight_edits, [&](const weight_edit& w) { return w.node > k; });
    return p;
}

/// Appends an Input node with the shape and dtype of m's node src to s; returns its index.
inline int add_input(model& s, const model& m, int src, const registry& reg) {
    node in = make_node(reg.at("InputLayer"), "input_" + std::to_string(s.size()));
    ints dims;
    for (auto d : m[src].out.sample()) dims.push(d);
    in.set("shape", dims);
    in.set("dtype", std::string(name_of(m[src].type)));
    s.nodes.push_back(std::move(in));
    return static_cast<int>(s.size()) - 1;
}

/// Node k of m alone, fed by fresh inputs of its inputs' shapes and dtypes. With `same_weights`
/// it holds the weights it has in m; else they are drawn anew for its place in the smaller model.
inline expected<model> isolate_node(const model& m, int k, const registry& reg, bool same_weights = false) {
    model s;
    s.seed = m.seed;
    node copy = m[k];
    if (same_weights) {
        std::vector<given_weights::one> ws;
        for (auto& w : weights_of(m, k)) ws.push_back({w.value.dims, std::move(w.value.data)});
        copy.weights = give_weights(std::move(ws));
    }
    for (int& e : copy.inputs) e = add_input(s, m, e, reg);
    s.nodes.push_back(std::move(copy));
    s.outputs = {static_cast<int>(s.size()) - 1};
    if (auto r = infer_shapes(s); !r) return r.error();
    return s;
}

/// The producer and node k, fed by fresh inputs (all inputs first, so the order stays topological).
inline expected<model> pair_model(const model& m, int producer, int k, const registry& reg) {
    model s;
    s.seed = m.seed;
    node first = m[producer], second = m[k];
    for (int& e : first.inputs) e = add_input(s, m, e, reg);
    for (int& e : second.inputs) e = e == producer ? -1 : add_input(s, m, e, reg);
    s.nodes.push_back(std::move(first));
    for (int& e : second.inputs)
        if (e < 0) e = static_cast<int>(s.size()) - 1;
    s.nodes.push_back(std::move(second));
    s.outputs = {static_cast<int>(s.size()) - 1};
    if (auto r = infer_shapes(s); !r) return r.error();
    return s;
}

/// Smaller inputs (halve each input dimension), mode parameters back to Keras' defaults and
/// smaller shape parameters, one move at a time, each kept where the verdict holds.
template <class Holds>
void halve_sizes(minimised& best, Holds& holds) {
    static constexpr std::string_view smaller[] = {"filters", "units", "depth_multiplier", "n"};
    bool progress = true;
    while (progress) {
        progress = false;
        std::vector<model> moves;
        for (std::size_t i = 0; i < best.m.size(); ++i) {
            const node& n = best.m.nodes[i];
            if (n.layer->arity.max == 0) {
                const auto& dims = std::get<ints>(n.param("shape"));
                for (int d = 0; d < dims.n; ++d)
                    if (dims[d] > 1) {
                        model c = best.m;
                        auto nd = dims;
                        nd[d] = (dims[d] + 1) / 2;
                        c.nodes[i].set("shape", nd);
                        moves.push_back(std::move(c));
                    }
                continue;
            }
            // Mode parameters back to Keras' defaults: what stays non-default is what matters.
            for (std::size_t k = 0; k < n.params.size(); ++k)
                if (n.layer->params[k].what == role::mode && !(n.params[k] == n.layer->params[k].fallback)) {
                    model c = best.m;
                    c.nodes[i].params[k] = n.layer->params[k].fallback;
                    moves.push_back(std::move(c));
                }
            for (auto p : smaller)
                if (n.layer->param_index(p) >= 0 && as_int(n.param(p)) > 1) {
                    model c = best.m;
                    c.nodes[i].set(p, std::int64_t{as_int(n.param(p)) / 2});
                    moves.push_back(std::move(c));
                }
        }
        for (auto& c : moves) {
            if (!infer_shapes(c)) continue;
            if (holds(c, best)) {
                progress = true;
                break;
            }
        }
    }
}

/// The smallest model found that gives the same verdict: the node alone, the node with its
/// producer, the prefix up to it; then smaller inputs and parameters. A failure of the whole graph
/// (no layer to blame) keeps to the shortest prefix that still fails so. A time-out or a blow-up
/// is not minimised (each check could cost the whole limit).
template <class Holds>
minimised minimise_with(const model& m, const verdict& v, const registry& reg, Holds holds) {
    minimised best{m, v, 0};
    if ((v.node < 0 && !v.whole_graph) || v.status() == run_status::timeout || v.status() == run_status::memory) return best;
    if (v.node < 0) {
        for (int lo = 0, hi = static_cast<int>(m.size()) - 2; lo <= hi;) {
            const int mid = (lo + hi) / 2;
            if (holds(prefix(m, mid), best)) hi = mid - 1;
            else lo = mid + 1;
        }
        return best;
    }
    bool structural = false;
    if (auto single = isolate_node(m, v.node, reg)) structural = holds(*single, best);
    if (!structural && !m[v.node].inputs.empty()) {
        const int producer = m[v.node].inputs[0];
        if (m[producer].layer->arity.max != 0)
            if (auto pair = pair_model(m, producer, v.node, reg)) structural = holds(*pair, best);
    }
    if (!structural && static_cast<std::size_t>(v.node) + 1 < m.size()) holds(prefix(m, v.node), best);
    halve_sizes(best, holds);
    return best;
}

}  // namespace memo::oracle

#pragma once
// Seed reduction: a cover's state and the edits steps 2 to 4 make to it (see reduce.hpp).
#include "original.hpp"

namespace memo {

namespace detail::reduction {

/// A cover's state and its edits: counting items, wiring slots, placing nodes and merges,
/// settling output shapes, solving for an input shape.
class placement : public original_items {
public:
    using original_items::original_items;

protected:
    void count(state& s, int item, int d) const {
        int& c = s.cnt[at(item)];
        if (d > 0 && c++ == 0) {
            ++s.covered;
            s.weight += weight_[at(item)];
        }
        if (d < 0 && --c == 0) {
            --s.covered;
            s.weight -= weight_[at(item)];
        }
    }
    /// The pair slot j of node y makes (-1 when it reads an InputLayer).
    int slot_pair(const state& s, int y, std::size_t j) const {
        const int x = s.nodes[at(y)].from[j];
        return x < 0 ? -1 : pair_of(s.nodes[at(x)].cfg, s.nodes[at(y)].cfg);
    }
    /// What slot j of y reads from its producer: its output, through the chain.
    outcome source(state& s, int y, std::size_t j) {
        const snode& Y = s.nodes[at(y)];
        const snode& X = s.nodes[at(Y.from[j])];
        if (Y.via[j] < 0) return outcome{true, X.out, X.type};
        return run_chain(Y.via[j], X.out, X.type);
    }
    /// Whether a is b or feeds b, directly or not.
    bool reaches(const state& s, int a, int b) const {
        if (a == b) return true;
        stack_.assign(1, b);
        seen_.assign(s.nodes.size(), 0);
        while (!stack_.empty()) {
            const int v = stack_.back();
            stack_.pop_back();
            for (int f : s.nodes[at(v)].from) {
                if (f < 0 || seen_[at(f)]) continue;
                if (f == a) return true;
                seen_[at(f)] = 1;
                stack_.push_back(f);
            }
        }
        return false;
    }

    /// Recomputes y's output from its inputs, with its own parameter values or, failing that,
    /// another variant of its configuration. False when none fits.
    bool settle(state& s, int y) {
        snode& Y = s.nodes[at(y)];
        for (std::size_t j = 0; j < Y.from.size(); ++j) {
            if (Y.from[j] < 0) continue;
            const outcome o = source(s, y, j);
            if (!o.ok) return false;
            s.nodes[at(y)].in[j] = o.out;
            s.nodes[at(y)].in_type[j] = o.type;
        }
        snode& Z = s.nodes[at(y)];
        const outcome* r = &run_node(Z.var, span_of(Z.in), span_of(Z.in_type));
        if (!r->ok)
            for (int v : configs_[at(Z.cfg)].variants) {
                if (v == Z.var || m_.nodes[at(v)].inputs.size() != Z.in.size()) continue;
                r = &run_node(v, span_of(Z.in), span_of(Z.in_type));
                if (r->ok) {
                    s.nodes[at(y)].var = v;
                    break;
                }
            }
        if (!r->ok) return false;
        s.nodes[at(y)].out = r->out;
        s.nodes[at(y)].type = r->type;
        return true;
    }

    /// Re-settles z and everything it feeds, producers first.
    bool refresh(state& s, int z) {
        std::vector<char> mark(s.nodes.size(), 0), done(s.nodes.size(), 0);
        mark[at(z)] = 1;
        for (bool grew = true; grew;) {
            grew = false;
            for (std::size_t k = 0; k < s.nodes.size(); ++k) {
                if (mark[k] || s.nodes[k].cfg < 0) continue;
                for (int f : s.nodes[k].from)
                    if (f >= 0 && mark[at(f)]) {
                        mark[k] = 1;
                        grew = true;
                        break;
                    }
            }
        }
        for (bool progress = true; progress;) {
            progress = false;
            for (std::size_t k = 0; k < s.nodes.size(); ++k) {
                if (!mark[k] || done[k]) continue;
                bool ready = true;
                for (int f : s.nodes[k].from) ready = ready && (f < 0 || !mark[at(f)] || done[at(f)]);
                if (!ready) continue;
                if (!settle(s, static_cast<int>(k))) return false;
                done[k] = 1;
                progress = true;
            }
        }
        return true;
    }

    /// Adds a node of configuration cfg: with variant var's parameter values and input shapes
    /// when x < 0 (on InputLayers), else reading x at slot j (through chain ch; a merge reads
    /// InputLayers of the same shape at its other slots). Then lets it feed, for pairs nothing
    /// covers yet, the slots of the nodes there are. Returns the new node, or -1.
    int place(state& s, int cfg, int var, int x, int ch, std::size_t j) {
        const config& C = configs_[at(cfg)];
        snode y;
        y.cfg = cfg;
        if (var >= 0 && m_.nodes[at(var)].inputs.size() > max_slots) return -1;
        if (x < 0) {
            y.var = var;
            for (int src : m_.nodes[at(var)].inputs) {
                y.in.push_back(m_.nodes[at(src)].out);
                y.in_type.push_back(m_.nodes[at(src)].type);
            }
            const outcome& r = run_node(var, span_of(y.in), span_of(y.in_type));
            if (!r.ok) return -1;
            y.out = r.out;
            y.type = r.type;
        } else {
            outcome src{true, s.nodes[at(x)].out, s.nodes[at(x)].type};
            if (ch >= 0) src = run_chain(ch, src.out, src.type);
            if (!src.ok) return -1;
            const int first = var >= 0 ? var : -1;
            const outcome* r = nullptr;
            auto attempt = [&](int v) {
                const std::size_t k = m_.nodes[at(v)].inputs.size();
                if (j >= k || k > max_slots) return false;
                y.in.assign(k, src.out);
                y.in_type.assign(k, src.type);
                r = &run_node(v, span_of(y.in), span_of(y.in_type));
                if (!r->ok) return false;
                y.var = v;
                return true;
            };
            bool found = first >= 0 && attempt(first);
            for (std::size_t k = 0; k < C.variants.size() && !found; ++k) found = attempt(C.variants[k]);
            if (!found) return -1;
            y.out = r->out;
            y.type = r->type;
        }
        y.from.assign(y.in.size(), -1);
        y.via.assign(y.in.size(), -1);
        if (x >= 0) {
            y.from[j] = x;
            y.via[j] = ch;
        }
        s.nodes.push_back(std::move(y));
        const int id = static_cast<int>(s.nodes.size() - 1);
        for (int it : C.items) count(s, it, +1);
        if (x >= 0) count(s, slot_pair(s, id, j), +1);
        feed_others(s, id);
        return id;
    }

    /// Adds original merge b and its universe producers (each on InputLayers of its original
    /// input shapes, or a node there is with the same configuration and output), wired as in
    /// the original. Returns the merge's node, or -1.
    int place_merge(state& s, int b) {
        const node& B = m_.nodes[at(b)];
        if (B.inputs.size() > max_slots) return -1;
        snode y;
        y.cfg = config_of_[at(b)];
        y.var = b;
        for (std::size_t j = 0; j < B.inputs.size(); ++j) {
            const auto [a, ch] = producer(b, j);
            int x = -1;
            if (a >= 0) {
                for (std::size_t k = 0; k < s.nodes.size() && x < 0; ++k)
                    if (s.nodes[k].cfg == config_of_[at(a)] && s.nodes[k].out == m_.nodes[at(a)].out && s.nodes[k].type == m_.nodes[at(a)].type)
                        x = static_cast<int>(k);
                if (x < 0) x = place(s, config_of_[at(a)], a, -1, -1, 0);
                if (x < 0) return -1;
            }
            y.from.push_back(x);
            y.via.push_back(x < 0 ? -1 : ch);
            y.in.push_back(m_.nodes[at(B.inputs[j])].out);
            y.in_type.push_back(m_.nodes[at(B.inputs[j])].type);
        }
        s.nodes.push_back(std::move(y));
        const int id = static_cast<int>(s.nodes.size() - 1);
        for (int it : configs_[at(s.nodes[at(id)].cfg)].items) count(s, it, +1);
        for (std::size_t j = 0; j < s.nodes[at(id)].from.size(); ++j)
            if (s.nodes[at(id)].from[j] >= 0) count(s, slot_pair(s, id, j), +1);
        if (!settle(s, id)) return -1;
        feed_others(s, id);
        return id;
    }

    /// Lets node y feed slots of other nodes where that covers a pair nothing covers yet: a slot
    /// that reads an InputLayer or whose pair something else covers too, or a new slot of a merge.
    void feed_others(state& s, int y) {
        for (std::size_t z = 0; z < s.nodes.size(); ++z) {
            if (s.nodes[z].cfg < 0 || static_cast<int>(z) == y) continue;
            const int p = pair_of(s.nodes[at(y)].cfg, s.nodes[z].cfg);
            if (p < 0 || s.cnt[at(p)] != 0 || reaches(s, static_cast<int>(z), y)) continue;
            const std::size_t slots = s.nodes[z].from.size();
            const bool merge = m_.nodes[at(s.nodes[z].var)].layer->is_merge();
            for (std::size_t j = 0; j <= slots && s.cnt[at(p)] == 0; ++j) {
                if (j == slots && (!merge || slots >= max_slots || static_cast<int>(slots) >= m_.nodes[at(s.nodes[z].var)].layer->arity.max)) break;
                const int old = j < slots ? slot_pair(s, static_cast<int>(z), j) : -1;
                if (old >= 0 && s.cnt[at(old)] < 2) continue;
                for (int ch = -1; ch < static_cast<int>(chains_of_pair_[at(p)].size()); ++ch) {
                    state t = s;
                    snode& Z = t.nodes[z];
                    if (j == slots) {
                        Z.from.push_back(-1);
                        Z.via.push_back(-1);
                        Z.in.push_back(s.nodes[at(y)].out);
                        Z.in_type.push_back(s.nodes[at(y)].type);
                    }
                    if (old >= 0) count(t, old, -1);
                    Z.from[j] = y;
                    Z.via[j] = ch < 0 ? -1 : chains_of_pair_[at(p)][at(ch)];
                    count(t, p, +1);
                    if (refresh(t, static_cast<int>(z))) {
                        s = std::move(t);
                        break;
                    }
                    // A node that reads only an InputLayer, and that nothing reads yet, may read
                    // another shape: one on which it gives exactly what z reads there.
                    if (ch >= 0 || !loose(s, y)) continue;
                    const shape want = j < slots ? s.nodes[z].in[j] : s.nodes[z].in[0];
                    const auto in = solve_input(s.nodes[at(y)].var, s.nodes[at(y)].in[0], s.nodes[at(y)].in_type[0], want);
                    if (!in) continue;
                    state r = s;
                    r.nodes[at(y)].in[0] = *in;
                    if (!settle(r, y) || !(r.nodes[at(y)].out == want)) continue;
                    snode& R = r.nodes[z];
                    if (j == slots) {
                        R.from.push_back(-1);
                        R.via.push_back(-1);
                        R.in.push_back(want);
                        R.in_type.push_back(r.nodes[at(y)].type);
                    }
                    if (old >= 0) count(r, old, -1);
                    R.from[j] = y;
                    R.via[j] = -1;
                    count(r, p, +1);
                    if (refresh(r, static_cast<int>(z))) {
                        s = std::move(r);
                        break;
                    }
                }
            }
        }
    }

    /// Whether node y has one input slot, reads an InputLayer there, and nothing reads it.
    bool loose(const state& s, int y) const {
        if (s.nodes[at(y)].from.size() != 1 || s.nodes[at(y)].from[0] >= 0) return false;
        for (const auto& n : s.nodes)
            if (n.cfg >= 0)
                for (int f : n.from)
                    if (f == y) return false;
        return true;
    }

    /// An input shape on which node var's parameter values give exactly `want` and cover its
    /// configuration's items: each axis found by bisection (an output axis grows with the same
    /// input axis), then axes the output does not depend on tried for the input's bucket.
    std::optional<shape> solve_input(int var, shape in, dtype t, const shape& want) {
        const node& V = m_.nodes[at(var)];
        if (in.rank() != want.rank() && V.layer->fam != family::pool) return std::nullopt;
        auto geometry = [&](const shape& x) -> std::optional<shape> {
            const shape ins[1] = {x};
            auto r = V.layer->infer({ins, 1}, V.params);
            if (!r || r->rank() != want.rank()) return std::nullopt;
            return *r;
        };
        for (int a = 1; a < in.rank() && a < want.rank(); ++a) {
            std::int64_t lo = 1, hi = std::int64_t{1} << 14;
            auto reaches_want = [&](std::int64_t v) {
                shape x = in;
                x[a] = v;
                const auto o = geometry(x);
                return o && (*o)[a] >= want[a];
            };
            if (!reaches_want(hi)) return std::nullopt;
            while (lo < hi) {
                const std::int64_t mid = lo + (hi - lo) / 2;
                if (reaches_want(mid)) hi = mid;
                else lo = mid + 1;
            }
            in[a] = lo;
        }
        const auto o = geometry(in);
        if (!o || !(*o == want)) return std::nullopt;
        const dtype ts[1] = {t};
        auto fits = [&](const shape& x) {
            const shape ins[1] = {x};
            const outcome& r = run_node(var, ins, ts);
            return r.ok && r.out == want;
        };
        if (fits(in)) return in;
        for (int a = in.rank() - 1; a >= 1; --a)
            for (std::int64_t v = 1; v <= 4096; v = v < 4 ? v + 1 : v * 3 / 2) {
                shape x = in;
                x[a] = v;
                if (fits(x)) return x;
            }
        return std::nullopt;
    }
};

}  // namespace detail::reduction

}  // namespace memo

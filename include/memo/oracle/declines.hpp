#pragma once
// What the backends under test decline, learnt as models run: one table, which the testers of a
// campaign's lanes learn into and read, and the campaign reads. A library that lacks a kernel
// (libtorch's float16 convolutions on the CPU, ONNX Runtime's float64 Resize) says so when it
// runs the model; from then on that (layer class, dtype, layout) is known to be declined by it. The
// layout is the node's data_format, where its class has one: a library may lack one layout's kernel
// and not the other's (TensorFlow's CPU convolutions take channels_last only), and declining the
// class in both would lose every model with the class. It is read three ways:
//   - a tester holds a model carrying a known decline back from that backend (held_back), but for
//     one model in retry_every, which goes to the library anyway: a decline may be a parameter's
//     and not the class's (TensorFlow's DepthwiseConv2D declines unequal strides only), and a run
//     that goes through takes the decline back;
//   - a campaign's generation keeps to what every backend runs: a mutant some backend declines
//     still counts for coverage and still runs on the backends that take it, but it does not become
//     a seed (its descendants would all be declined too), and it is never run merely to keep
//     workers busy;
//   - stats.json and report.html say, per backend, how many executed models it declined and why.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../core/model.hpp"
#include "../io/json.hpp"
#include "oracle.hpp"

namespace memo::oracle {

class decline_table {
public:
    /// Learns from one model's runs: a run that came back unsupported at a node declines that
    /// node's (class, dtype, layout) for its backend, and a run that went through takes back what
    /// its nodes were learnt to be declined for. With `count`, counts the declined runs under
    /// their reasons (stats.json's; a minimisation's runs are not counted).
    void learn(const model& m, const std::vector<observation>& obs, bool count = true) {
        bool fresh = false;
        for (const auto& o : obs) {
            const auto& r = o.result;
            if (r.ok()) {  // what ran is not declined: a known decline goes to the library now and then (held_back)
                if (const auto it = backends_.find(o.backend); it != backends_.end())
                    for (const auto& n : m.nodes) {
                        const auto k = key::of(n);
                        it->second.pairs.erase(k), it->second.held.erase(k);
                    }
                continue;
            }
            if (r.status != run_status::unsupported) continue;
            auto& b = backends_[o.backend];
            std::string why;
            if (r.node >= 0 && static_cast<std::size_t>(r.node) < m.size()) {
                const node& n = m[r.node];
                fresh |= b.pairs.insert(key::of(n)).second;
                why = key::of(n).text();
            } else if (const auto k = first_declined(b, m)) {  // declined before it ran: the tester knew
                why = key::of(m.nodes[*k]).text();
            } else {
                why = r.message.substr(0, 80);
            }
            if (count) ++b.reasons[why];
        }
        if (fresh) ++learnt_;
    }

    /// Fails, naming what was declined, when `backend` is known to decline a node of m and this is
    /// not the model in retry_every that carries that decline to the library anyway.
    static constexpr std::uint64_t retry_every = 16;
    expected<void> held_back(const std::string& backend, const model& m) {
        const auto it = backends_.find(backend);
        if (it == backends_.end() || it->second.pairs.empty()) return {};
        for (const auto& n : m.nodes)
            if (const auto k = key::of(n); it->second.pairs.count(k) && ++it->second.held[k] % retry_every != 0)
                return fail("declined " + k.text() + " before");
        return {};
    }

    /// Whether any backend is known to decline class L in dtype t whatever its layout (a class
    /// without one, or one declined in both).
    bool declined(std::string_view layer, dtype t) const {
        for (const auto& [name, b] : backends_) {
            int layouts = 0;
            for (const auto& k : b.pairs)
                if (k.layer == layer && k.type == t) {
                    if (k.layout.empty()) return true;
                    ++layouts;
                }
            if (layouts >= 2) return true;
        }
        return false;
    }

    /// Fails, naming the backend, the node and its class and dtype, when some backend is known to
    /// decline a node of m.
    expected<void> runs_everywhere(const model& m) const {
        for (const auto& [name, b] : backends_)
            if (const auto i = first_declined(b, m)) return fail(name + " declines node " + std::to_string(*i) + " (" + key::of(m.nodes[*i]).text() + ")");
        return {};
    }

    /// How many times something new was learnt (the campaign re-checks its seeds when it grows).
    std::uint64_t learnt() const noexcept { return learnt_; }

    /// stats.json's executions.<backend>.declined: the declined runs by reason, most first, and
    /// what the backend is known to decline.
    io::json stats(const std::string& backend) const {
        io::json j = {{"reasons", io::json::array()}, {"known", io::json::array()}};
        const auto it = backends_.find(backend);
        if (it == backends_.end()) return j;
        std::vector<std::pair<std::uint64_t, std::string>> by;
        for (const auto& [why, n] : it->second.reasons) by.emplace_back(n, why);
        std::sort(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
        for (const auto& [n, why] : by) j["reasons"].push_back({{"reason", why}, {"runs", n}});
        for (const auto& k : it->second.pairs) j["known"].push_back(k.text());
        return j;
    }

    io::json save() const {
        io::json j = io::json::object();
        for (const auto& [name, b] : backends_) {
            io::json pairs = io::json::array();
            for (const auto& k : b.pairs) {
                io::json p = {k.layer, std::string(name_of(k.type))};
                if (!k.layout.empty()) p.push_back(k.layout);
                pairs.push_back(p);
            }
            j[name] = {{"pairs", pairs}, {"reasons", b.reasons}};
        }
        return {{"backends", j}, {"learnt", learnt_}};
    }
    void restore(const io::json& j) {
        backends_.clear();
        learnt_ = j.value("learnt", std::uint64_t{0});
        for (const auto& [name, b] : j.at("backends").items()) {
            auto& mine = backends_[name];
            for (const auto& p : b.at("pairs"))
                if (const auto t = parse_dtype(p.at(1).get<std::string>()))
                    mine.pairs.insert({p.at(0).get<std::string>(), *t, p.size() > 2 ? p.at(2).get<std::string>() : std::string()});
            b.at("reasons").get_to(mine.reasons);
        }
    }

private:
    using key = decline_key;
    struct backend_declines {
        std::set<key> pairs;                           // known to be declined
        std::map<key, std::uint64_t> held;             // of pairs: models held back since it was learnt
        std::map<std::string, std::uint64_t> reasons;  // declined runs by reason
    };
    /// The first node of m that b is known to decline.
    static std::optional<std::size_t> first_declined(const backend_declines& b, const model& m) {
        if (b.pairs.empty()) return std::nullopt;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (b.pairs.count(key::of(m.nodes[i]))) return i;
        return std::nullopt;
    }

    std::map<std::string, backend_declines> backends_;
    std::uint64_t learnt_ = 0;
};

}  // namespace memo::oracle

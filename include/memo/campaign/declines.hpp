#pragma once
// What the backends under test decline, learnt as a campaign goes. A library that lacks a kernel
// (libtorch's float16 convolutions on the CPU, ONNX Runtime's float64 Resize) says so when it
// runs the model; from then on that (layer class, dtype) is known to be declined by it. The
// campaign uses the table two ways:
//   - generation keeps to what every backend runs: a mutant some backend declines still counts
//     for coverage and still runs on the backends that take it, but it does not become a seed (its
//     descendants would all be declined too), and it is never run merely to keep workers busy;
//   - stats.json and report.html say, per backend, how many executed models it declined and why.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../core/model.hpp"
#include "../io/json.hpp"
#include "../oracle/oracle.hpp"

namespace memo::campaign {

class decline_table {
public:
    /// Learns from one executed model's runs: a run that came back unsupported at a node declines
    /// that node's (class, dtype) for its backend. Counts the declined run under its reason.
    void learn(const model& m, const std::vector<oracle::observation>& obs) {
        bool fresh = false;
        for (const auto& o : obs) {
            const auto& r = o.result;
            if (r.status != run_status::unsupported) continue;
            auto& b = backends_[o.backend];
            std::string why;
            if (r.node >= 0 && static_cast<std::size_t>(r.node) < m.size()) {
                const node& n = m[r.node];
                fresh |= b.pairs.emplace(std::string(n.layer->name), n.type).second;
                why = reason(n.layer->name, n.type);
            } else if (const auto k = first_declined(b, m)) {  // declined before it ran: the tester knew
                why = reason(m.nodes[*k].layer->name, m.nodes[*k].type);
            } else {
                why = r.message.substr(0, 80);
            }
            ++b.reasons[why];
        }
        if (fresh) ++learnt_;
    }

    /// Whether any backend is known to decline class L in dtype t.
    bool declined(std::string_view layer, dtype t) const {
        for (const auto& [name, b] : backends_)
            if (b.pairs.count({std::string(layer), t})) return true;
        return false;
    }

    /// Fails, naming the backend, the node and its class and dtype, when some backend is known to
    /// decline a node of m.
    expected<void> runs_everywhere(const model& m) const {
        for (const auto& [name, b] : backends_)
            if (const auto i = first_declined(b, m))
                return fail(name + " declines node " + std::to_string(*i) + " (" + reason(m.nodes[*i].layer->name, m.nodes[*i].type) + ")");
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
        for (const auto& [layer, t] : it->second.pairs) j["known"].push_back(reason(layer, t));
        return j;
    }

    io::json save() const {
        io::json j = io::json::object();
        for (const auto& [name, b] : backends_) {
            io::json pairs = io::json::array();
            for (const auto& [layer, t] : b.pairs) pairs.push_back({layer, std::string(name_of(t))});
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
                if (const auto t = parse_dtype(p.at(1).get<std::string>())) mine.pairs.emplace(p.at(0).get<std::string>(), *t);
            b.at("reasons").get_to(mine.reasons);
        }
    }

private:
    struct backend_declines {
        std::set<std::pair<std::string, dtype>> pairs;  // (class, dtype) known to be declined
        std::map<std::string, std::uint64_t> reasons;   // declined runs by reason
    };
    static std::string reason(std::string_view layer, dtype t) { return std::string(layer) + " in " + std::string(name_of(t)); }
    /// The first node of m whose (class, dtype) b is known to decline.
    static std::optional<std::size_t> first_declined(const backend_declines& b, const model& m) {
        if (b.pairs.empty()) return std::nullopt;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (b.pairs.count({std::string(m.nodes[i].layer->name), m.nodes[i].type})) return i;
        return std::nullopt;
    }

    std::map<std::string, backend_declines> backends_;
    std::uint64_t learnt_ = 0;
};

}  // namespace memo::campaign

#pragma once
// One campaign over many processes (ranks), each running its own search with its own backends:
// every few seconds they exchange what they found (AFL's parallel mode syncs its queue the same
// way, here through a communicator rather than a shared file system).
//
//   1. models: each rank's models that raised its coverage since the last exchange (at most
//      `share`, the largest gains first) go to every rank, and each adopts into its seed pool those
//      that raise its own coverage (search::adopt): what one rank found, the others mutate too;
//   2. coverage: a bitwise OR of each criterion's items over the ranks, so that no rank keeps
//      chasing what another covered (every rank has the same coverage after an exchange);
//   3. counters: the ranks' models generated, valid and executed summed (coverage.csv's job-wide
//      columns) and a stop flag: the campaign ends at the first exchange after any rank's budget;
//   4. bugs: each rank's bugs stored since the last exchange go to rank 0, which owns the campaign
//      directory and stores each signature once (bug_store::adopt), counting every rank's sightings.
//
// The generation loop (campaign/generate.hpp) drives it; the stats of every rank are gathered to
// rank 0 at the end (merge_stats). See docs/cluster.md for the bytes each exchange moves.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "../coverage/checkpoint.hpp"
#include "../io/json.hpp"
#include "../store/bugs.hpp"
#include "../store/store.hpp"
#include "communicator.hpp"

namespace memo::cluster {

struct exchange_options {
    double seconds = 3;          // between two exchanges
    std::size_t share = 8;       // models each rank sends per exchange, at most
    std::size_t max_slots = 20;  // a search's seed pool stops adopting at this many models (each costs every step: selection sorts all seeds)
};

class exchange {
public:
    /// `bugs`: this rank's bug store (a campaign's execution stage's), whose bugs go to rank 0's.
    exchange(communicator& c, const registry& reg, exchange_options o = {}, store::bug_store* bugs = nullptr) : c_(c), own_(reg), o_(o), bugs_(bugs) {}

    int rank() const { return c_.rank(); }
    int size() const { return c_.size(); }
    const exchange_options& options() const noexcept { return o_; }

    /// The seed models a fresh campaign starts from (their items are this rank's own too).
    void seeded(const std::vector<model>& seeds) {
        for (const auto& m : seeds) own_.add(m);
    }
    /// A model that raised this rank's coverage: its items are this rank's own, and it is offered
    /// to the other ranks at the next exchange.
    void found(const model& m, std::size_t gain) {
        own_.add(m);
        // Only the `share` largest gains are kept (thousands of models can raise coverage between
        // two exchanges when nothing runs them).
        if (found_.size() < o_.share) {
            found_.push_back({gain, m});
            return;
        }
        const auto least = std::min_element(found_.begin(), found_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (least != found_.end() && gain > least->first) *least = {gain, m};
    }
    /// Whether an exchange is due at campaign time `t` (seconds).
    bool due(double t) const noexcept { return t >= next_; }

    /// What an exchange did.
    struct outcome {
        bool stop = false;        // some rank's budget is spent: every rank stops now
        std::size_t adopted = 0;  // models this rank took into its seed pool
    };

    /// One exchange (collective: every rank calls it, in step). `mine`: this rank's models
    /// generated, valid and executed; `done`: this rank's budget is spent. Adopted models go into
    /// the store (a checkpoint names its slots' models by key).
    template <class Search>
    outcome sync(Search& s, store::campaign_store& st, std::array<std::uint64_t, 3> mine, bool done, double t) {
        const auto began = std::chrono::steady_clock::now();
        outcome r;
        std::uint64_t sent = 0;
        // 1. models
        std::sort(found_.begin(), found_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        io::json mj = io::json::array();
        for (const auto& f : found_) mj.push_back(io::model_to_json(f.second));
        shared_ += found_.size();
        found_.clear();
        const std::string payload = mj.dump();
        sent += payload.size();
        const auto all = c_.all_gather(payload);
        for (std::size_t k = 0; k < all.size(); ++k) {
            if (static_cast<int>(k) == rank()) continue;
            for (const auto& j : io::json::parse(all[k])) {
                auto m = io::model_from_json(j, own_.space().layers(), "a model from rank " + std::to_string(k));
                const auto key = model_key(m);
                if (s.adopt(std::move(m), o_.max_slots)) {
                    st.add_model(key, s.models().back());
                    ++r.adopted;
                }
            }
        }
        adopted_ += r.adopted;
        // 2. coverage
        std::vector<std::uint64_t> words;
        for (auto k : all_criteria) words.insert(words.end(), s.coverage().items(k).words().begin(), s.coverage().items(k).words().end());
        c_.bitwise_or(words);
        sent += 8 * words.size();
        auto at = words.begin();  // the OR holds this rank's items: it replaces them
        for (auto k : all_criteria) {
            auto& items = s.coverage().items(k);
            const auto n = static_cast<std::ptrdiff_t>(items.words().size());
            items.assign(std::vector<std::uint64_t>(at, at + n));
            at += n;
        }
        // 3. counters and the stop flag
        std::vector<std::uint64_t> totals{done ? 1u : 0u, mine[0], mine[1], mine[2]};
        c_.sum(totals);
        sent += 8 * totals.size();
        r.stop = totals[0] > 0;
        for (std::size_t i = 0; i < 3; ++i) others_[i] = totals[i + 1] - mine[i];
        // 4. bugs
        sent += ship_bugs();
        ++syncs_;
        bytes_ += sent;
        seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        next_ = t + o_.seconds;
        return r;
    }

    /// Sends this rank's bugs not yet sent, and the counts of those seen again, to rank 0, which
    /// stores each signature once (collective; the generation loop calls it once more at the end,
    /// after the last models ran). A count is this rank's total, so sending it again (after a
    /// resume from an older checkpoint) adds nothing. Returns the bytes this rank sent.
    std::uint64_t ship_bugs() {
        auto* bugs = bugs_;
        io::json out = io::json::array();
        if (bugs && rank() != 0) {
            for (const auto& [key, j] : bugs->all()) {
                const std::uint64_t count = j.value("count", std::uint64_t{1});
                auto& sent = shipped_[key];
                if (count <= sent) continue;
                io::json e = {{"key", key}, {"sightings", count}};
                if (sent == 0) {
                    io::json files = io::json::object();
                    for (const auto& f : std::filesystem::directory_iterator(bugs->dir_of(key)))
                        if (f.is_regular_file()) files[f.path().filename().string()] = to_hex(io::read_file(f.path().string()));
                    e["files"] = files;
                }
                sent = count;
                out.push_back(std::move(e));
            }
        }
        const std::string payload = out.dump();
        const auto all = c_.gather(payload);
        for (std::size_t k = 1; k < all.size() && bugs; ++k)
            for (const auto& e : io::json::parse(all[k])) {
                std::map<std::string, std::string> files;
                if (e.contains("files"))
                    for (const auto& [name, hex] : e.at("files").items()) files[name] = from_hex(hex.get<std::string>());
                const auto key = e.at("key").get<std::string>();
                bugs->adopt(key, files, e.at("sightings").get<std::uint64_t>(), static_cast<int>(k));
            }
        return payload.size();
    }

    /// Job-wide totals of the other ranks at the last exchange (models generated, valid, executed).
    const std::array<std::uint64_t, 3>& others() const noexcept { return others_; }
    /// Items this rank covered itself (its seeds and the models that raised its coverage).
    const memo_coverage& own() const noexcept { return own_; }

    /// Gathers every rank's stats.json to rank 0 (collective), which then holds the job's:
    /// `ranks`, `per_rank` (each rank's figures and own coverage, its items in hex words), the
    /// counters summed over the ranks, and `cluster` (exchanges, models shared, bytes).
    void merge_stats(io::json& stats) {
        const auto* bugs = bugs_;
        io::json mine = {{"rank", rank()}, {"seed", stats.value("seed", std::uint64_t{0})}, {"seconds", stats.value("seconds", 0.0)}};
        for (const char* k : summed) mine[k] = stats.value(k, std::uint64_t{0});
        io::json cov = io::json::object(), items = io::json::object();
        for (auto k : all_criteria) {
            cov[std::string(name_of(k))] = {{"covered", own_.covered(k)}, {"total", own_.total(k)}};
            std::string hex;
            for (auto w : own_.items(k).words()) hex += fmt::format("{:016x}", w);
            items[std::string(name_of(k))] = hex;
        }
        mine["coverage"] = cov;
        mine["coverage_items"] = items;
        std::uint64_t stored = 0;  // by this rank (rank 0 also holds those the others sent)
        if (bugs)
            for (const auto& [key, j] : bugs->all()) stored += !j.contains("rank");
        mine["bugs_stored"] = stored;
        for (const char* k : {"bugs", "memo"}) mine[k] = stats.value(k, io::json::object());
        mine["exchange"] = {{"syncs", syncs_}, {"models_shared", shared_}, {"models_adopted", adopted_}, {"bytes_sent", bytes_}, {"seconds", seconds_}};
        const auto all = c_.gather(mine.dump());
        stats["rank"] = rank();
        if (rank() != 0) return;
        io::json per = io::json::array();
        for (const auto& s : all) per.push_back(io::json::parse(s));
        for (const char* k : summed) {
            std::uint64_t total = 0;
            for (const auto& p : per) total += p.at(k).get<std::uint64_t>();
            if (stats.contains(k)) stats[k] = total;
        }
        // Sightings and memo hits add up; the unique counts are rank 0's store's already.
        for (const char* o : {"bugs", "memo"})
            if (stats.contains(o))
                for (auto& [k, v] : stats[o].items())
                    if (!k.starts_with("unique") && v.is_number()) {
                        double total = 0;
                        for (const auto& p : per) total += p.at(o).value(k, 0.0);
                        v = v.is_number_unsigned() ? io::json(static_cast<std::uint64_t>(total)) : io::json(total);
                    }
        const double secs = std::max(stats.value("seconds", 0.0), 1e-9);
        stats["models_per_second"] = static_cast<double>(stats.value("models_generated", std::uint64_t{0})) / secs;
        stats["valid_per_second"] = static_cast<double>(stats.value("models_valid", std::uint64_t{0})) / secs;
        std::uint64_t shared = 0, adopted = 0, bytes = 0;
        for (const auto& p : per) {
            shared += p.at("exchange").at("models_shared").get<std::uint64_t>();
            adopted += p.at("exchange").at("models_adopted").get<std::uint64_t>();
            bytes += p.at("exchange").at("bytes_sent").get<std::uint64_t>();
        }
        stats["ranks"] = size();
        stats["per_rank"] = per;
        stats["cluster"] = {{"syncs", syncs_},
                            {"sync_seconds", o_.seconds},
                            {"share", o_.share},
                            {"models_shared", shared},
                            {"models_adopted", adopted},
                            {"bytes_sent", bytes},
                            {"coverage_bytes_per_sync", coverage_bytes()}};
    }

    /// The bytes of one rank's coverage words (what each exchange's OR moves per rank).
    std::uint64_t coverage_bytes() const {
        std::uint64_t n = 0;
        for (auto k : all_criteria) n += 8 * own_.items(k).words().size();
        return n;
    }

    /// What a checkpoint keeps of the exchange, and its restoring.
    io::json save() const {
        return {{"own", save_coverage(own_)}, {"syncs", syncs_},    {"shared", shared_}, {"adopted", adopted_}, {"bytes", bytes_},
                {"seconds", seconds_},        {"shipped", shipped_}};
    }
    void restore(const io::json& j) {
        restore_coverage(own_, j.at("own"));
        syncs_ = j.at("syncs"), shared_ = j.at("shared"), adopted_ = j.at("adopted"), bytes_ = j.at("bytes"), seconds_ = j.at("seconds");
        j.at("shipped").get_to(shipped_);
    }

private:
    // A bug's files travel in JSON, which holds text only (model.onnx is binary): in hex.
    static std::string to_hex(const std::string& bytes) {
        static constexpr char digits[] = "0123456789abcdef";
        std::string r;
        r.reserve(2 * bytes.size());
        for (unsigned char c : bytes) r += digits[c >> 4], r += digits[c & 15];
        return r;
    }
    static std::string from_hex(const std::string& hex) {
        auto value = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
        std::string r(hex.size() / 2, '\0');
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<char>(value(hex[2 * i]) << 4 | value(hex[2 * i + 1]));
        return r;
    }

    static constexpr const char* summed[] = {"iterations", "models_generated", "models_valid", "models_diverse", "models_executed"};
    communicator& c_;
    memo_coverage own_;
    exchange_options o_;
    store::bug_store* bugs_;
    std::vector<std::pair<std::size_t, model>> found_;  // since the last exchange, with their gains
    std::map<std::string, std::uint64_t> shipped_;      // bug key -> sightings sent to rank 0
    std::array<std::uint64_t, 3> others_{};
    double next_ = 0;  // campaign time of the next exchange
    std::uint64_t syncs_ = 0, shared_ = 0, adopted_ = 0, bytes_ = 0;
    double seconds_ = 0;  // in exchanges, waiting for the other ranks included
};

}  // namespace memo::cluster

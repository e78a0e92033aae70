#pragma once
// A differential campaign over models of any type: the search generates, every valid mutant runs
// on the libraries under test, the judgement (judge.hpp) gives a verdict, and each new bug is
// stored in the campaign's directory, where it replays. The campaign checkpoints and resumes.
//
//   memo::engine::campaign<my_search, my_codec> c(dir, codec, libraries, {.tolerance = 1e-6});
//   c.run(s, 2000);                            // or, after a stop: c.resume(s, fresh_metric, 2000)
//   memo::engine::replay(dir / "bugs" / "crash-fast", codec, libraries, 1e-6);
//
// Its directory:
//   queue/<iteration>.model   every mutant that raised coverage, as the codec writes it
//   bugs/<signature>/model    the first model that showed each bug; bug.txt says what was seen
//   checkpoint                the search's state after the last step, to resume from
//
// What it asks of a model type, besides what the search asks: a codec (model_codec below) that
// names a model (identity) and writes and reads it (serialisation). It is the engine's loop
// (loop.hpp) with a driver that runs every valid mutant on each library in turn; memo's own
// campaign (campaign/generate.hpp) drives the same loop over its Keras models with more: worker
// processes, a store, localisation.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "error.hpp"
#include "judge.hpp"
#include "loop.hpp"

namespace memo::engine {

/// What a campaign needs of a model: a key that names it, and text that holds it.
///   c.key(m)     -> uint64        equal models, equal keys
///   c.save(m)    -> std::string   text from which load() makes m again
///   c.load(t)    -> expected<M>   the model, or why the text holds none
template <class C, class M>
concept model_codec = requires(const C& c, const M& m, std::string_view text) {
    { c.key(m) } -> std::convertible_to<std::uint64_t>;
    { c.save(m) } -> std::convertible_to<std::string>;
    { c.load(text) } -> std::same_as<expected<M>>;
};

/// A library under test: a name, and what it saw running a model.
template <class M>
struct library {
    std::string name;
    std::function<observation(const M&)> run;
};

/// Runs m on every library and judges what they saw.
template <class M>
verdict test(const M& m, const std::vector<library<M>>& libraries, double tolerance) {
    std::vector<named_observation> seen;
    for (const auto& l : libraries) seen.push_back({l.name, l.run(m)});
    return judge(seen, tolerance);
}

struct campaign_options {
    double tolerance = 1e-6;               // relative, for judge()
    std::uint64_t checkpoint_every = 100;  // steps between checkpoints
};

struct campaign_summary {
    std::uint64_t steps = 0, valid = 0, diverse = 0, tested = 0;
    std::map<std::string, std::uint64_t> bugs;  // signature -> models that showed it
};

namespace detail {

inline void write_text(const std::filesystem::path& f, const std::string& text) {
    const auto tmp = f.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary);
        out << text;
        if (!out) throw error(tmp + ": cannot write");
    }
    std::filesystem::rename(tmp, f);  // whole or not at all
}
inline std::string read_text(const std::filesystem::path& f) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw error(f.string() + ": cannot read");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
inline std::string iteration_name(std::uint64_t i) {
    char b[24];
    std::snprintf(b, sizeof b, "%09llu", static_cast<unsigned long long>(i));
    return b;
}

}  // namespace detail

template <class Search, class Codec>
class campaign {
public:
    using model_type = std::remove_cvref_t<decltype(std::declval<Search&>().models().front())>;
    static_assert(model_codec<Codec, model_type>, "a campaign needs a codec: key(m), save(m) and load(text) (memo::engine::model_codec)");

    campaign(std::filesystem::path dir, Codec codec, std::vector<library<model_type>> libraries, campaign_options o = {})
        : dir_(std::move(dir)), codec_(std::move(codec)), libraries_(std::move(libraries)), o_(o) {}

    /// Runs `steps` steps of a fresh search over a fresh directory (what was there is replaced).
    campaign_summary run(Search& s, std::uint64_t steps) {
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_ / "queue");
        std::filesystem::create_directories(dir_ / "bugs");
        sum_ = {};
        return go(s, steps);
    }

    /// Goes on from the directory's checkpoint for `steps` more steps. `s` is a search made as the
    /// first was (same seeds); `fresh` a metric as the first started with: the coverage is made
    /// again from the seeds and the queue, which hold every model the metric counted.
    template <class Coverage>
    campaign_summary resume(Search& s, Coverage fresh, std::uint64_t steps) {
        std::istringstream in(detail::read_text(dir_ / "checkpoint"));
        auto st = s.save();
        std::string word;
        std::size_t n = 0;
        in >> word >> sum_.steps >> sum_.valid >> sum_.diverse >> sum_.tested;
        if (word != "memo.engine.checkpoint") throw error((dir_ / "checkpoint").string() + ": not a campaign checkpoint");
        in >> n;
        st.models.clear();
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t len = 0;
            in >> len;
            in.get();
            std::string text(len, '\0');
            in.read(text.data(), static_cast<std::streamsize>(len));
            auto m = codec_.load(text);
            if (!m) throw error((dir_ / "checkpoint").string() + ": slot " + std::to_string(i) + ": " + m.reason());
            st.models.push_back(std::move(*m));
        }
        auto read_all = [&](auto& v, std::size_t count) {
            v.resize(count);
            for (auto& x : v) in >> x;
        };
        read_all(st.model_score, n);
        std::size_t ops = 0, seeds = 0, words = 0;
        in >> ops;
        read_all(st.op_score, ops);
        in >> seeds;
        read_all(st.selected, seeds);
        for (auto& w : st.rng) in >> w;
        in >> words;
        read_all(st.selector, words);
        in >> st.initial;
        std::uint64_t bugs = 0;
        in >> bugs;
        for (std::uint64_t i = 0; i < bugs; ++i) {
            std::string sig;
            std::uint64_t k = 0;
            in >> sig >> k;
            sum_.bugs[sig] = k;
        }
        if (!in) throw error((dir_ / "checkpoint").string() + ": truncated");
        if (!(in >> st.seed_size >> st.stalled)) st.seed_size = st.stalled = 0;  // a checkpoint from before the limit grew
        // The coverage: the seeds, then every diverse mutant in the order it was found.
        for (const auto& m : s.models()) fresh.add(m);
        std::vector<std::filesystem::path> queue;
        for (const auto& f : std::filesystem::directory_iterator(dir_ / "queue")) queue.push_back(f.path());
        std::sort(queue.begin(), queue.end());
        for (const auto& f : queue) {
            auto m = codec_.load(detail::read_text(f));
            if (!m) throw error(f.string() + ": " + m.reason());
            fresh.add(*m);
        }
        s.restore(std::move(st), std::move(fresh));
        return go(s, steps);
    }

private:
    /// The campaign loop (loop.hpp) for `steps` more steps: every valid mutant runs on each
    /// library and is judged; a checkpoint every checkpoint_every steps and at the end.
    campaign_summary go(Search& s, std::uint64_t steps) {
        const std::uint64_t end = sum_.steps + steps;
        step_counts n(Search::operator_names().size());
        n.generated = sum_.steps, n.valid = sum_.valid, n.diverse = sum_.diverse;
        driver d{[&] { return n.generated >= end; }, [] { return false; },
                 [&](const auto& r) {
                     sum_.steps = n.generated, sum_.valid = n.valid, sum_.diverse = n.diverse;
                     if (r.valid) {
                         if (r.gain) detail::write_text(dir_ / "queue" / (detail::iteration_name(sum_.steps) + ".model"), codec_.save(*r.mutant));
                         ++sum_.tested;
                         if (const auto v = test(*r.mutant, libraries_, o_.tolerance)) record(*r.mutant, v);
                     }
                     if (sum_.steps % o_.checkpoint_every == 0 || sum_.steps == end) checkpoint(s);
                 }};
        drive(s, n, d);
        return sum_;
    }

    /// A bug's first model is stored; later ones only count.
    void record(const model_type& m, const verdict& v) {
        const auto sig = signature(v);
        if (sum_.bugs[sig]++ > 0) return;
        const auto d = dir_ / "bugs" / sig;
        std::filesystem::create_directories(d);
        detail::write_text(d / "model", codec_.save(m));
        std::string culprits;
        for (const auto& c : v.culprits) culprits += (culprits.empty() ? "" : " ") + c;
        detail::write_text(d / "bug.txt", "kind " + std::string(name_of(v.what)) + "\nculprits " + culprits + "\nmessage " + v.message + "\nstep " +
                                              std::to_string(sum_.steps) + "\n");
    }

    void checkpoint(const Search& s) {
        const auto st = s.save();
        std::ostringstream out;
        out.precision(17);
        out << "memo.engine.checkpoint " << sum_.steps << ' ' << sum_.valid << ' ' << sum_.diverse << ' ' << sum_.tested << '\n';
        out << st.models.size() << '\n';
        for (const auto& m : st.models) {
            const std::string text = codec_.save(m);
            out << text.size() << '\n' << text << '\n';
        }
        auto write_all = [&](const auto& v) {
            for (const auto& x : v) out << x << ' ';
            out << '\n';
        };
        write_all(st.model_score);
        out << st.op_score.size() << '\n';
        write_all(st.op_score);
        out << st.selected.size() << '\n';
        write_all(st.selected);
        write_all(st.rng);
        out << st.selector.size() << '\n';
        write_all(st.selector);
        out << st.initial << '\n' << sum_.bugs.size() << '\n';
        for (const auto& [sig, k] : sum_.bugs) out << sig << ' ' << k << '\n';
        out << st.seed_size << ' ' << st.stalled << '\n';
        detail::write_text(dir_ / "checkpoint", out.str());
    }

    std::filesystem::path dir_;
    Codec codec_;
    std::vector<library<model_type>> libraries_;
    campaign_options o_;
    campaign_summary sum_;
};

/// Runs a stored bug's model again on the libraries: the verdict it gives now (the same signature
/// when the bug reproduces).
template <class M, class Codec>
requires model_codec<Codec, M> verdict replay(const std::filesystem::path& bug_dir, const Codec& codec, const std::vector<library<M>>& libraries,
                                              double tolerance) {
    auto m = codec.load(detail::read_text(bug_dir / "model"));
    if (!m) throw error((bug_dir / "model").string() + ": " + m.reason());
    return test(*m, libraries, tolerance);
}

}  // namespace memo::engine

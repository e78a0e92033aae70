// Does counting RNN states steer a campaign through more of them? Campaigns from the two LSTM
// seed models, with MEMO's coverage alone (the peer) and with MEMO's plus DeepStellar's RNN-state
// coverage (--coverage memo,rnn-state), are scored by one fresh metric whose projections differ
// from the guided search's (so the guided side is not judged on the very grid it chased).
//
//   build/bin/rnn_state_race [--seconds S] [--runs N]   the search alone, S seconds a side on one
//                                                        core, N seeds (default 20 s, 3): its corpus
//                                                        (seeds and every mutant kept) is scored
//   build/bin/rnn_state_race --judge PEER GUIDED        two campaign directories (bench/rnn_state_race.sh
//                                                        runs them with backends): the models each
//                                                        executed, and its queue, are scored
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <memo/campaign/seeds.hpp>
#include <memo/coverage/checkpoint.hpp>
#include <memo/rnn_state/rnn_coverage.hpp>
#include <memo/search/search.hpp>
#include <memo/store/store.hpp>

namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t judge_seed = 1000;  // the judge's projections: the guided searches use 1, 2, 3...

struct score {
    std::uint64_t models = 0, states = 0, transitions = 0, boundary = 0;
};

/// The RNN states and transitions these models reach, on a fresh metric profiled on `seeds`.
score judge(const std::vector<memo::model>& seeds, const std::vector<memo::model>& models) {
    memo::rnn_state::rnn_coverage j(memo::default_registry(), seeds, {.seed = judge_seed});
    for (const auto& m : seeds) j.add(m);
    for (const auto& m : models) j.add(m);
    const auto c = memo::criteria_json(j.criteria());
    return {models.size(), c["rnn_states"]["covered"], c["rnn_transitions"]["covered"], c["rnn_state_boundary"]["covered"]};
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

struct race_result {
    std::uint64_t steps = 0;
    double seconds = 0;
    std::size_t memo = 0;  // MEMO's four criteria, summed
    score s;
};

race_result race(const std::vector<memo::model>& seeds, bool rnn_state, double seconds, std::uint64_t seed) {
    using clock = std::chrono::steady_clock;
    const auto& reg = memo::default_registry();
    memo::memo_coverage cov(reg);
    if (rnn_state) cov.attach(memo::rnn_state::rnn_coverage(reg, seeds, memo::rnn_state::rnn_options{.seed = seed}));
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seeds, std::move(cov), memo::mh_selector(0.05), seed);
    s.set_max_seed_size(160);
    s.context().max_cost = 2'000'000;
    race_result r;
    std::vector<memo::model> kept;
    const auto start = clock::now();
    while ((r.seconds = std::chrono::duration<double>(clock::now() - start).count()) < seconds) {
        const auto step = s.step();
        ++r.steps;
        if (step.gain) kept.push_back(*step.mutant);
    }
    r.memo = s.coverage().covered();
    r.s = judge(seeds, kept);  // after the clock: judging costs neither side time
    return r;
}

int search_race(double seconds, int runs) {
    const auto seeds = memo::campaign::load_seeds("zoo:lstm0-sinewave,lstm2-price", memo::default_registry());
    fmt::print("The search alone, {:.0f} s a side on one core, from lstm0-sinewave and lstm2-price:\n\n", seconds);
    fmt::print("| seed | coverage | steps/s | kept | RNN states | transitions | boundary cells | MEMO items | states / peer |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|\n");
    race_result sum[2];
    for (int k = 0; k < runs; ++k) {
        const auto seed = static_cast<std::uint64_t>(k + 1);
        const race_result peer = race(seeds, false, seconds, seed), with = race(seeds, true, seconds, seed);
        int i = 0;
        for (const auto* r : {&peer, &with}) {
            fmt::print("| {} | {} | {:.0f} | {} | {} | {} | {} | {} | {:.2f} |\n", seed, i ? "memo,rnn-state" : "memo",
                       static_cast<double>(r->steps) / r->seconds, r->s.models, r->s.states, r->s.transitions, r->s.boundary, r->memo,
                       ratio(static_cast<double>(r->s.states), static_cast<double>(peer.s.states)));
            sum[i].s.states += r->s.states, sum[i].s.transitions += r->s.transitions, sum[i].memo += r->memo;
            ++i;
        }
    }
    fmt::print("\nsummed over {} seeds: RNN states {} vs {} ({:.2f}x), transitions {} vs {} ({:.2f}x), MEMO items {} vs {} ({:.2f}x)\n", runs, sum[1].s.states,
               sum[0].s.states, ratio(static_cast<double>(sum[1].s.states), static_cast<double>(sum[0].s.states)), sum[1].s.transitions, sum[0].s.transitions,
               ratio(static_cast<double>(sum[1].s.transitions), static_cast<double>(sum[0].s.transitions)), sum[1].memo, sum[0].memo,
               ratio(static_cast<double>(sum[1].memo), static_cast<double>(sum[0].memo)));
    return 0;
}

/// A campaign directory's seeds, executed models and queue.
struct campaign {
    std::vector<memo::model> seeds, executed, queue;
    memo::io::json stats;
};

campaign read(const fs::path& dir) {
    const auto& reg = memo::default_registry();
    campaign c;
    auto files = [](const fs::path& d) {
        std::vector<fs::path> out;
        for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path());
        std::sort(out.begin(), out.end());
        return out;
    };
    for (const auto& f : files(dir / "seeds")) c.seeds.push_back(memo::io::load_model(f.string(), reg));
    for (const auto& f : files(dir / "queue")) c.queue.push_back(memo::io::load_model(f.string(), reg));
    memo::store::campaign_store st(memo::store::campaign_store::file_in(dir.string()));
    std::set<std::uint64_t> keys;
    st.for_each_execution([&](const memo::store::execution_record& e) { keys.insert(e.model); });
    for (auto k : keys)
        if (auto m = st.find_model(k, reg)) c.executed.push_back(std::move(*m));
    c.stats = memo::io::parse_json_file((dir / "stats.json").string());
    return c;
}

int judge_dirs(const fs::path& peer_dir, const fs::path& guided_dir) {
    const campaign peer = read(peer_dir), guided = read(guided_dir);
    fmt::print(
        "| campaign | coverage | seconds | models executed | RNN states (executed) | transitions (executed) | RNN states (queue) | "
        "transitions (queue) | states / peer (executed) |\n|---|---|---|---|---|---|---|---|---|\n");
    const score pe = judge(peer.seeds, peer.executed);
    for (const auto* c : {&peer, &guided}) {
        const score e = judge(c->seeds, c->executed), q = judge(c->seeds, c->queue);
        fmt::print("| {} | {} | {:.1f} | {} | {} | {} | {} | {} | {:.2f} |\n", (c == &peer ? peer_dir : guided_dir).filename().string(),
                   c->stats.value("coverage_metrics", std::string("memo")), c->stats.value("seconds", 0.0), e.models, e.states, e.transitions, q.states,
                   q.transitions, ratio(static_cast<double>(e.states), static_cast<double>(pe.states)));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 20;
    int runs = 3;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--judge") && i + 2 < argc) return judge_dirs(argv[i + 1], argv[i + 2]);
        if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::stod(argv[++i]);
        else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::stoi(argv[++i]);
        else {
            std::puts(
                "usage: rnn_state_race [--seconds S] [--runs N] | --judge PEER_DIR GUIDED_DIR\n"
                "Without --judge: searches from the LSTM seeds with and without RNN-state coverage, S seconds each\n"
                "(default 20), for N seeds (default 3), and the RNN states their corpora reach. With --judge: the\n"
                "RNN states of the models two campaign directories executed (see bench/rnn_state_race.sh).");
            return std::strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    return search_race(seconds, runs);
}

// MEMO, MEMO_r and MEMO_o side by side (the paper's Figure 8 as a table): each runs the search
// from the reduced zoo seeds for the same time on one core, with no execution, and the table
// gives the coverage each reached at 1, 5, 20 and S seconds, its valid mutants per second, and
// its ratios to MEMO_o (LEMON's operators), the peer measured in the same run.
//   build/bin/search_race [--seconds S]        (default 60)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <memo/campaign/seeds.hpp>
#include <memo/search/search.hpp>

namespace {

struct snapshot {
    double t;
    std::size_t pair, connectable, param, effective, input;
};

struct result {
    std::string name;
    std::uint64_t steps = 0, valid = 0;
    double seconds = 0;
    std::vector<snapshot> at;
};

template <class Ops, class Selector>
result race(const char* name, const std::vector<memo::model>& seeds, double seconds, Selector sel) {
    using clock = std::chrono::steady_clock;
    memo::search<memo::model, Ops, memo::memo_coverage, Selector> s(seeds, memo::memo_coverage(memo::default_registry()), std::move(sel), 1);
    s.set_max_seed_size(160);
    result r;
    r.name = name;
    std::vector<double> marks{1, 5, 20, seconds};
    std::size_t next = 0;
    const auto start = clock::now();
    for (;;) {
        const double t = std::chrono::duration<double>(clock::now() - start).count();
        while (next < marks.size() && t >= marks[next]) {
            const auto& c = s.coverage();
            using memo::criterion;
            r.at.push_back({marks[next], c.covered(criterion::layer_pair), c.covered(criterion::layer_pair_connectable), c.covered(criterion::layer_param),
                            c.covered(criterion::layer_param_effective), c.covered(criterion::layer_input)});
            ++next;
        }
        if (next == marks.size()) {
            r.seconds = t;
            break;
        }
        const auto step = s.step();
        ++r.steps;
        r.valid += step.valid;
    }
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 60;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::stod(argv[++i]);
        else if (!std::strcmp(argv[i], "--help")) {
            std::puts("usage: search_race [--seconds S]\nRuns MEMO, MEMO_r and MEMO_o for S seconds each (default 60) and prints their coverage.");
            return 0;
        }
    }
    const auto seeds = memo::campaign::load_seeds("zoo", memo::default_registry());
    using namespace memo::mutation;
    std::vector<result> rs;
    rs.push_back(race<lemon_operators>("MEMO_o", seeds, seconds, memo::mh_selector(0.05)));
    rs.push_back(race<memo_operators>("MEMO", seeds, seconds, memo::mh_selector(0.05)));
    rs.push_back(race<memo_operators>("MEMO_r", seeds, seconds, memo::random_selector{}));
    const memo::memo_coverage totals(memo::default_registry());
    using memo::criterion;
    fmt::print("coverage after t seconds (totals: pairs {}, connectable {}, params {}, effective params {}, inputs {})\n\n",
               totals.total(criterion::layer_pair), totals.total(criterion::layer_pair_connectable), totals.total(criterion::layer_param),
               totals.total(criterion::layer_param_effective), totals.total(criterion::layer_input));
    fmt::print("| run | t (s) | pairs | connectable | params | effective params | inputs |\n|---|---|---|---|---|---|---|\n");
    for (const auto& r : rs)
        for (const auto& a : r.at) fmt::print("| {} | {:.0f} | {} | {} | {} | {} | {} |\n", r.name, a.t, a.pair, a.connectable, a.param, a.effective, a.input);
    const auto& peer = rs[0];
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    fmt::print(
        "\n| run | steps/s | valid mutants/s | valid % | pairs / MEMO_o | params / MEMO_o | inputs / MEMO_o | valid/s / MEMO_o |\n|---|---|---|---|---|---|---|---|\n");
    for (const auto& r : rs) {
        const auto& e = r.at.back();
        const auto& p = peer.at.back();
        const double vps = static_cast<double>(r.valid) / r.seconds, pvps = static_cast<double>(peer.valid) / peer.seconds;
        fmt::print("| {} | {:.0f} | {:.0f} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", r.name, static_cast<double>(r.steps) / r.seconds, vps,
                   100.0 * static_cast<double>(r.valid) / static_cast<double>(std::max<std::uint64_t>(1, r.steps)),
                   ratio(static_cast<double>(e.pair), static_cast<double>(p.pair)), ratio(static_cast<double>(e.param), static_cast<double>(p.param)),
                   ratio(static_cast<double>(e.input), static_cast<double>(p.input)), ratio(vps, pvps));
    }
    return 0;
}

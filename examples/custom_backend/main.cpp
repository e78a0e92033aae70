// custom_backend: memo tests a DL library of your own. tiny_nn (tiny_nn.hpp) is wrapped as a memo
// backend (tiny_backend.hpp); memo's search generates models made of tiny_nn's layers, and the
// differential oracle runs each on tiny_nn and on memo's reference interpreter. Twice over: tiny_nn
// as it should be, and tiny_nn with its planted softmax bug switched on (options::fast_softmax).
// A fixed seed and step count: the output is the same on every run.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <memo/all.hpp>

#include "tiny_backend.hpp"

namespace {

constexpr std::uint64_t search_seed = 1;
constexpr int steps = 6000;

/// One build of tiny_nn against memo's reference interpreter (in the model's dtypes), judged by the
/// differential oracle with the float64 reference as the ground truth; and what it saw.
struct tester {
    memo::in_process<tiny_memo::backend> lib;
    memo::in_process<memo::reference::interpreter> peer{memo::reference::interpreter()};
    memo::oracle::differential diff;

    int ran = 0;
    std::map<std::string, int> verdicts, localised;
    std::optional<memo::model> first_model;
    memo::oracle::verdict first;

    tester(tiny::options o, std::string name, memo::reference::interpreter& truth, const memo::registry& reg)
        : lib(tiny_memo::backend(o, std::move(name))), diff({&lib, &peer}, truth, reg) {}

    void check(const memo::model& m) {
        const auto v = diff.check(m);
        if (diff.last_skipped()) return;  // tiny_nn declined it (the search's filter keeps this from happening)
        ++ran;
        if (!v) return;
        ++verdicts[std::string(memo::oracle::name_of(v.what))];
        ++localised[v.layer.empty() ? "(not localised)" : v.layer];
        if (!first_model) first_model = m, first = v;
    }
};

/// "InputLayer (None, 5, 4) -> Softmax axis=-2": the parameters not at their defaults
std::string describe(const memo::model& m) {
    std::string s;
    for (const auto& n : m.nodes) {
        s += (s.empty() ? "" : " -> ") + std::string(n.layer->name);
        if (n.layer->arity.max == 0) {
            s += " " + n.out.str();
            continue;
        }
        for (std::size_t j = 0; j < n.params.size(); ++j)
            if (n.layer->params[j].what != memo::role::inert && !(n.params[j] == n.layer->params[j].fallback))
                s += " " + std::string(n.layer->params[j].name) + "=" + memo::to_string(n.params[j]);
    }
    return s;
}

}  // namespace

int main() {
    const memo::registry& reg = tiny_memo::registry();
    const auto seed_models = tiny_memo::seeds(reg);

    memo::reference::interpreter truth(memo::dtype::float64);
    tester good(tiny::options{}, "tiny", truth, reg);
    tester buggy(tiny::options{.fast_softmax = true}, "tiny-fast", truth, reg);

    // MEMO's search over tiny_nn's layers; each model that raises coverage runs on both builds.
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seed_models, memo::memo_coverage(reg),
                                                                                                        memo::mh_selector(0.05), search_seed);
    // Only mutants tiny_nn runs: a diverse mutant replaces its parent, so one tiny_nn declines (a
    // float16 cast, say) would leave every descendant unrunnable too. Why it declined is counted.
    std::map<std::string, int> declined_because;
    s.set_filter([&](const memo::model& m) {
        auto ok = tiny_memo::backend().supports(m);
        if (!ok) ++declined_because[ok.reason()];
        return ok;
    });
    s.set_max_seed_size(40);           // small models run fast
    s.context().max_cost = 2'000'000;  // multiply-adds per sample (layers/cost.hpp)
    int valid = 0, diverse = 0;
    for (int i = 0; i < steps; ++i) {
        const auto r = s.step();
        valid += r.valid;
        if (!r.gain) continue;
        ++diverse;
        good.check(*r.mutant);
        buggy.check(*r.mutant);
    }

    const auto& c = s.coverage();
    using memo::criterion;
    fmt::print("tiny_nn, wrapped as a memo backend, against memo's reference interpreter\n");
    fmt::print("search: {} steps from {} seed models (seed {}): {} valid, {} raised coverage and ran\n", steps, seed_models.size(), search_seed, valid,
               diverse);
    fmt::print("coverage of tiny_nn's layers: types {}/{}, pairs {}/{}, params {}/{}, inputs {}/{}\n\n", c.covered(criterion::layer_type),
               c.total(criterion::layer_type), c.covered(criterion::layer_pair), c.total(criterion::layer_pair), c.covered(criterion::layer_param),
               c.total(criterion::layer_param), c.covered(criterion::layer_input), c.total(criterion::layer_input));

    fmt::print("{:<10} {:>5} {:>6} {:>4} {:>14} {:>6}\n", "library", "ran", "crash", "nan", "inconsistency", "shape");
    for (tester* t : {&good, &buggy})
        fmt::print("{:<10} {:>5} {:>6} {:>4} {:>14} {:>6}\n", t->lib.name(), t->ran, t->verdicts["crash"], t->verdicts["nan"], t->verdicts["inconsistency"],
                   t->verdicts["shape"]);

    // Why tiny_nn declined mutants, most frequent first.
    std::vector<std::pair<int, std::string>> why;
    int declined = 0;
    for (const auto& [reason, count] : declined_because) why.emplace_back(-count, reason), declined += count;
    std::sort(why.begin(), why.end());
    fmt::print("\nthe search discarded {} mutants tiny_nn declines, most often:\n", declined);
    for (std::size_t i = 0; i < std::min<std::size_t>(4, why.size()); ++i) fmt::print("  {:>4}  {}\n", -why[i].first, why[i].second);

    for (tester* t : {&good, &buggy}) {
        if (!t->first_model) continue;
        fmt::print("\n{}'s verdicts localise to:", t->lib.name());
        for (const auto& [layer, count] : t->localised) fmt::print(" {} ({})", layer, count);
        const auto& v = t->first;
        fmt::print("\nfirst: {} on node {} ({}, fed by {})", memo::oracle::name_of(v.what), v.node, v.layer, v.producer);
        if (const auto* d = v.differs()) fmt::print(", D_MAD {:.2f}", d->dmad);
        fmt::print("\n");
        // The oracle shrinks a failing model to the smallest one that still fails the same way.
        const auto small = t->diff.minimise(*t->first_model, v);
        fmt::print("minimised ({} to {} nodes): {}\n", t->first_model->size(), small.m.size(), describe(small.m));
    }
    return 0;
}

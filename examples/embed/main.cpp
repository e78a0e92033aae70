// embed: memo as one header. This program includes single_include/memo/memo.hpp and nothing of
// include/: copy that file into a project (Eigen, {fmt}, range-v3 and nlohmann/json on its include
// path, fmt linked) and this is all it takes to generate diverse, valid models.
#include <fmt/core.h>

#include <memo/memo.hpp>

int main() {
    const memo::registry& reg = memo::default_registry();
    const auto seeds = memo::campaign::load_seeds("zoo", reg);  // MEMO's ten seed models, reduced

    // MEMO's search (Algorithm 2). A fixed seed and step count give the same models on every run.
    const int steps = 500;
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(
        seeds, memo::memo_coverage(reg), memo::mh_selector(0.05), 42);
    int valid = 0, diverse = 0;
    for (int i = 0; i < steps; ++i) {
        const auto r = s.step();
        valid += r.valid;
        diverse += r.gain != 0;
    }

    fmt::print("{} steps from {} seed models: {} valid, {} raised coverage\n", steps, seeds.size(), valid, diverse);
    for (auto k : memo::all_criteria) fmt::print("{:<24} {:>5} / {}\n", memo::name_of(k), s.coverage().covered(k), s.coverage().total(k));
    return 0;
}

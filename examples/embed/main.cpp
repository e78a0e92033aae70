// embed: memo as one header. This program includes single_include/memo/memo.hpp and nothing of
// include/: copy that file into a project (it needs the standard library alone) and this is all
// it takes to generate diverse, valid models.
#include <cstdio>

#include <memo/memo.hpp>

int main() {
    const memo::registry& reg = memo::default_registry();
    std::vector<memo::model> seeds;  // MEMO's ten seed models, reduced
    for (auto name : memo::zoo::names()) seeds.push_back(memo::reduce(memo::zoo::build(name, reg), reg).reduced);

    // MEMO's search (Algorithm 2). A fixed seed and step count give the same models on every run.
    const int steps = 500;
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seeds, memo::memo_coverage(reg),
                                                                                                        memo::mh_selector(0.05), 42);
    int valid = 0, diverse = 0;
    for (int i = 0; i < steps; ++i) {
        const auto r = s.step();
        valid += r.valid;
        diverse += r.gain != 0;
    }

    std::printf("%d steps from %zu seed models: %d valid, %d raised coverage\n", steps, seeds.size(), valid, diverse);
    for (auto k : memo::all_criteria) std::printf("%-24s %5zu / %zu\n", std::string(memo::name_of(k)).c_str(), s.coverage().covered(k), s.coverage().total(k));
    return 0;
}

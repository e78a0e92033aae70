// Built by both packaging test projects (find_package/, add_subdirectory/) as memo-package-test.
// Model generation through memo::memo alone, which links nothing compiled: a seed model of the
// zoo, reduced, and a few steps of MEMO's search over it.
#include <cstdio>

#include <memo/memo.hpp>

int main() {
    const memo::registry& reg = memo::default_registry();
    std::vector<memo::model> seeds{memo::reduce(memo::zoo::build("lenet5-mnist", reg), reg).reduced};
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seeds, memo::memo_coverage(reg),
                                                                                                        memo::mh_selector(0.05), 1);
    int valid = 0;
    for (int i = 0; i < 20; ++i) valid += s.step().valid;
    std::printf("%d of 20 mutants valid\n", valid);
    return valid > 0 ? 0 : 1;
}

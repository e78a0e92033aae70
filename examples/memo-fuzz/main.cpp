// memo-fuzz: the command-line tool over the memo library.
#include <filesystem>

#include "cli.hpp"
#include "inspect.hpp"

namespace commands {

/// The main job of `make demo`: the registry, the coverage universe, and MEMO's ten seeds.
inline int demo(const cli::args& a) {
    a.only({"seeds"});
    namespace fs = std::filesystem;
    const std::string dir = a.get_or("seeds", MEMO_DATA_DIR "/memo/synthesized_models");
    const auto& reg = memo::default_registry();
    memo::memo_coverage total(reg);
    fmt::print("memo: {} layer classes in the registry, {} in MEMO's coverage universe\n", reg.size(), total.total(memo::criterion::layer_type));
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw memo::error(dir + ": no .json seed models");
    fmt::print("importing {} seed models from {}\n", files.size(), dir);
    for (const auto& f : files) {
        const auto m = memo::io::load_keras(f.string(), reg);
        const auto d = total.add(m);
        fmt::print("  {:<52} {:>3} layers  +{} types +{} pairs +{} params +{} inputs\n", f.filename().string(), m.size(),
                   d[memo::criterion::layer_type], d[memo::criterion::layer_pair], d[memo::criterion::layer_param],
                   d[memo::criterion::layer_input]);
    }
    fmt::print("coverage of the seeds together:\n");
    print_coverage(total);
    return 0;
}

}  // namespace commands

int main(int argc, char** argv) {
    auto cmds = commands::inspect_commands();
    cmds.push_back({"demo", "demo [--seeds DIR]",
                    "The main job of `make demo`: prints the registry and coverage universe sizes, then imports\n"
                    "MEMO's ten seed models and prints the coverage they reach.\n\n"
                    "  --seeds DIR   Keras JSON files to import (default: MEMO's seeds in tests/data)",
                    {"seeds"}, commands::demo});
    return cli::dispatch(cmds, argc, argv, "memo-fuzz",
                         "generate diverse, valid deep-learning models and test DL libraries with them");
}

#pragma once
// Where a campaign's seed models come from: the paper's ten architectures, reduced ("zoo"), or
// a directory of model files (memo's JSON or Keras JSON).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../io/json.hpp"
#include "../io/keras.hpp"
#include "../reduce/reduce.hpp"
#include "../zoo/zoo.hpp"

namespace memo::campaign {

/// Loads one model file: memo's format when it says so, Keras' model.to_json() otherwise.
inline model load_any(const std::string& path, const registry& reg) {
    const auto j = io::parse_json_file(path);
    if (j.is_object() && j.value("format", "") == "memo.model") return io::load_model(path, reg);
    return io::load_keras(path, reg);
}

/// "zoo": the ten seed architectures, each reduced (Algorithm 1); otherwise a directory whose
/// .json files are loaded in name order. Throws memo::error naming the file and the cause.
inline std::vector<model> load_seeds(const std::string& spec, const registry& reg) {
    std::vector<model> seeds;
    if (spec == "zoo") {
        for (auto name : zoo::names()) seeds.push_back(reduce(zoo::build(name, reg)).reduced);
        return seeds;
    }
    namespace fs = std::filesystem;
    if (!fs::is_directory(spec)) throw error(spec + ": not a directory (give --seeds zoo or a directory of model files)");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(spec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) seeds.push_back(load_any(f.string(), reg));
    if (seeds.empty()) throw error(spec + ": no .json model files");
    return seeds;
}

}  // namespace memo::campaign

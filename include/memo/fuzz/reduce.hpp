#pragma once
// memo-fuzz reduce: seed reduction (MEMO's Algorithm 1) and the figures of the paper's Table 5.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "../all.hpp"
#include "../reduce/reduce.hpp"
#include "../zoo/zoo.hpp"

#include "backends.hpp"
#include "cli.hpp"

namespace memo {
// A reduction's figures, as `memo-fuzz reduce --json` prints them (the model goes to --out).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(reduction, layers_before, layers_after, weights_before, weights_after, flops_before, flops_after, ms, coverage_preserved)
}  // namespace memo

namespace memo::fuzz::commands {

namespace reduce_cmd {

struct named_model {
    std::string name;
    memo::model m;
};

/// The name a file's model goes by: its file name without .json (and .keras) or .onnx.
inline std::string stem_of(const std::string& path) {
    std::string s = std::filesystem::path(path).filename().string();
    for (const char* ext : {".json", ".keras", ".onnx"})
        if (s.size() > std::string(ext).size() && s.ends_with(ext)) s.resize(s.size() - std::string(ext).size());
    return s;
}

inline std::vector<named_model> inputs(const cli::args& a, const memo::registry& reg) {
    std::vector<named_model> out;
    const auto zoo = a.get("zoo");
    if (zoo && !a.positional().empty()) throw memo::error("give --zoo NAME|all or model files, not both");
    if (zoo) {
        if (*zoo == "all")
            for (auto n : memo::zoo::names()) out.push_back({std::string(n), memo::zoo::build(n, reg)});
        else out.push_back({*zoo, memo::zoo::build(*zoo, reg)});
        return out;
    }
    if (a.positional().empty()) throw memo::error("expects --zoo NAME|all or one or more model files (see --help)");
    for (const auto& path : a.positional()) {
        std::string name = stem_of(path);
        for (int k = 2;; ++k) {  // two files of the same name: the second is name_2
            bool taken = false;
            for (const auto& x : out) taken = taken || x.name == name;
            if (!taken) break;
            name = stem_of(path) + "_" + std::to_string(k);
        }
        out.push_back({name, memo::campaign::load_any(path, reg, model_readers())});
    }
    return out;
}

}  // namespace reduce_cmd

inline int reduce(const cli::args& a) {
    const auto& reg = memo::fuzz::setup().layers();
    const auto models = reduce_cmd::inputs(a, reg);
    const auto out_dir = a.get("out");
    if (out_dir) {
        if (out_dir->empty()) throw memo::error("--out needs a directory");
        std::error_code ec;
        std::filesystem::create_directories(*out_dir, ec);
        if (ec) throw memo::error(*out_dir + ": cannot create directory: " + ec.message());
    }

    memo::io::json rows = memo::io::json::array();
    bool all_preserved = true;
    struct sums {
        double layers_before = 0, layers_after = 0, weights_before = 0, weights_after = 0, flops_before = 0, flops_after = 0, ms = 0;
    } total;
    std::vector<std::pair<std::string, memo::reduction>> results;
    for (const auto& [name, m] : models) {
        auto r = memo::reduce(m, reg);
        all_preserved = all_preserved && r.coverage_preserved;
        if (out_dir) {
            const auto base = (std::filesystem::path(*out_dir) / name).string();
            memo::io::write_file(base + ".json", memo::io::model_to_json(r.reduced).dump(1) + "\n");
            memo::io::write_file(base + ".keras.json", memo::io::keras_to_json(r.reduced).dump(1) + "\n");
        }
        rows.push_back(r);
        rows.back()["name"] = name;
        total.layers_before += static_cast<double>(r.layers_before);
        total.layers_after += static_cast<double>(r.layers_after);
        total.weights_before += static_cast<double>(r.weights_before);
        total.weights_after += static_cast<double>(r.weights_after);
        total.flops_before += static_cast<double>(r.flops_before);
        total.flops_after += static_cast<double>(r.flops_after);
        total.ms += r.ms;
        results.emplace_back(name, std::move(r));
    }

    if (a.has("json")) {
        fmt::print("{}\n", rows.dump(2));
    } else {
        std::size_t w = 7;  // "average"
        for (const auto& [name, r] : results) w = std::max(w, name.size());
        fmt::print("{:<{}} {:>13} {:>12} {:>14} {:>13} {:>16} {:>15} {:>8}  {}\n", "name", w, "layers_before", "layers_after", "weights_before",
                   "weights_after", "flops_before", "flops_after", "ms", "coverage_preserved");
        for (const auto& [name, r] : results)
            fmt::print("{:<{}} {:>13} {:>12} {:>14} {:>13} {:>16} {:>15} {:>8.2f}  {}\n", name, w, r.layers_before, r.layers_after, r.weights_before,
                       r.weights_after, r.flops_before, r.flops_after, r.ms, r.coverage_preserved);
        const double n = static_cast<double>(results.size());
        fmt::print("{:<{}} {:>13.2f} {:>12.2f} {:>14.0f} {:>13.0f} {:>16.0f} {:>15.0f} {:>8.2f}  {}\n", "average", w, total.layers_before / n,
                   total.layers_after / n, total.weights_before / n, total.weights_after / n, total.flops_before / n, total.flops_after / n, total.ms / n,
                   all_preserved);
    }
    return all_preserved ? 0 : 1;
}

inline cli::command reduce_command() {
    return {"reduce",
            "reduce (--zoo NAME|all | FILE...) [--json] [--out DIR]",
            "Seed reduction (MEMO's Algorithm 1): reduces each model to a small one that covers exactly the\n"
            "same items under layer_type, layer_pair, layer_param and layer_input, and prints the figures\n"
            "of the paper's Table 5: layers (every node, InputLayer and adapters included), weights (as\n"
            "Keras' count_params), multiply-adds per sample, the time the reduction took, and whether the\n"
            "reduced model is valid with exactly the original's items. See docs/reduction.md.\n\n"
            "FILE... are model files: memo's model JSON (\"format\": \"memo.model\") or Keras' model.to_json(),\n"
            "or ONNX (.onnx); a model is named after its file (without .json).",
            {cli::valued("zoo", "NAME", "a seed model of the zoo (lenet5-mnist, resnet50-imagenet, ...) instead of files; --zoo all: the ten"),
             cli::flag("json",
                       "an array of {\"name\", \"layers_before\", \"layers_after\", \"weights_before\", \"weights_after\", \"flops_before\", "
                       "\"flops_after\", \"ms\", \"coverage_preserved\"} (default: a table with those columns and an average row)"),
             cli::valued("out", "DIR", "also write each reduced model as DIR/<name>.json (memo's format) and DIR/<name>.keras.json (Keras)")},
            reduce,
            "Exits 1 on bad input (a missing or malformed file, an unknown zoo name) and when a model's\n"
            "reduction did not keep its coverage."};
}

}  // namespace memo::fuzz::commands

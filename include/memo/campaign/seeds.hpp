#pragma once
// Where a campaign's seed models come from: the paper's ten architectures, reduced ("zoo"), or
// a directory of model files (memo's JSON, Keras JSON, and formats the caller adds: ONNX).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../io/json.hpp"
#include "../io/keras.hpp"
#include "../layers/cost.hpp"
#include "../reduce/reduce.hpp"
#include "../zoo/zoo.hpp"

namespace memo::campaign {

/// Loads one model file: memo's format when it says so, Keras' model.to_json() otherwise.
inline model load_any(const std::string& path, const registry& reg) {
    const auto j = io::parse_json_file(path);
    if (j.is_object() && j.value("format", "") == "memo.model") return io::load_model(path, reg);
    return io::load_keras(path, reg);
}

/// The model made cheap to run: while its execution cost (layers/cost.hpp) is above `max_cost`,
/// halve the filters or units of its costliest layer (while above 8), else the largest dimension
/// of an input, taking the first change that shape inference accepts. Structure, layers and the
/// other parameter values stay as they were.
inline model fit_to_cost(model m, std::int64_t max_cost) {
    for (int guard = 0; guard < 200 && execution_cost(m) > max_cost; ++guard) {
        std::vector<std::size_t> order(m.size());
        for (std::size_t i = 0; i < m.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return node_flops(m, a) > node_flops(m, b); });
        std::vector<model> moves;
        for (std::size_t i : order)
            for (std::string_view p : {"filters", "units"})
                if (m.nodes[i].layer->param_index(p) >= 0 && as_int(m.nodes[i].param(p)) > 8) {
                    model c = m;
                    c.nodes[i].set(p, std::int64_t{as_int(m.nodes[i].param(p)) / 2});
                    moves.push_back(std::move(c));
                }
        for (int i : m.input_nodes()) {
            const auto dims = std::get<ints>(m[i].param("shape"));
            std::vector<int> axes;
            for (int d = 0; d < dims.n; ++d) axes.push_back(d);
            std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return dims[a] > dims[b]; });
            for (int d : axes)
                if (dims[d] > 1) {
                    model c = m;
                    auto nd = dims;
                    nd[d] = (dims[d] + 1) / 2;
                    c[i].set("shape", nd);
                    moves.push_back(std::move(c));
                }
        }
        bool changed = false;
        for (auto& c : moves)
            if (infer_shapes(c) && execution_cost(c) < execution_cost(m)) {
                m = std::move(c);
                changed = true;
                break;
            }
        if (!changed) break;
    }
    return m;
}

/// Readers of model files by extension (".onnx" -> memo::onnx::load_onnx, say), for formats whose
/// libraries the core does not link. ".json" (memo's or Keras' JSON) is always read.
using model_readers = std::map<std::string, std::function<model(const std::string& path, const registry&)>, std::less<>>;

/// A model file in any format `readers` knows, or JSON.
inline model load_any(const std::string& path, const registry& reg, const model_readers& readers) {
    const auto ext = std::filesystem::path(path).extension().string();
    if (const auto it = readers.find(ext); it != readers.end()) return it->second(path, reg);
    return load_any(path, reg);
}

/// "zoo": the ten seed architectures, each reduced (Algorithm 1); "zoo:NAME,NAME": some of them
/// (say, zoo:lstm0-sinewave,lstm2-price); otherwise a directory whose model files (.json, and the
/// extensions of `readers`) are loaded in name order. Throws memo::error naming the file and the cause.
inline std::vector<model> load_seeds(const std::string& spec, const registry& reg, const model_readers& readers = {}) {
    std::vector<model> seeds;
    if (spec == "zoo") {
        for (auto name : zoo::names()) seeds.push_back(reduce(zoo::build(name, reg), reg).reduced);
        return seeds;
    }
    if (spec.rfind("zoo:", 0) == 0) {
        for (std::size_t at = 4; at <= spec.size();) {
            const auto end = std::min(spec.find(',', at), spec.size());
            const auto name = spec.substr(at, end - at);
            if (std::find(zoo::names().begin(), zoo::names().end(), name) == zoo::names().end()) {
                std::string known;
                for (auto n : zoo::names()) known += (known.empty() ? "" : ", ") + std::string(n);
                throw error("--seeds " + spec + ": no zoo model '" + name + "' (" + known + ")");
            }
            seeds.push_back(reduce(zoo::build(name, reg), reg).reduced);
            at = end + 1;
        }
        return seeds;
    }
    namespace fs = std::filesystem;
    if (!fs::is_directory(spec)) throw error(spec + ": not a directory (give --seeds zoo or a directory of model files)");
    std::string known = ".json";
    for (const auto& [ext, read] : readers) known += ", " + ext;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(spec))
        if (const auto ext = e.path().extension().string(); ext == ".json" || readers.count(ext)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) seeds.push_back(load_any(f.string(), reg, readers));
    if (seeds.empty()) throw error(spec + ": no model files (" + known + ")");
    return seeds;
}

}  // namespace memo::campaign

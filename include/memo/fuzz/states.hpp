#pragma once
// memo-fuzz states: DeepStellar's coverage-guided testing of one recurrent model's inputs
// (rnn_state/input_fuzz.hpp), with its five criteria as it goes and at the end.
#include <chrono>
#include <filesystem>
#include <string>

#include <fmt/core.h>

#include "../campaign/progress.hpp"
#include "../campaign/seeds.hpp"
#include "../rnn_state/input_fuzz.hpp"
#include "../zoo/zoo.hpp"

#include "backends.hpp"
#include "cli.hpp"
#include "run.hpp"

namespace memo::fuzz::commands {

namespace states_cmd {

inline memo::io::json values_json(const memo::rnn_state::criteria_values& v) {
    auto one = [](const memo::rnn_state::criterion_value& c) { return memo::io::json{{"covered", c.covered}, {"total", c.total}, {"ratio", c.ratio()}}; };
    return {{"basic_state", one(v.basic_state)},
            {"boundary", one(v.boundary)},
            {"weighted_state", one(v.weighted_state)},
            {"basic_transition", one(v.basic_transition)},
            {"weighted_transition", one(v.weighted_transition)}};
}

inline std::string line(const memo::rnn_state::input_fuzzer& f, double t) {
    const auto v = f.values();
    return fmt::format("[{:6.1f}s] {} inputs, {} kept | state {:.3f} boundary {:.3f} weighted {:.3f} | transition {:.3f} weighted {:.3f}", t, f.iterations(),
                       f.queue().size(), v.basic_state.ratio(), v.boundary.ratio(), v.weighted_state.ratio(), v.basic_transition.ratio(),
                       v.weighted_transition.ratio());
}

/// The model a states command reads: a zoo model or a file.
inline memo::model model_of(const cli::args& a, const memo::registry& reg) {
    if (const auto zoo = a.get("zoo")) {
        if (!a.positional().empty()) throw memo::error("give --zoo NAME or a model file, not both");
        return memo::campaign::load_seeds("zoo:" + *zoo, reg).at(0);
    }
    if (a.positional().size() != 1) throw memo::error("expects one model file, or --zoo NAME (see --help)");
    return memo::campaign::load_any(a.positional()[0], reg, model_readers());
}

/// The input fuzzer's options from the command line.
inline memo::rnn_state::input_fuzz_options options_of(const cli::args& a) {
    memo::rnn_state::input_fuzz_options o;
    const auto mode = a.value("abstraction");
    if (mode != "pca" && mode != "grid") throw memo::error("--abstraction " + mode + ": pca or grid");
    o.fitted = mode == "pca";
    o.seed = a.count("seed");
    o.grid.components = static_cast<int>(a.count("components"));
    o.grid.intervals = static_cast<int>(a.count("intervals"));
    o.grid.bits = static_cast<int>(a.count("bits"));
    o.boundary_steps = static_cast<int>(a.count("boundary"));
    o.linf = a.number("linf");
    o.l0 = static_cast<std::int64_t>(a.count("l0"));
    o.profile_samples = static_cast<std::int64_t>(a.count("profile"));
    return o;
}

/// --out: the model, each kept input (inputs/NNNNNN.json) and the figures.
inline void write_out(const std::string& out, const memo::model& m, const memo::rnn_state::input_fuzzer& f, const memo::io::json& stats) {
    namespace fs = std::filesystem;
    fs::create_directories(fs::path(out) / "inputs");
    memo::io::write_file((fs::path(out) / "model.json").string(), memo::io::model_to_json(m).dump() + "\n");
    for (std::size_t i = 0; i < f.queue().size(); ++i) {
        memo::io::json j = {{"root", f.queue()[i].root}, {"inputs", memo::io::json::array()}};
        for (const auto& x : f.queue()[i].inputs) j["inputs"].push_back({{"dims", x.dims}, {"data", x.data}});
        memo::io::write_file((fs::path(out) / "inputs" / fmt::format("{:06}.json", i)).string(), j.dump() + "\n");
    }
    memo::io::write_file((fs::path(out) / "stats.json").string(), stats.dump(2) + "\n");
}

}  // namespace states_cmd

inline int states(const cli::args& a) {
    using clock = std::chrono::steady_clock;
    const auto& reg = memo::fuzz::setup().layers();
    const memo::model m = states_cmd::model_of(a, reg);
    const auto mode = a.value("abstraction");
    const memo::rnn_state::input_fuzz_options o = states_cmd::options_of(a);
    const double seconds = a.number("seconds");
    const auto iterations = a.count("iterations");

    const auto start = clock::now();
    memo::rnn_state::input_fuzzer f(m, o);
    memo::campaign::progress bar;
    auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
    while ((!iterations || f.iterations() < iterations) && elapsed() < seconds) {
        f.step();
        if (!a.has("quiet") && bar.due(clock::now())) bar.show(states_cmd::line(f, elapsed()), clock::now());
    }
    const double t = elapsed();
    if (!a.has("quiet")) bar.finish(states_cmd::line(f, t));

    const memo::io::json stats = {{"seconds", t},
                                  {"seed", o.seed},
                                  {"abstraction", mode},
                                  {"iterations", f.iterations()},
                                  {"kept", f.queue().size()},
                                  {"recurrent_layers", f.layers()},
                                  {"states_seen", f.seen_states()},
                                  {"criteria", states_cmd::values_json(f.values())}};
    if (const auto out = a.get("out")) states_cmd::write_out(*out, m, f, stats);
    if (a.has("json")) {
        fmt::print("{}\n", stats.dump(2));
        return 0;
    }
    const auto v = f.values();
    fmt::print("{} inputs in {:.1f} s, {} kept, {} recurrent layer(s), {} states seen\n", f.iterations(), t, f.queue().size(), f.layers(), f.seen_states());
    for (auto [name, c] : {std::pair{"basic state", v.basic_state},
                           {"k-step boundary", v.boundary},
                           {"weighted state", v.weighted_state},
                           {"basic transition", v.basic_transition},
                           {"weighted transition", v.weighted_transition}})
        fmt::print("  {:<20} {:>8} / {:<8} {:.3f}\n", name, c.covered, c.total, c.ratio());
    return 0;
}

inline cli::command states_command() {
    const memo::rnn_state::input_fuzz_options o;
    using cli::flag, cli::valued;
    return {"states",
            "states (MODEL | --zoo NAME) [--seconds S] [--iterations N] [--seed N] [--abstraction pca|grid] [--out DIR] [--json]",
            "DeepStellar's coverage-guided testing of one recurrent model's inputs: the model is profiled on\n"
            "seeded random inputs (each recurrent layer's hidden states, PCA to K components, a grid of M\n"
            "intervals over each component's profiled range, and the Markov chain of the resulting cells), then\n"
            "inputs are mutated (at most L0 elements a time, each within LINF of its root input) and kept when\n"
            "they reach a state or transition none before did. Seeds are picked by DeepStellar's scheduler\n"
            "(probability max(0.3, 0.8 - 0.1 fuzzed/5)). Prints the five criteria: basic state, k-step boundary,\n"
            "weighted state, basic transition and weighted transition coverage (see docs/rnn-state.md).\n\n"
            "MODEL is a model file (.json, .onnx) with a SimpleRNN, GRU, LSTM, Bidirectional or ConvLSTM.",
            {valued("zoo", "NAME", "a zoo model instead (lstm0-sinewave, lstm2-price)"), valued("seconds", "S", "time limit", "10"),
             valued("iterations", "N", "mutation limit; 0: none", "0"),
             valued("seed", "N", "random seed: profiling inputs, projections, mutations", std::to_string(o.seed)),
             valued("abstraction", "pca|grid", "PCA fitted on the profile, or the fixed grid over [-1, 1] with seeded projections", o.fitted ? "pca" : "grid"),
             valued("components", "K", "components a state keeps", std::to_string(o.grid.components)),
             valued("intervals", "M", "intervals per component", std::to_string(o.grid.intervals)),
             valued("bits", "B", "bits a component takes in a cell; B x K must fit 64", std::to_string(o.grid.bits)),
             valued("boundary", "K", "the k of the k-step boundary", std::to_string(o.boundary_steps)),
             valued("linf", "E", "how far an element may move from its root input", typed(o.linf)),
             valued("l0", "N", "elements one mutation changes; 0: a tenth of them", std::to_string(o.l0)),
             valued("profile", "N", "profiling inputs", std::to_string(o.profile_samples)),
             valued("out", "DIR", "write DIR/stats.json, DIR/model.json and every kept input to DIR/inputs/"), flag("json", "print the figures as JSON"),
             flag("quiet", "no progress line")},
            states};
}

}  // namespace memo::fuzz::commands

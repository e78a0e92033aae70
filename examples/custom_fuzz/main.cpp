// custom_fuzz: memo-fuzz's commands for a library of your own, from one call. tiny_nn (the library
// of examples/custom_backend, with its planted softmax bug on) joins memo::fuzz as the backend
// "tiny", with the registry of the layers it runs and seed models of them. Then
//
//   custom_fuzz run --backends reference,tiny --seconds 30 --out runs/tiny
//   runs/tiny/bugs/<kind>/<signature>/repro.sh      (calls custom_fuzz replay: it knows "tiny")
//   custom_fuzz report runs/tiny
//
// and every other command (run-model, replay, reduce, stats, ...) work on tiny_nn as memo-fuzz's
// do on libtorch. test.sh runs a campaign and replays what it found.
#include <memo/fuzz/main.hpp>

#include "../custom_backend/tiny_backend.hpp"

namespace {

/// Seed models of layers tiny_nn runs (memo's zoo holds layers it lacks). None holds a Softmax:
/// finding the bug is left to the search.
std::vector<memo::model> tiny_seeds(const memo::registry& reg) {
    std::vector<memo::model> out;
    {  // a multi-layer perceptron
        memo::builder b(reg);
        int x = b.input({16});
        x = b.add("Dense", {x}, {{"units", 24}, {"activation", "relu"}});
        b.add("Dense", {x}, {{"units", 8}, {"activation", "tanh"}});
        out.push_back(b.finish());
    }
    {  // a 1-D convolutional net
        memo::builder b(reg);
        int x = b.input({20, 3});
        x = b.add("Conv1D", {x}, {{"filters", 6}, {"kernel_size", memo::ints{3}}, {"padding", "same"}, {"activation", "relu"}});
        x = b.add("Flatten", {x});
        b.add("Dense", {x}, {{"units", 4}, {"activation", "sigmoid"}});
        out.push_back(b.finish());
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    auto& t = memo::fuzz::setup();
    t.program = "custom_fuzz";
    t.reg = &tiny_memo::registry();
    t.seeds = tiny_seeds;
    memo::fuzz::backend_kind tiny;
    tiny.name = "tiny";
    tiny.make = [](const memo::registry& reg, memo::isolation_limits lim, bool isolate) -> std::unique_ptr<memo::executor> {
        auto make = [] { return tiny_memo::backend(tiny::options{.fast_softmax = true}); };
        if (isolate) return memo::make_isolated<tiny_memo::backend>(make, reg, lim);
        return memo::make_in_process(make());
    };
    t.backends.push_back(std::move(tiny));
    return memo::fuzz::main(argc, argv);
}

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

int main(int argc, char** argv) {
    auto& t = memo::fuzz::setup();
    t.program = "custom_fuzz";
    t.reg = &tiny_memo::registry();
    t.seeds = tiny_memo::seeds;  // memo's zoo holds layers tiny_nn lacks
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

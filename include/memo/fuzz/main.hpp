#pragma once
// memo-fuzz's commands as a library: a program of the user's gets them (run, replay, run-model,
// reduce, report, selftest, ...) with its own backends added, from one call:
//
//   #include <memo/fuzz/main.hpp>
//   int main(int argc, char** argv) {
//       memo::fuzz::setup().program = "mylib-fuzz";
//       memo::fuzz::setup().backends.push_back({"mylib", [](const memo::registry& reg, memo::isolation_limits lim, bool isolate) {
//           ...  // memo::make_isolated<mylib_backend>(...) or memo::make_in_process(mylib_backend())
//       }});
//       return memo::fuzz::main(argc, argv);
//   }
//
// Each bug's repro.sh then calls this program's own replay command (the program's path is
// recorded when the campaign runs), so a bug found on the user's library replays on it.
// examples/memo-fuzz/main.cpp is memo-fuzz itself: this call, with libtorch and ONNX Runtime.
#include "backends.hpp"
#include "cli.hpp"
#include "inspect.hpp"
#include "reduce.hpp"
#include "replay.hpp"
#include "report.hpp"
#include "report_bug.hpp"
#include "run.hpp"
#include "selftest.hpp"
#include "states.hpp"
#include "stats.hpp"

namespace memo::fuzz {

/// Every command: memo::fuzz's, then the program's own (toolkit::commands).
inline std::vector<cli::command> all_commands() {
    auto cmds = commands::inspect_commands();
    cmds.push_back(commands::run_command());
    cmds.push_back(commands::reduce_command());
    cmds.push_back(commands::selftest_command());
    for (auto& c : commands::execution_commands()) cmds.push_back(std::move(c));
    for (auto& c : commands::report_commands()) cmds.push_back(std::move(c));
    cmds.push_back(commands::report_bug_command());
    cmds.push_back(commands::stats_command());
    cmds.push_back(commands::states_command());
    cmds.push_back(commands::backends_command());
    for (const auto& c : setup().commands) cmds.push_back(c);
    return cmds;
}

/// Runs the command argv names; its exit status.
inline int main(int argc, char** argv) {
    // The selftest's faulty copy of the reference, so that its bugs replay.
    if (!commands::find_backend("faulty")) setup().backends.push_back(commands::detail::selftest::faulty_kind());
    return cli::dispatch(all_commands(), argc, argv, setup().program.c_str(), "generate diverse, valid deep-learning models and test DL libraries with them");
}

}  // namespace memo::fuzz

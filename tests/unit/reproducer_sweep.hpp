#pragma once
// The sweep of a library's reproducers over every layer class (tests/tfjs, tests/onnx, tests/keras,
// tests/pytorch): for each class, a random single-layer model that the library, with a fault
// planted in it, computes otherwise than the reference; its reproducer (oracle/reproducers.hpp,
// written by the library's worker) must show the planted fault, and run again on the clean
// library, exit 0. The fault is planted by tests/data/planted_library/ (node_planted.js through
// NODE_OPTIONS for Node's packages, sitecustomize.py through PYTHONPATH for Python's) and
// MEMO_PLANTED_FAULT: the faulty worker starts (and restarts) with them, the clean run goes without.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/oracle/reproducers.hpp>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "support.hpp"

namespace test {

struct sweep_options {
    std::string fault;                                       // MEMO_PLANTED_FAULT
    std::vector<std::pair<std::string, std::string>> plant;  // the variables that plant it
    std::string runner;                                      // what runs a script on the clean library
    std::function<bool(const memo::model&)> supports;
    std::function<bool(std::string_view)> known;  // a class the clean library may compute otherwise too
    int max_classes = 0;                          // stop after this many classes with a model gotten wrong (0: all)
};

struct sweep_result {
    int classes = 0;                   // classes with a model the faulty library got wrong
    std::vector<std::string> without;  // of them, classes no model of which gave a reproducer that held
    std::string excused;               // classes every model of which met a known fault on the clean library
};

/// The backends among `ours` that MEMO_REPRODUCER_SWEEP names (a comma-separated list): sweeps
/// that import a Python library twice a class take minutes, and run when asked for.
inline std::vector<std::string> sweeps_asked(const std::vector<std::string>& ours) {
    std::vector<std::string> names;
    const char* asked = std::getenv("MEMO_REPRODUCER_SWEEP");
    for (std::string rest = asked ? asked : ""; !rest.empty();) {
        const auto comma = rest.find(',');
        const auto name = rest.substr(0, comma);
        if (std::find(ours.begin(), ours.end(), name) != ours.end()) names.push_back(name);
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    return names;
}

/// `faulty` is made by `make` once the fault is planted.
template <class Make>
sweep_result sweep_reproducers(const sweep_options& o, Make make) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("memo-reproducers-" + o.fault + "-" + std::to_string(::getpid()));
    const auto plant = [&](bool on) {
        for (const auto& [name, value] : o.plant) on ? ::setenv(name.c_str(), value.c_str(), 1) : ::unsetenv(name.c_str());
        on ? ::setenv("MEMO_PLANTED_FAULT", o.fault.c_str(), 1) : ::unsetenv("MEMO_PLANTED_FAULT");
    };
    plant(true);
    auto faulty = make();
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
    memo::reference::interpreter truth(memo::dtype::float64);
    std::vector<memo::executor*> xs{&ref, &faulty};
    memo::oracle::differential diff(xs, truth, reg());
    memo::rng r(20261128);
    sweep_result out;
    for (const auto& L : reg()) {
        if (L.arity.max == 0) continue;
        if (o.max_classes > 0 && out.classes >= o.max_classes) break;
        bool drawn = false, held = false;
        for (int k = 0; k < 40 && !held; ++k) {
            const auto m = random_layer_model(L, r);
            if (!m || !o.supports(*m)) continue;
            plant(true);
            if (diff.check(*m).what != memo::oracle::kind::inconsistency) continue;  // declined, or NaN wherever it is off
            drawn = true;
            const fs::path where = dir / std::string(L.name);
            const auto w = memo::oracle::write_reproducers(diff, *m, where.string());
            if (w.culprits.size() != 1 || !w.culprits[0].shows) {
                ADD_FAILURE() << L.name << ": the reproducer does not show the planted fault: " << (w.culprits.empty() ? "" : w.culprits[0].said) << "\n"
                              << describe(*m);
                break;
            }
            plant(false);
            const std::string run =
                "cd '" + where.string() + "' && " + o.runner + " " + fs::path(w.culprits[0].script).filename().string() + " >clean.out 2>&1";
            const int status = std::system(run.c_str());
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            if (code == 0) held = true;
            else if (code != 1 || !o.known(L.name))  // a known fault's class may differ clean too: another model
                ADD_FAILURE() << L.name << ": on the clean library the reproducer exits " << code << "\n" << describe(*m);
        }
        if (!drawn) continue;
        ++out.classes;
        if (held) continue;
        if (o.known(L.name)) out.excused += " " + std::string(L.name);
        else out.without.push_back(std::string(L.name));
    }
    plant(false);
    std::error_code ec;
    fs::remove_all(dir, ec);
    std::string missing;
    for (const auto& n : out.without) missing += " " + n;
    std::printf("%d layer classes: a reproducer for each shows the planted fault and passes on the clean library%s%s%s%s\n",
                out.classes - static_cast<int>(out.without.size()),
                out.excused.empty() ? "" : "; a known fault shows on the clean library for:", out.excused.c_str(),
                out.without.empty() ? "" : "; none held for:", missing.c_str());
    return out;
}

}  // namespace test

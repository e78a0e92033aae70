#pragma once
// A bug's reproducers in its libraries' own terms. The model is judged again by the differential
// oracle; then each culprit whose worker writes reproducers (executor::writes_reproducers) writes
// one into a folder (a script that imports only its library, with the model's data beside it) and
// runs it there, as a maintainer would. What the script checks is what the oracle measured: the
// node where the fault shows, its float64 value and the most rounding explains there.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "differential.hpp"

namespace memo::oracle {

struct reproducer_written {
    std::string backend;
    std::string script;  // its path: .py from a Python worker, .js from a Node one
    std::string said;    // "shows the fault (exit 1): <the script's last line>", or why none was written
    bool written = false, shows = false;
};

struct reproducers_written {
    verdict v;  // the verdict of the model judged again (none: the bug did not show)
    std::vector<reproducer_written> culprits;
};

/// Judges `m` again and has each culprit write its reproducer into `directory` (files named
/// repro_<backend>.*) and run it. A culprit whose worker writes none is listed with written false.
inline reproducers_written write_reproducers(differential& diff, const model& m, const std::string& directory) {
    namespace fs = std::filesystem;
    reproducers_written out;
    out.v = diff.check(m);
    const verdict& v = out.v;
    if (!v) return out;
    reproducer_request q;
    q.directory = fs::absolute(directory).string();
    std::string culprits;
    for (const auto& c : v.culprits) culprits += (culprits.empty() ? "" : ",") + c;
    q.title = std::string(name_of(v.what)) + " on " + culprits + (v.layer.empty() ? "" : " at " + v.layer) + (v.message.empty() ? "" : ": " + v.message) +
              " (memo signature " + signature(v, m) + ")";
    // The node where the fault shows against the float64 reference, and the most rounding explains
    // there (what the oracle measured on identical inputs; else the rule without measured slack).
    // A shape bug's check is the same: the script shows the shape the library gives against it.
    const auto check = [&](int k, double measured) {
        const auto& truth = diff.truth_values();
        const auto i = static_cast<std::size_t>(k);
        if (i >= truth.size()) return;
        const double bound = measured > 0 ? measured : rounding_bound(m, i, magnitude(truth[i]), input_magnitude(m, i, truth), 0.0);
        q.checks.push_back({k, truth[i], std::isfinite(bound) ? bound : 0.0});  // a NaN bound would excuse anything
    };
    if ((v.what == kind::inconsistency || v.what == kind::nan || v.what == kind::shape) && v.node >= 0) check(v.node, v.at_node.bound);
    else if (of_rewritten_graph(v))  // a fault of the rewritten graph shows in the model's outputs alone
        for (int k : m.outputs) check(k, 0.0);
    for (const auto& c : v.culprits) {
        reproducer_written w;
        w.backend = c;
        executor* x = diff.by_name(c);
        if (!x || !x->writes_reproducers()) {
            w.said = "writes no reproducer";
            out.culprits.push_back(std::move(w));
            continue;
        }
        q.stem = "repro_" + c;
        std::replace(q.stem.begin(), q.stem.end(), '-', '_');
        const double limit = x->time_limit();
        x->set_time_limit(std::max(limit, 600000.0));  // the script imports its library again, and may compile
        run_options o;
        o.reproducer = &q;
        const auto r = x->run(m, diff.last_inputs(), o);
        x->set_time_limit(limit);
        if (!r.ok()) {
            w.said = "no reproducer: " + r.message;
            out.culprits.push_back(std::move(w));
            continue;
        }
        fs::path script = fs::path(q.directory) / (q.stem + ".py");  // Python's workers write .py, Node's .js
        if (!fs::exists(script)) script.replace_extension(".js");
        w.script = script.string();
        w.said = r.message;
        w.written = true;
        w.shows = r.message.starts_with("shows");
        out.culprits.push_back(std::move(w));
    }
    return out;
}

}  // namespace memo::oracle

#pragma once
// The execution stage's counts: of the models it executed, skipped, left out and found bugs in,
// and per backend of the runs and how they ended. Kept with each checkpoint (their JSON is the
// checkpoint's), written into stats.json.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../backends/backend.hpp"
#include "../io/json.hpp"
#include "../oracle/oracle.hpp"

namespace memo::campaign {

/// One backend's runs: how many, how each ended, the time and memory they took.
struct backend_tally {
    std::uint64_t runs = 0;
    std::array<std::uint64_t, run_status_count> status{};
    double ms = 0, cpu_ms = 0, compile_ms = 0;  // compile_ms: the part of ms the library spent compiling
    std::int64_t peak_kb = 0;

    void add(const run_result& r) {
        ++runs;
        ++status[static_cast<std::size_t>(r.status)];
        ms += r.ms, cpu_ms += r.cpu_ms, compile_ms += r.compile_ms;
        peak_kb = std::max(peak_kb, r.peak_kb);
    }
    std::uint64_t declined() const { return status[static_cast<std::size_t>(run_status::unsupported)]; }
    /// Its entry in stats.json's "executions"; `restarts`: of its workers.
    io::json stats(std::uint64_t restarts) const {
        io::json st = io::json::object();
        for (std::size_t k = 0; k < status.size(); ++k)
            if (status[k]) st[std::string(run_status_names[k])] = status[k];
        return {{"runs", runs},           {"status", st},
                {"ms_total", ms},         {"ms_mean", runs ? ms / static_cast<double>(runs) : 0.0},
                {"cpu_ms_total", cpu_ms}, {"compile_ms_total", compile_ms},
                {"peak_kb_max", peak_kb}, {"restarts", restarts}};
    }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(backend_tally, runs, status, ms, cpu_ms, compile_ms, peak_kb)

struct execution_tally {
    std::uint64_t executed = 0;                   // judged, or counted by a stored judgement
    std::uint64_t runs = 0, hits = 0;             // of them: run on the backends; whose stored judgement counted instead (memo hits)
    double saved_ms = 0;                          // the backends' time those judgements took when they were made
    std::uint64_t single_backend = 0;             // left unjudged: fewer than two backends took them
    std::uint64_t too_costly = 0, too_large = 0;  // not run: over execution_options' max_cost, max_bytes
    std::uint64_t suppressed = 0;                 // outputs differed, no node to blame: rounding
    std::uint64_t all_failed = 0;                 // every backend failed
    std::uint64_t known_sightings = 0;            // bugs of a root cause already reported (execution_options::known_root_causes)
    std::uint64_t resource_checks = 0;            // models run again for the resource oracles
    std::map<std::string, std::uint64_t> found;   // sightings of bugs, by kind
    std::map<std::string, backend_tally> per_backend;

    /// A model's runs, one per backend.
    void ran(const std::vector<oracle::observation>& obs) {
        for (const auto& o : obs) per_backend[o.backend].add(o.result);
    }
    /// A sighting of a bug of kind k.
    void sighted(oracle::kind k) { ++found[std::string(oracle::name_of(k))]; }
    std::uint64_t sightings(const std::string& kind) const {
        const auto it = found.find(kind);
        return it == found.end() ? 0 : it->second;
    }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(execution_tally, executed, runs, hits, saved_ms, single_backend, too_costly, too_large, suppressed, all_failed,
                                                known_sightings, resource_checks, found, per_backend)

}  // namespace memo::campaign

#pragma once
// What a report reads back from a campaign directory (docs/campaign-directory.md): stats.json,
// coverage.csv, bugs/*/*/bug.json, and the coverage itself, recomputed from seeds/ and queue/.
// Every file is optional: a campaign that was killed, or is still running, still gets a report
// of what it wrote so far.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../coverage/coverage.hpp"
#include "../io/json.hpp"

namespace memo::report {

/// coverage.csv: a header of column names, then rows of numbers.
struct csv_table {
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;

    int column(std::string_view name) const {
        auto it = std::find(columns.begin(), columns.end(), name);
        return it == columns.end() ? -1 : static_cast<int>(it - columns.begin());
    }
};

inline csv_table read_csv(const std::filesystem::path& path) {
    csv_table t;
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return t;
    std::stringstream head(line);
    for (std::string c; std::getline(head, c, ',');) t.columns.push_back(c);
    while (std::getline(in, line)) {
        std::vector<double> row;
        std::stringstream cells(line);
        for (std::string c; std::getline(cells, c, ',');) {
            try {
                row.push_back(std::stod(c));
            } catch (const std::exception&) {
                row.clear();
                break;
            }
        }
        if (row.size() == t.columns.size()) t.rows.push_back(std::move(row));  // a torn last line is skipped
    }
    return t;
}

/// One stored bug, from its bug.json.
struct bug_entry {
    std::string kind, signature;
    std::string path;  // relative to the campaign directory: bugs/<kind>/<signature>
    io::json data;     // bug.json
    bool has_onnx = false;
};

struct campaign_data {
    std::filesystem::path dir;
    std::string name;               // the directory's name
    std::optional<io::json> stats;  // absent while the campaign runs, or when it was killed
    csv_table coverage;
    std::vector<bug_entry> bugs;  // by first sighting
    std::size_t unreadable = 0;   // bug.json or queue/seed files that could not be read
};

inline campaign_data read_campaign(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw error(dir.string() + ": not a directory");
    campaign_data c;
    c.dir = dir;
    c.name = fs::weakly_canonical(dir).filename().string();
    if (fs::exists(dir / "stats.json")) c.stats = io::parse_json_file((dir / "stats.json").string());
    c.coverage = read_csv(dir / "coverage.csv");
    if (!c.stats && c.coverage.columns.empty()) throw error(dir.string() + ": not a campaign directory (neither stats.json nor coverage.csv)");
    if (fs::is_directory(dir / "bugs"))
        for (const auto& k : fs::directory_iterator(dir / "bugs")) {
            if (!k.is_directory() || k.path().filename() == ".tmp") continue;  // unfinished writes
            for (const auto& b : fs::directory_iterator(k.path())) {
                if (!fs::exists(b.path() / "bug.json")) continue;
                try {
                    bug_entry e{k.path().filename().string(), b.path().filename().string(),
                                "bugs/" + k.path().filename().string() + "/" + b.path().filename().string(),
                                io::parse_json_file((b.path() / "bug.json").string()), fs::exists(b.path() / "minimal.onnx")};
                    c.bugs.push_back(std::move(e));
                } catch (const std::exception&) {
                    ++c.unreadable;
                }
            }
        }
    auto first_seen = [](const bug_entry& b) { return b.data.value("first_seen", io::json::object()).value("seconds", 0.0); };
    std::sort(c.bugs.begin(), c.bugs.end(),
              [&](const bug_entry& a, const bug_entry& b) { return first_seen(a) != first_seen(b) ? first_seen(a) < first_seen(b) : a.path < b.path; });
    return c;
}

/// The campaign's coverage: its seeds' and every queued model's (the queue holds every model that
/// raised coverage, so the union is what the search covered). Unreadable files are counted.
inline memo_coverage replay_coverage(const std::filesystem::path& dir, const registry& reg, std::size_t* unreadable = nullptr) {
    namespace fs = std::filesystem;
    memo_coverage cov(reg);
    io::model_reader read(reg);  // the queue's models share their weights files
    for (const char* sub : {"seeds", "queue"}) {
        if (!fs::is_directory(dir / sub)) continue;
        for (const auto& f : fs::directory_iterator(dir / sub)) {
            if (f.path().extension() != ".json") continue;
            try {
                cov.add(read(f.path().string()));
            } catch (const std::exception&) {
                if (unreadable) ++*unreadable;
            }
        }
    }
    return cov;
}

}  // namespace memo::report

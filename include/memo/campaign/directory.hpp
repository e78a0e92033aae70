#pragma once
// What a campaign writes into its directory besides its store (store.db) and its bugs
// (store/bugs.hpp), one method per kind of output:
//   seeds/NNN.json        the seed models, as the campaign started from them
//   queue/NNNNNNNNN.json  each model that raised coverage, named by its iteration, with its origin
//   weights/DIGEST.json   given weights (an imported seed's) the queue's models refer to, once each
//   coverage.csv          a row a second: time, models generated, valid and executed, each criterion
//   stats.json, report.html   at the end
// A resumed campaign truncates what came after its checkpoint (queue files and csv rows), which
// the loop then makes again.
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/core.h>

#include "../coverage/checkpoint.hpp"
#include "../io/background_writer.hpp"
#include "../io/json.hpp"
#include "../report/report.hpp"

namespace memo::campaign {

class campaign_directory {
public:
    explicit campaign_directory(std::filesystem::path dir) : dir_(std::move(dir)) {}

    const std::filesystem::path& path() const noexcept { return dir_; }

    /// A fresh campaign: seeds/, queue/ and weights/ made anew (a store's runs and bugs stay), the seeds
    /// written, and coverage.csv started with its header: the criteria, then `extra` and `more`
    /// (an extra metric's and the execution stage's columns), by name.
    void start(const std::vector<model>& seeds, const io::json& extra, const io::json& more) {
        namespace fs = std::filesystem;
        fs::remove_all(dir_ / "queue");
        fs::remove_all(dir_ / "seeds");
        fs::remove_all(dir_ / "weights");
        kept_.clear();
        fs::create_directories(dir_ / "queue");
        fs::create_directories(dir_ / "seeds");
        for (std::size_t i = 0; i < seeds.size(); ++i)
            io::write_file((dir_ / "seeds" / fmt::format("{:03}.json", i)).string(), io::model_to_json(seeds[i]).dump() + "\n");
        csv_.open(dir_ / "coverage.csv");
        csv_ << "seconds,models,valid,executed";
        for (auto k : all_criteria) csv_ << ',' << name_of(k);
        for (const auto& [name, v] : extra.items()) csv_ << ',' << name;
        for (const auto& [name, v] : more.items()) csv_ << ',' << name;
        csv_ << '\n';
        check();
    }

    /// A resumed campaign at its checkpoint: the queue past iteration `generated` and the csv
    /// past `csv_bytes` go.
    void resume(std::uint64_t generated, std::uint64_t csv_bytes) {
        namespace fs = std::filesystem;
        for (const auto& f : fs::directory_iterator(dir_ / "queue"))
            if (std::strtoull(f.path().stem().string().c_str(), nullptr, 10) > generated) fs::remove(f.path());
        fs::resize_file(dir_ / "coverage.csv", csv_bytes);
        csv_.open(dir_ / "coverage.csv", std::ios::app);
        check();
    }

    /// One coverage.csv row at campaign time t: models generated, valid and executed, each
    /// criterion's covered items, then the values of `extra` (their "covered") and `more`.
    void row(double t, std::array<std::uint64_t, 3> models, const memo_coverage& c, const io::json& extra, const io::json& more) {
        csv_ << fmt::format("{:.3f},{},{},{}", t, models[0], models[1], models[2]);
        for (auto k : all_criteria) csv_ << ',' << c.covered(k);
        for (const auto& [name, v] : extra.items()) csv_ << ',' << v.at("covered").dump();
        for (const auto& [name, v] : more.items()) csv_ << ',' << v.dump();
        csv_ << '\n';
    }

    /// coverage.csv's length so far, flushed (a checkpoint keeps it, to truncate to on resume).
    std::uint64_t csv_bytes() {
        csv_.flush();
        return static_cast<std::uint64_t>(csv_.tellp());
    }

    /// A queued model's given weights into weights/DIGEST.json, written once (a campaign over an
    /// imported model queues hundreds of mutants with its megabytes): what model_to_json hands
    /// them to.
    void keep(const given_weights& g) {
        const auto file = dir_ / "weights" / (hex(g.digest) + ".json");
        if (!kept_.insert(g.digest).second || std::filesystem::exists(file)) return;
        std::filesystem::create_directories(file.parent_path());
        files_.write(file.string(), io::weights_file_json(g).dump() + "\n");
    }

    /// A model that raised coverage at `iteration`, given as its JSON (io::model_to_json with its
    /// weights kept, which the store keeps too), with where it came from: written on the writer's
    /// thread.
    void queue(const std::string& model_json, std::uint64_t iteration, const io::json& origin) {
        std::string text = model_json;
        if (text.size() < 2 || text.back() != '}') throw error("queue: a model's JSON is not an object");
        text.pop_back();
        text += (text.size() > 1 ? ",\"origin\":" : "\"origin\":") + origin.dump() + "}\n";
        files_.write((dir_ / "queue" / fmt::format("{:09}.json", iteration)).string(), std::move(text));
    }

    /// Returns once the queue's files are written (a checkpoint names what is in queue/).
    void flush() { files_.flush(); }

    /// The campaign's end: stats.json, then report.html.
    void finish(const io::json& stats, const memo_coverage& c) {
        flush();
        io::write_file((dir_ / "stats.json").string(), stats.dump(2) + "\n");
        report::write_report(dir_, c);
    }

private:
    void check() {
        if (!csv_) throw error((dir_ / "coverage.csv").string() + ": cannot write");
    }

    std::filesystem::path dir_;
    std::ofstream csv_;
    io::background_writer files_;
    std::unordered_set<std::uint64_t> kept_;  // weights written or found in weights/
};

}  // namespace memo::campaign

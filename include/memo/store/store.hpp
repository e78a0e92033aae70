#pragma once
// The campaign store, DIR/store.db (SQLite, WAL): what a campaign generated, ran and covered, so
// that it never has to start over.
//
//   models       key -> the model's JSON (every model that was run, raised coverage, or seeded),
//                given weights referred to by digest
//   weights      digest -> given weights (an imported model's), once for all its mutants
//   generated    iteration -> model key, parent key, operator, coverage gain (every valid mutant)
//   coverage     criterion, item -> the iteration that first covered it
//   executions   (model, backend, dtype, inputs) -> status, output digest, per-node digests,
//                wall time, peak memory, error text
//   judgements   (model, inputs, backends) -> the oracle's verdict kind and bug signature: a model
//                judged once is not run again (memoisation)
//   checkpoint   the search's and the execution's whole state at an iteration (resume)
//   divergences  replays that gave another answer than the stored one
//   runs         one row per invocation: its options (what resume reads back)
//
// The search's rows (generated, coverage) are committed with each checkpoint, in one transaction,
// so the store always holds a consistent prefix of the campaign; a resumed campaign regenerates
// what came after it. Executions and judgements are committed one by one as they finish: a
// SIGKILL loses at most the one being written.
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../backends/backend.hpp"
#include "../io/json.hpp"
#include "encode.hpp"
#include "sqlite.hpp"

namespace memo::store {

/// One run of one model on one backend, as stored.
struct execution_record {
    std::uint64_t model = 0;
    std::string backend;
    std::string dtype = "native";  // "native": as the model says; "float64": the reference's ground truth
    std::string inputs;            // inputs_text() of the input options
    run_status status = run_status::ok;
    digest outputs;
    std::vector<digest> nodes;  // every node's output, in node order, when the run was traced
    double ms = 0;
    std::int64_t peak_kb = 0;
    std::string message;
};

/// The oracle's verdict on a model, as stored ("none" when the backends agreed; "skipped" when
/// fewer than two backends took it).
struct judgement {
    std::string kind, signature;
    double ms = 0;  // the backends' run time it took (what a memo hit saves)
};

struct checkpoint {
    std::uint64_t iteration = 0;
    double seconds = 0;
    io::json state;
};

struct divergence {
    std::uint64_t model = 0;
    std::string backend, dtype, inputs;
    std::string what;  // "status ok -> crash", "node 3", "outputs"
    int node = -1;     // the first node whose digest differs (-1: not traced, or a status change)
    std::string layer;
};

inline run_status status_from(std::string_view s) {
    for (std::size_t k = 0; k < run_status_count; ++k)
        if (run_status_names[k] == s) return static_cast<run_status>(k);
    return run_status::error;
}

class campaign_store {
public:
    static std::filesystem::path file_in(const std::filesystem::path& dir) { return dir / "store.db"; }

    explicit campaign_store(const std::filesystem::path& file) : db_(file.string()) {}

    const std::string& file() const noexcept { return db_.file(); }

    /// Records an invocation and its options (a resumed one reads them back with last_options()).
    void begin_run(const io::json& options, bool resumed) {
        db_.prepare("INSERT INTO runs(started, resumed, options) VALUES(julianday('now'), ?, ?)").bind(1, resumed ? 1 : 0).bind(2, options.dump()).run();
    }
    std::optional<io::json> last_options() {
        auto q = db_.prepare("SELECT options FROM runs ORDER BY id DESC LIMIT 1");
        if (!q.next()) return std::nullopt;
        return io::json::parse(q.text(0));
    }

    // ---- models ----------------------------------------------------------------------------
    /// A model under its key (model_key), once: a campaign meets the same model when it raises
    /// coverage, when it runs and when a checkpoint names it, and only the first writes its JSON.
    void add_model(std::uint64_t key, const model& m) {
        if (!added_.contains(key)) add_model_json(key, io::model_to_json(m, [this](const given_weights& g) { keep(g); }).dump());
    }
    /// The same, with the model's JSON printed already (io::model_to_json, its given weights kept).
    void add_model_json(std::uint64_t key, const std::string& json) {
        if (!added_.insert(key).second) return;
        add_model_.bind(1, key).bind(2, json).run();
    }
    /// A model's given weights into the weights table, once a digest (what model_to_json hands
    /// them to).
    void keep(const given_weights& g) {
        if (!kept_.emplace(g.digest, nullptr).second) return;
        db_.prepare("INSERT OR IGNORE INTO weights(digest, json) VALUES(?, ?)").bind(1, g.digest).bind(2, io::weights_file_json(g).dump()).run();
    }
    std::optional<model> find_model(std::uint64_t key, const registry& reg) {
        auto q = db_.prepare("SELECT json FROM models WHERE key = ?");
        q.bind(1, key);
        if (!q.next()) return std::nullopt;
        return io::model_from_json(io::json::parse(q.text(0)), reg, file() + ": model " + hex(key),
                                   [this](std::uint64_t digest) { return find_weights(digest); });
    }

    // ---- the search's records, committed with the next checkpoint ---------------------------
    void add_generated(std::uint64_t iteration, std::uint64_t key, std::uint64_t parent, std::string_view op, std::size_t gain) {
        generated_.push_back({iteration, key, parent, std::string(op), gain});
    }
    void add_covered(std::string_view criterion, std::size_t item, std::uint64_t iteration) { covered_.push_back({std::string(criterion), item, iteration}); }
    /// Commits the pending search records and the checkpoint, all or nothing.
    void save_checkpoint(const checkpoint& c) {
        sqlite::database::transaction t(db_);
        auto g = db_.prepare("INSERT OR REPLACE INTO generated(iteration, model, parent, operator, gain) VALUES(?, ?, ?, ?, ?)");
        for (const auto& r : generated_) g.bind(1, r.iteration).bind(2, r.key).bind(3, r.parent).bind(4, r.op).bind(5, static_cast<std::int64_t>(r.gain)).run();
        auto cv = db_.prepare("INSERT OR IGNORE INTO coverage(criterion, item, iteration) VALUES(?, ?, ?)");
        for (const auto& r : covered_) cv.bind(1, r.criterion).bind(2, static_cast<std::int64_t>(r.item)).bind(3, r.iteration).run();
        db_.prepare("INSERT OR REPLACE INTO checkpoint(id, iteration, seconds, state) VALUES(1, ?, ?, ?)")
            .bind(1, c.iteration)
            .bind(2, c.seconds)
            .bind(3, c.state.dump())
            .run();
        t.commit();
        generated_.clear();
        covered_.clear();
    }
    std::optional<checkpoint> load_checkpoint() {
        auto q = db_.prepare("SELECT iteration, seconds, state FROM checkpoint WHERE id = 1");
        if (!q.next()) return std::nullopt;
        return checkpoint{q.u64(0), q.real(1), io::json::parse(q.text(2))};
    }
    /// Forgets the search's records after an iteration (a resumed campaign makes them again) and
    /// any not yet committed.
    void rollback_after(std::uint64_t iteration) {
        generated_.clear();
        covered_.clear();
        db_.prepare("DELETE FROM generated WHERE iteration > ?").bind(1, iteration).run();
        db_.prepare("DELETE FROM coverage WHERE iteration > ?").bind(1, iteration).run();
    }
    /// A fresh campaign over an old store keeps its models, executions and judgements (the memo)
    /// and drops the old campaign's search records.
    void start_over() {
        rollback_after(0);
        db_.exec("DELETE FROM generated; DELETE FROM coverage; DELETE FROM checkpoint");
    }

    // ---- executions and judgements: committed one by one -------------------------------------
    void add_execution(const execution_record& e) {
        const auto nodes = pack(e.nodes);
        add_execution_.bind(1, e.model)
            .bind(2, e.backend)
            .bind(3, e.dtype)
            .bind(4, e.inputs)
            .bind(5, name_of(e.status))
            .bind(6, e.outputs.hash)
            .bind(7, e.outputs.abs_sum)
            .bind_blob(8, nodes)
            .bind(9, e.ms)
            .bind(10, e.peak_kb)
            .bind(11, e.message)
            .run();
    }
    /// Every stored execution, in the order they were first stored.
    template <class F>
    void for_each_execution(F&& f) {
        auto q = db_.prepare("SELECT model, backend, dtype, inputs, status, digest, abs_sum, nodes, ms, peak_kb, message FROM executions ORDER BY rowid");
        while (q.next()) {
            execution_record e;
            e.model = q.u64(0), e.backend = q.text(1), e.dtype = q.text(2), e.inputs = q.text(3), e.status = status_from(q.text(4));
            e.outputs = {q.u64(5), q.real(6)};
            e.nodes = unpack(q.blob(7));
            e.ms = q.real(8), e.peak_kb = q.i64(9), e.message = q.text(10);
            f(std::move(e));
        }
    }
    void add_judgement(std::uint64_t model, const std::string& inputs, const std::string& backends, const judgement& j) {
        add_judgement_.bind(1, model).bind(2, inputs).bind(3, backends).bind(4, j.kind).bind(5, j.signature).bind(6, j.ms).run();
    }
    std::optional<judgement> find_judgement(std::uint64_t model, const std::string& inputs, const std::string& backends) {
        find_judgement_.bind(1, model).bind(2, inputs).bind(3, backends);
        std::optional<judgement> r;
        if (find_judgement_.next()) r = judgement{find_judgement_.text(0), find_judgement_.text(1), find_judgement_.real(2)};
        find_judgement_.reset();
        return r;
    }

    void add_divergence(const divergence& d) {
        db_.prepare("INSERT INTO divergences(model, backend, dtype, inputs, replayed, what, node, layer) VALUES(?, ?, ?, ?, julianday('now'), ?, ?, ?)")
            .bind(1, d.model)
            .bind(2, d.backend)
            .bind(3, d.dtype)
            .bind(4, d.inputs)
            .bind(5, d.what)
            .bind(6, d.node)
            .bind(7, d.layer)
            .run();
    }

    // ---- figures -------------------------------------------------------------------------------
    std::int64_t count(std::string_view sql) { return db_.scalar(sql); }
    std::int64_t generated_count() { return count("SELECT COUNT(*) FROM generated"); }
    std::int64_t unique_models() { return count("SELECT COUNT(DISTINCT model) FROM generated"); }
    std::int64_t execution_count() { return count("SELECT COUNT(*) FROM executions"); }
    std::int64_t divergence_count() { return count("SELECT COUNT(*) FROM (SELECT DISTINCT model, backend, dtype, inputs FROM divergences)"); }
    /// Bytes on disk: the database and its write-ahead log.
    std::uintmax_t bytes() const {
        std::uintmax_t n = 0;
        std::error_code ec;
        for (const char* suffix : {"", "-wal"}) {
            const auto s = std::filesystem::file_size(db_.file() + suffix, ec);
            if (!ec) n += s;
        }
        return n;
    }

private:
    std::shared_ptr<const given_weights> find_weights(std::uint64_t digest) {
        if (const auto it = kept_.find(digest); it != kept_.end() && it->second) return it->second;
        auto q = db_.prepare("SELECT json FROM weights WHERE digest = ?");
        q.bind(1, digest);
        if (!q.next()) return nullptr;
        return kept_[digest] = io::weights_from_file_json(io::json::parse(q.text(0)), file() + ": weights " + hex(digest));
    }

    struct generated_row {
        std::uint64_t iteration, key, parent;
        std::string op;
        std::size_t gain;
    };
    struct covered_row {
        std::string criterion;
        std::size_t item;
        std::uint64_t iteration;
    };
    static constexpr std::string_view schema = R"(
            CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, started REAL, resumed INTEGER, options TEXT);
            CREATE TABLE IF NOT EXISTS models(key INTEGER PRIMARY KEY, json TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS weights(digest INTEGER PRIMARY KEY, json TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS generated(iteration INTEGER PRIMARY KEY, model INTEGER, parent INTEGER, operator TEXT, gain INTEGER);
            CREATE TABLE IF NOT EXISTS coverage(criterion TEXT, item INTEGER, iteration INTEGER, PRIMARY KEY(criterion, item));
            CREATE TABLE IF NOT EXISTS executions(model INTEGER, backend TEXT, dtype TEXT, inputs TEXT, status TEXT, digest INTEGER,
                abs_sum REAL, nodes BLOB, ms REAL, peak_kb INTEGER, message TEXT, PRIMARY KEY(model, backend, dtype, inputs));
            CREATE TABLE IF NOT EXISTS judgements(model INTEGER, inputs TEXT, backends TEXT, kind TEXT, signature TEXT, ms REAL,
                PRIMARY KEY(model, inputs, backends));
            CREATE TABLE IF NOT EXISTS checkpoint(id INTEGER PRIMARY KEY CHECK(id = 1), iteration INTEGER, seconds REAL, state TEXT);
            CREATE TABLE IF NOT EXISTS divergences(model INTEGER, backend TEXT, dtype TEXT, inputs TEXT, replayed REAL, what TEXT,
                node INTEGER, layer TEXT);
        )";
    sqlite::database db_;
    // Declared after db_, so built after it: the tables exist before the statements are prepared.
    bool created_ = (db_.exec(schema), true);
    sqlite::statement add_model_ = db_.prepare("INSERT OR IGNORE INTO models(key, json) VALUES(?, ?)");
    sqlite::statement add_execution_ = db_.prepare(
        "INSERT OR REPLACE INTO executions(model, backend, dtype, inputs, status, digest, abs_sum, nodes, ms, peak_kb, message) "
        "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite::statement add_judgement_ = db_.prepare("INSERT OR REPLACE INTO judgements(model, inputs, backends, kind, signature, ms) VALUES(?, ?, ?, ?, ?, ?)");
    sqlite::statement find_judgement_ = db_.prepare("SELECT kind, signature, ms FROM judgements WHERE model = ? AND inputs = ? AND backends = ?");
    std::vector<generated_row> generated_;
    std::vector<covered_row> covered_;
    std::unordered_set<std::uint64_t> added_;  // keys add_model wrote (or found) in this process
    // Given weights by digest: written in this process (null) or read back, once for all models.
    std::unordered_map<std::uint64_t, std::shared_ptr<const given_weights>> kept_;
};

}  // namespace memo::store

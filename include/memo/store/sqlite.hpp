#pragma once
// A thin RAII layer over SQLite: a database, prepared statements, and errors that name the file.
//
//   memo::sqlite::database db("campaign/store.db");
//   auto q = db.prepare("INSERT INTO t(a, b) VALUES(?, ?)");
//   q.bind(1, 7).bind(2, "x").run();
//
// The store opens every database in WAL mode with synchronous=NORMAL: a commit is one append to
// the log, and a process killed at any moment loses at most the transaction it was writing (the
// next open rolls the log forward, no repair step).
#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../engine/error.hpp"

namespace memo::sqlite {

class statement {
public:
    statement(sqlite3* db, std::string_view sql, const std::string& file) : db_(db), file_(&file) {
        if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s_, nullptr) != SQLITE_OK) raise("cannot prepare");
    }
    statement(statement&& o) noexcept : db_(o.db_), s_(std::exchange(o.s_, nullptr)), file_(o.file_) {}
    statement& operator=(statement&& o) noexcept {
        std::swap(s_, o.s_);
        db_ = o.db_;
        file_ = o.file_;
        return *this;
    }
    ~statement() { sqlite3_finalize(s_); }

    statement& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
    statement& bind(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }  // stored as its bit pattern
    statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    statement& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
    statement& bind(int i, std::string_view v) { return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT)); }
    statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
    statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
    statement& bind_blob(int i, std::span<const std::byte> v) {
        return check(sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    }

    /// Steps once: true while there is a row to read.
    bool next() {
        const int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW) return true;
        if (rc != SQLITE_DONE) raise("cannot step");
        return false;
    }
    /// Runs a statement that returns no rows, and resets it for the next bindings.
    void run() {
        next();
        reset();
    }
    void reset() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }

    std::int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
    std::uint64_t u64(int col) const { return static_cast<std::uint64_t>(i64(col)); }
    double real(int col) const { return sqlite3_column_double(s_, col); }
    bool null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
    std::string text(int col) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))) : std::string();
    }
    std::span<const std::byte> blob(int col) const {
        const auto* p = static_cast<const std::byte*>(sqlite3_column_blob(s_, col));
        return {p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
    }

private:
    statement& check(int rc) {
        if (rc != SQLITE_OK) raise("cannot bind");
        return *this;
    }
    [[noreturn]] void raise(const char* what) const { throw error(*file_ + ": " + what + ": " + sqlite3_errmsg(db_)); }

    sqlite3* db_;
    sqlite3_stmt* s_ = nullptr;
    const std::string* file_;
};

class database {
public:
    /// Opens (creating if need be) the database at `file`, in WAL mode.
    explicit database(std::string file) : file_(std::move(file)) {
        if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
            const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
            sqlite3_close(db_);
            throw error(file_ + ": cannot open the store: " + why);
        }
        sqlite3_busy_timeout(db_, 5000);
        exec("PRAGMA journal_mode=WAL");
        exec("PRAGMA synchronous=NORMAL");
    }
    database(const database&) = delete;
    database& operator=(const database&) = delete;
    ~database() { sqlite3_close_v2(db_); }

    void exec(std::string_view sql) {
        char* msg = nullptr;
        if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
            const std::string why = msg ? msg : sqlite3_errmsg(db_);
            sqlite3_free(msg);
            throw error(file_ + ": " + why);
        }
    }
    statement prepare(std::string_view sql) { return statement(db_, sql, file_); }
    /// The first column of the first row of a query, as an integer (0 when there is no row).
    std::int64_t scalar(std::string_view sql) {
        auto q = prepare(sql);
        return q.next() ? q.i64(0) : 0;
    }
    const std::string& file() const noexcept { return file_; }

    /// BEGIN ... COMMIT around a scope; rolled back when the scope is left by an exception.
    class transaction {
    public:
        explicit transaction(database& db) : db_(&db) { db.exec("BEGIN IMMEDIATE"); }
        transaction(const transaction&) = delete;
        transaction& operator=(const transaction&) = delete;
        void commit() {
            db_->exec("COMMIT");
            db_ = nullptr;
        }
        ~transaction() {
            if (db_) sqlite3_exec(db_->db_, "ROLLBACK", nullptr, nullptr, nullptr);
        }

    private:
        database* db_;
    };

private:
    std::string file_;
    sqlite3* db_ = nullptr;
};

}  // namespace memo::sqlite

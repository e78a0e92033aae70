// The campaign store on its own: records round-trip, and the store survives a SIGKILL at any
// moment of its writes (a child process writing, killed at random points): it reopens without
// repair, holds every record the child saw committed, and its checkpoints are all-or-nothing.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

#include <memo/engine/rng.hpp>
#include <memo/store/store.hpp>

#include "../scratch.hpp"

namespace test_store_store_test {

namespace {

namespace fs = std::filesystem;
using memo::store::campaign_store;

fs::path fresh_file(const std::string& name) { return test::scratch_dir("store-" + name) / "store.db"; }

memo::store::execution_record record(std::int64_t i) {
    memo::store::execution_record e;
    e.model = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL;  // high bit set too: stored as its bit pattern
    e.backend = i % 2 ? "torch" : "reference";
    e.inputs = "2:0:1";
    e.status = i % 7 ? memo::run_status::ok : memo::run_status::crash;
    e.outputs = {static_cast<std::uint64_t>(i) ^ 0xabcdefULL, 0.5 * static_cast<double>(i)};
    for (std::int64_t k = 0; k < i % 5; ++k) e.nodes.push_back({static_cast<std::uint64_t>(k + i), static_cast<double>(k)});
    e.ms = static_cast<double>(i);
    e.peak_kb = i * 3;
    e.message = "run " + std::to_string(i);
    return e;
}

}  // namespace

TEST(Store, RecordsRoundTrip) {
    const auto file = fresh_file("roundtrip");
    {
        campaign_store st(file);
        for (int i = 0; i < 20; ++i) st.add_execution(record(i));
        st.add_judgement(42, "2:0:1", "reference,torch", {"crash", "Conv2D-1234abcd", 12.5});
        for (std::uint64_t i = 1; i <= 5; ++i) st.add_generated(i, i * 11, i * 13, "NLA", i % 2);
        st.add_covered("layer_type", 3, 4);
        st.save_checkpoint({5, 1.5, {{"x", 1}}});
    }
    campaign_store st(file);  // reopened
    std::int64_t i = 0;
    st.for_each_execution([&](memo::store::execution_record e) {
        const auto want = record(i++);
        EXPECT_EQ(e.model, want.model);
        EXPECT_EQ(e.backend, want.backend);
        EXPECT_EQ(e.status, want.status);
        EXPECT_EQ(e.outputs, want.outputs);
        EXPECT_EQ(e.nodes, want.nodes);
        EXPECT_EQ(e.message, want.message);
    });
    EXPECT_EQ(i, 20);
    const auto j = st.find_judgement(42, "2:0:1", "reference,torch");
    ASSERT_TRUE(j);
    EXPECT_EQ(j->signature, "Conv2D-1234abcd");
    EXPECT_FALSE(st.find_judgement(42, "2:0:1", "reference"));
    EXPECT_EQ(st.generated_count(), 5);
    EXPECT_EQ(st.count("SELECT COUNT(*) FROM coverage"), 1);
    const auto cp = st.load_checkpoint();
    ASSERT_TRUE(cp);
    EXPECT_EQ(cp->iteration, 5u);
    EXPECT_EQ(cp->state.at("x"), 1);
}

TEST(Store, OpenErrorNamesTheFile) {
    try {
        campaign_store st("/nonexistent-dir/store.db");
        FAIL() << "opened a store in a missing directory";
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/store.db"), std::string::npos) << e.what();
    }
}

// A child writes executions one by one and checkpoints with batches of search records, telling
// the parent (through a pipe) after each commit; the parent kills it at a random moment.
TEST(Store, SurvivesSigkillDuringWrites) {
    memo::rng r(2026);
    for (int round = 0; round < 8; ++round) {
        const auto file = fresh_file("kill" + std::to_string(round));
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(fds[0]);
            campaign_store st(file);
            for (std::int64_t i = 0;; ++i) {
                st.add_execution(record(i));
                if (i % 10 == 9) {  // a checkpoint: 50 generated rows and the state, in one transaction
                    const auto it = static_cast<std::uint64_t>(i + 1) * 5;
                    for (std::uint64_t g = it - 49; g <= it; ++g) st.add_generated(g, g, g - 1, "LConn", 0);
                    st.save_checkpoint({it, 0, {{"executions", i + 1}}});
                }
                const std::int64_t acked = i + 1;
                if (::write(fds[1], &acked, sizeof acked) != sizeof acked) ::_exit(1);
            }
        }
        ::close(fds[1]);
        // Let it commit a random number of records, then kill it after a random delay.
        const auto wait_for = static_cast<std::int64_t>(r.uniform(20, 400));
        std::int64_t acked = 0;
        while (acked < wait_for && ::read(fds[0], &acked, sizeof acked) == sizeof acked) {}
        ::usleep(static_cast<useconds_t>(r.uniform(0, 3000)));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status));
        for (std::int64_t more; ::read(fds[0], &more, sizeof more) == sizeof more;) acked = more;  // acks still in the pipe
        ::close(fds[0]);

        campaign_store st(file);  // reopens without any repair step
        EXPECT_EQ(st.count("SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
        const auto stored = st.execution_count();
        EXPECT_GE(stored, acked) << "round " << round << ": a record the child saw committed is lost";
        EXPECT_LE(stored, acked + 1) << "round " << round;  // at most the one being written when killed
        std::int64_t i = 0;
        st.for_each_execution([&](memo::store::execution_record e) { EXPECT_EQ(e.message, record(i++).message); });
        // The checkpoint and its search records went in together or not at all.
        const auto cp = st.load_checkpoint();
        if (cp) {
            EXPECT_EQ(st.generated_count(), static_cast<std::int64_t>(cp->iteration));
            EXPECT_EQ(cp->state.at("executions").get<std::int64_t>() * 5, static_cast<std::int64_t>(cp->iteration));
        } else {
            EXPECT_EQ(st.generated_count(), 0);
        }
        st.add_execution(record(stored));  // and takes writes again
        EXPECT_EQ(st.execution_count(), stored + 1);
    }
}

}  // namespace test_store_store_test

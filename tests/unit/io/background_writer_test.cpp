// Files handed to a background writer: all written, whole, by flush() or the writer's end, and a
// write that fails is thrown to the campaign's thread with the file's name.
#include <filesystem>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include <memo/io/background_writer.hpp>

namespace test_io_background_writer_test {

namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
    const auto dir = fs::temp_directory_path() / ("memo-bg-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST(BackgroundWriter, FlushReturnsOnceEveryFileIsWritten) {
    const auto dir = fresh_dir("flush");
    memo::io::background_writer w;
    for (int i = 0; i < 300; ++i)
        w.write((dir / (std::to_string(i) + ".json")).string(), std::string(static_cast<std::size_t>(i) * 37, 'x') + std::to_string(i));
    w.flush();
    for (int i = 0; i < 300; ++i)
        ASSERT_EQ(memo::io::read_file((dir / (std::to_string(i) + ".json")).string()), std::string(static_cast<std::size_t>(i) * 37, 'x') + std::to_string(i));
    // Rewriting a file leaves the last text handed over.
    w.write((dir / "0.json").string(), "first");
    w.write((dir / "0.json").string(), "second");
    w.flush();
    EXPECT_EQ(memo::io::read_file((dir / "0.json").string()), "second");
    fs::remove_all(dir);
}

TEST(BackgroundWriter, ItsEndWritesWhatIsLeft) {
    const auto dir = fresh_dir("end");
    {
        memo::io::background_writer w;
        for (int i = 0; i < 100; ++i) w.write((dir / (std::to_string(i) + ".json")).string(), std::to_string(i));
    }
    for (int i = 0; i < 100; ++i) ASSERT_EQ(memo::io::read_file((dir / (std::to_string(i) + ".json")).string()), std::to_string(i));
    fs::remove_all(dir);
}

TEST(BackgroundWriter, AFailedWriteIsThrownWithTheFileName) {
    const auto dir = fresh_dir("fail");
    memo::io::background_writer w;
    const auto bad = (dir / "no-such-folder" / "1.json").string();
    w.write(bad, "x");
    w.write((dir / "2.json").string(), "y");  // the writes after a failure still happen
    try {
        w.flush();
        FAIL() << "flush() did not throw";
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_EQ(memo::io::read_file((dir / "2.json").string()), "y");
    w.flush();  // reported once
    fs::remove_all(dir);
}

}  // namespace test_io_background_writer_test

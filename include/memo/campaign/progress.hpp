#pragma once
// The live progress line of long work: redrawn in place on a terminal, a line every few seconds
// otherwise (so logs stay readable).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace memo::campaign {

class progress {
public:
    explicit progress(std::FILE* out = stderr) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

    /// Whether a line is due now.
    bool due(std::chrono::steady_clock::time_point now) const { return now - last_ >= (tty_ ? std::chrono::milliseconds(250) : std::chrono::seconds(5)); }

    void show(const std::string& line, std::chrono::steady_clock::time_point now) {
        last_ = now;
        if (tty_) std::fprintf(out_, "\r%s\x1b[K", line.c_str());
        else std::fprintf(out_, "%s\n", line.c_str());
        std::fflush(out_);
    }
    /// Ends the line (on a terminal) so what follows starts clean.
    void finish(const std::string& line) {
        if (tty_) std::fprintf(out_, "\r%s\x1b[K\n", line.c_str());
        else std::fprintf(out_, "%s\n", line.c_str());
        std::fflush(out_);
    }

private:
    std::FILE* out_;
    bool tty_;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace memo::campaign

#pragma once
// How long-running work (loading, a measured stage) reports progress. The CLI prints a line
// once a second to stderr; tests pass a silent one.

#include <string>

namespace pgslow {

class Progress {
 public:
  virtual ~Progress() = default;
  // A status line that replaces the previous one (e.g. "load  12.0 s  420,000 rows  35 MB/s").
  virtual void update(const std::string& line) = 0;
  // A line that stays (a phase finished).
  virtual void note(const std::string& line) = 0;
};

// Prints nothing: tests and --quiet.
class SilentProgress final : public Progress {
 public:
  void update(const std::string&) override {}
  void note(const std::string&) override {}
};

// Writes to stderr; one line per update when stderr is not a terminal (CI logs stay readable).
class ConsoleProgress final : public Progress {
 public:
  void update(const std::string& line) override;
  void note(const std::string& line) override;
};

}  // namespace pgslow

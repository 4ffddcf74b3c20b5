#pragma once
// Errors that reach the user, and the exit codes they map to (docs/user-guide.md, "Exit codes").

#include <stdexcept>
#include <string>
#include <vector>

namespace pgslow {

// Documented exit codes of the pgslow command.
enum ExitCode : int {
  kExitOk = 0,
  kExitRuntime = 1,        // the server or the run failed
  kExitBadInput = 2,       // bad usage, bad scenario, bad knob value
  kExitExpectation = 3,    // a scenario's `expect:` assertion failed
  kExitServerDown = 4,     // `server status`, `status`: the server is not running or refuses
  kExitInterrupted = 130,  // SIGINT
  kExitTerminated = 143,   // SIGTERM
};

// Where a problem in a user's file is: file:line:column, 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column", or less when unknown
};

// One problem found while validating user input. Validation collects all of them before
// failing, so a user fixes a scenario in one pass.
struct ConfigError {
  enum class Severity { kError, kWarning };
  SourceLocation where;
  std::string message;  // what is wrong, in the user's words
  std::string hint;     // what would be accepted instead, or how to fix it; may be empty
  Severity severity = Severity::kError;
  std::string str() const;  // "file:line:col: error: message (hint)"
};

bool has_errors(const std::vector<ConfigError>& problems);

// Base of the errors pgslow reports to the user; carries the exit code.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad usage or bad input (exit 2).
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(kExitBadInput, message) {}
  // All problems of one validation, printed one per line.
  explicit InputError(std::vector<ConfigError> problems);
  const std::vector<ConfigError>& problems() const { return problems_; }

 private:
  std::vector<ConfigError> problems_;
};

// The server, the file system or the run failed (exit 1).
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& message) : Error(kExitRuntime, message) {}
};

// The command has printed what happened; only its exit code is left to give (`server status` of
// a stopped server: kExitServerDown). main prints nothing more.
class ExitStatus : public Error {
 public:
  explicit ExitStatus(ExitCode code) : Error(code, "") {}
};

}  // namespace pgslow

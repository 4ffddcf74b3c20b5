#pragma once
// Where pgslow finds its data folders (knobs/, scenarios/) and its working directory.

#include <filesystem>
#include <string>

namespace pgslow {

// The folder holding knobs/ and scenarios/: $PGSLOW_HOME if set, else the nearest folder above
// the executable that holds them (or their <prefix>/share/pgslow when installed), else the
// source tree this binary was built from, else the installed data folder. Each counts only
// when no one but root or the invoking user could have made it or anything above it
// (is_trusted_folder); $PGSLOW_HOME that does not is an error, and so is finding none. Never the
// current folder.
std::filesystem::path data_root();

// Whether a command-line argument that could also be a library name (a scenario, lesson,
// preset) is a path: it holds a '/' or ends in .yaml, .yml or .conf ("./quick", "my.yaml",
// "postgresql.conf"). Anything else is only ever a name, never a file of the current folder:
// as root, `cd /tmp && pgslow run quick` must not read a `quick` anyone could have put there.
bool names_a_file(const std::string& arg);

// What is wrong with a file argument (names_a_file) that is not a regular file, to throw as an
// InputError: "no such file: ARG", or "ARG is a folder, not a file" (a device, ...: "not a regular
// file"). Every command that reads a file argument says it with these words.
std::string file_argument_problem(const std::string& arg);

// Writes `contents` to `path` durably: a temporary file in the same folder, fsync, rename
// over the target, fsync the folder. A reader sees the old bytes or the new, never a mix, and
// a symlink planted at `path` is replaced, never written through, and the folder must pass
// require_trusted_path (safe_fs.h) first. `mode` as open(2) takes it (the umask applies): 0600
// for pgslow's own state and anything holding the server log, 0644 for reports people share.
void write_file_durably(const std::filesystem::path& path, const std::string& contents,
                        unsigned mode = 0600);

// The whole file as bytes; throws RuntimeError naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace pgslow

// Writing a result file (telemetry's per-rank JSON, the suite's --output) without following symlinks and without replacing another user's file.
//
// Contract: the content is written to a fresh temporary file in the target directory (opened with
// O_CREAT|O_EXCL|O_NOFOLLOW), fsync'ed, then renamed over the final name. rename() replaces a
// directory entry and never writes through it, so a symlink planted at the final path is replaced
// at worst, never followed; it is refused before that, as is a final path owned by another user
// or that is not a regular file. Thread-safe (no shared state).
#pragma once

#include <string>

namespace dissect {

struct WriteOutcome {
  bool written = false;
  std::string reason;  // why not, when !written
};

WriteOutcome write_file_no_follow(const std::string& directory, const std::string& file_name,
                                  const std::string& content);

// The same for a path as a user gives it ("out.json", "dir/out.json"): split into its directory
// ("." when it has none) and file name.
WriteOutcome write_path_no_follow(const std::string& path, const std::string& content);

// Empty when `path` can be written by write_path_no_follow: its directory exists and is writable,
// and the path is absent or a regular file of ours (not a directory, not a symbolic link).
// Otherwise why not. Checked before a run, so that a run never measures for nothing.
std::string output_path_problem(const std::string& path);

}  // namespace dissect

// Writing the per-rank file without following symlinks and without replacing another user's file.
//
// Contract: the content is written to a fresh temporary file in the target directory (opened with
// O_CREAT|O_EXCL|O_NOFOLLOW), fsync'ed, then renamed over the final name. rename() replaces a
// directory entry and never writes through it, so a symlink planted at the final path is replaced
// at worst, never followed; it is refused before that, as is a final path owned by another user
// or that is not a regular file. Thread-safe (no shared state).
#pragma once

#include <string>

namespace dissect::telemetry {

struct WriteOutcome {
  bool written = false;
  std::string reason;  // why not, when !written
};

WriteOutcome write_file_no_follow(const std::string& directory, const std::string& file_name,
                                  const std::string& content);

}  // namespace dissect::telemetry

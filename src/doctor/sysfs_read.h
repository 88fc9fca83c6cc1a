// Small readers for sysfs/procfs text files: absent or unreadable files read as empty, because
// the doctor reports what it finds and never throws on a missing knob.
#pragma once

#include <string>
#include <vector>

namespace dissect::doctor {

std::string read_text(const std::string& path);    // whole file, trailing newline stripped
bool path_exists(const std::string& path);
std::vector<std::string> list_dir(const std::string& path);  // sorted names, no "." / ".."
long read_long(const std::string& path, long fallback);
std::vector<int> parse_cpulist(const std::string& list);     // "0-3,8,10-11"

}  // namespace dissect::doctor

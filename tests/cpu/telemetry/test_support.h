// Test support: temporary directories, fake sysfs trees, sessions that write into them.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "dissect/telemetry/config.h"
#include "dissect/telemetry/session.h"
#include "json_schema.h"

namespace dissect::telemetry::test {

// A fresh directory under TMPDIR (or /tmp), removed with its contents at scope exit.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/dissect_telemetry_test_XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_text(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

inline Config test_config(const std::string& output_dir) {
  Config config;
  config.enabled = true;
  config.output_dir = output_dir;
  config.transport = "test";
  return config;
}

inline JsonValue load_schema() {
  return parse_json(read_text_file(std::string(DISSECT_SOURCE_DIR) + "/docs/telemetry.schema.json"));
}

}  // namespace dissect::telemetry::test

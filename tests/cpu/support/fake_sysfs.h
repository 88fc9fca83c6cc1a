// Test support: a fake sysfs tree laid out like the real one, in a temporary directory: PCI
// devices under devices/pci<domain>:<bus>/<root port>/<switch ports>/..., reached through symlinks
// from bus/pci/devices/<address> and class/infiniband/<nic>/device.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dissect::testing {

class FakeSysfs {
 public:
  FakeSysfs() {
    char pattern[] = "/tmp/dissect_sysfs_XXXXXX";
    root_ = mkdtemp(pattern);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;
  const std::string& root() const { return root_; }

  // `chain` is "pci0000:00/0000:00:01.0/.../<address>".
  void add_pci(const std::string& chain, int numa_node, const char* vendor, const char* klass) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(root_) / "devices" / chain;
    fs::create_directories(dir);
    write(dir / "numa_node", std::to_string(numa_node));
    write(dir / "vendor", vendor);
    write(dir / "class", klass);
    const fs::path bus = fs::path(root_) / "bus/pci/devices";
    fs::create_directories(bus);
    fs::create_symlink(fs::relative(dir, bus), bus / dir.filename());
  }
  void add_gpu(const std::string& chain, int numa) { add_pci(chain, numa, "0x10de", "0x030200"); }
  void add_nic(const std::string& name, const std::string& chain, int numa) {
    namespace fs = std::filesystem;
    add_pci(chain, numa, "0x15b3", "0x020700");
    const fs::path klass = fs::path(root_) / "class/infiniband" / name;
    fs::create_directories(klass);
    fs::create_symlink(fs::relative(fs::path(root_) / "devices" / chain, klass), klass / "device");
  }

 private:
  static void write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text << "\n";
  }
  std::string root_;
};

}  // namespace dissect::testing

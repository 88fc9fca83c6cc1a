#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "dissect/telemetry/hw_counters.h"

namespace dissect::telemetry {
namespace {

class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool ethtool_call(int fd, const std::string& netdev, void* request, const char* what,
                  std::string* reason) {
  ifreq interface{};
  std::memcpy(interface.ifr_name, netdev.c_str(), netdev.size() + 1);
  interface.ifr_data = static_cast<char*>(request);
  if (::ioctl(fd, SIOCETHTOOL, &interface) == 0) return true;
  if (reason != nullptr) *reason = std::string(what) + " on " + netdev + ": " + std::strerror(errno);
  return false;
}

// Number of statistics the driver exposes (ETHTOOL_GSSET_INFO for ETH_SS_STATS).
std::optional<uint32_t> count_stats(int fd, const std::string& netdev, std::string* reason) {
  std::vector<uint8_t> buffer(sizeof(ethtool_sset_info) + sizeof(uint32_t), 0);
  auto* info = reinterpret_cast<ethtool_sset_info*>(buffer.data());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = uint64_t{1} << ETH_SS_STATS;
  if (!ethtool_call(fd, netdev, info, "ETHTOOL_GSSET_INFO", reason)) return std::nullopt;
  if ((info->sset_mask & (uint64_t{1} << ETH_SS_STATS)) == 0) return 0u;
  uint32_t count;
  std::memcpy(&count, buffer.data() + sizeof(ethtool_sset_info), sizeof(count));
  return count;
}

}  // namespace

std::optional<EthtoolStats> read_ethtool_stats(const std::string& netdev, std::string* reason) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    if (reason != nullptr) *reason = "netdev name '" + netdev + "' is empty or too long";
    return std::nullopt;
  }
  Socket socket;
  if (socket.fd() < 0) {
    if (reason != nullptr) *reason = std::string("socket(AF_INET): ") + std::strerror(errno);
    return std::nullopt;
  }
  std::optional<uint32_t> count = count_stats(socket.fd(), netdev, reason);
  if (!count) return std::nullopt;

  std::vector<uint8_t> strings_buffer(sizeof(ethtool_gstrings) + size_t{*count} * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buffer.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = *count;
  if (!ethtool_call(socket.fd(), netdev, strings, "ETHTOOL_GSTRINGS", reason)) return std::nullopt;

  std::vector<uint8_t> stats_buffer(sizeof(ethtool_stats) + size_t{*count} * sizeof(uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(stats_buffer.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = *count;
  if (!ethtool_call(socket.fd(), netdev, stats, "ETHTOOL_GSTATS", reason)) return std::nullopt;

  // The driver may report fewer entries than it announced if its set changed in between.
  uint32_t usable = std::min<uint32_t>({*count, strings->len, stats->n_stats});
  EthtoolStats result;
  const uint8_t* names = strings_buffer.data() + sizeof(ethtool_gstrings);
  const uint8_t* values = stats_buffer.data() + sizeof(ethtool_stats);
  for (uint32_t i = 0; i < usable; ++i) {
    const char* name = reinterpret_cast<const char*>(names + size_t{i} * ETH_GSTRING_LEN);
    uint64_t value;
    std::memcpy(&value, values + size_t{i} * sizeof(uint64_t), sizeof(value));
    result[std::string(name, strnlen(name, ETH_GSTRING_LEN))] = value;
  }
  return result;
}

}  // namespace dissect::telemetry

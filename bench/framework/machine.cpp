#include "dissect/bench/machine.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "dissect/common/wait.h"

namespace dissect::bench {
namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// The value of the first "key : value" line whose key is `key`, or "".
std::string field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || trimmed(line.substr(0, colon)) != key) continue;
    const std::string value = trimmed(line.substr(colon + 1));
    if (!value.empty()) return value;
  }
  return "";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

// Every GPU the NVIDIA driver lists, without CUDA: the framework runs on CPU-only builds too.
std::vector<std::string> nvidia_informations() {
  const std::string root = "/proc/driver/nvidia/gpus";
  std::vector<std::string> texts;
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return texts;
  std::vector<std::string> buses;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') buses.emplace_back(entry->d_name);
  }
  closedir(dir);
  std::sort(buses.begin(), buses.end());  // PCI order, as nvidia-smi lists them
  for (const std::string& bus : buses) texts.push_back(file_text(root + "/" + bus + "/information"));
  return texts;
}

}  // namespace

std::string cpu_model_from(const std::string& cpuinfo) {
  for (const char* key : {"model name", "Hardware", "Model"}) {
    const std::string value = field(cpuinfo, key);
    if (!value.empty()) return value;
  }
  return "unknown";
}

std::string gpu_models_from(const std::vector<std::string>& informations) {
  std::vector<std::string> models;
  for (const std::string& text : informations) {
    const std::string model = field(text, "Model");
    if (!model.empty()) models.push_back(model);
  }
  if (models.empty()) return "none";
  if (std::all_of(models.begin(), models.end(), [&](const std::string& m) { return m == models[0]; })) {
    return models.size() == 1 ? models[0] : std::to_string(models.size()) + " x " + models[0];
  }
  std::string all;
  for (const std::string& m : models) all += (all.empty() ? "" : ", ") + m;
  return all;
}

const Machine& this_machine() {
  static const Machine machine = [] {
    Machine m;
    m.host = host_name();
    m.cpu_model = cpu_model_from(file_text("/proc/cpuinfo"));
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    m.cpu_cores = online > 0 ? static_cast<uint32_t>(online) : 0;
    m.usable_cores = usable_cores();
    m.gpus = gpu_models_from(nvidia_informations());
    return m;
  }();
  return machine;
}

void note_machine(Report& report) {
  const Machine& m = this_machine();
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"host", m.host},
      {"cpu_model", m.cpu_model},
      {"cpu_cores", std::to_string(m.cpu_cores)},
      {"usable_cores", std::to_string(m.usable_cores)},
      {"gpu", m.gpus}};
  for (Result& r : report.results()) {
    for (const auto& [key, value] : entries) {
      const bool set = std::any_of(r.environment.begin(), r.environment.end(),
                                   [&](const auto& pair) { return pair.first == key; });
      if (!set) r.environment.emplace_back(key, value);
    }
  }
}

}  // namespace dissect::bench

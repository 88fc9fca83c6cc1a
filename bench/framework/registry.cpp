#include <string>
#include <vector>

#include "dissect/bench/experiment.h"

namespace dissect::bench {
namespace {
std::vector<Experiment>& table() {
  static std::vector<Experiment> all;
  return all;
}
}  // namespace

bool register_experiment(const Experiment& experiment) {
  table().push_back(experiment);
  return true;
}

const std::vector<Experiment>& experiments() { return table(); }

const Experiment* find_experiment(const std::string& name) {
  for (const auto& e : table()) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

}  // namespace dissect::bench

#include <cstring>
#include <iostream>

#include "dissect/doctor/doctor.h"

namespace dissect::doctor {
namespace {

void usage(std::ostream& out) {
  out << "usage: dissect doctor [--provider softnic|mlx5|ibverbs] [--sysfs-root DIR]\n"
         "                      [--proc-root DIR] [--dev-root DIR] [--no-cuda]\n"
         "Checks this machine for what the provider needs; exits 1 if a required check fails.\n";
}

bool known_provider(const std::string& p) { return p == "softnic" || p == "mlx5" || p == "ibverbs"; }

}  // namespace

int doctor_main(int argc, char** argv) {
  GatherOptions options;
  std::string provider = "softnic";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "-h" || arg == "--help") {
      usage(std::cout);
      return 0;
    } else if (arg == "--provider" && has_value) {
      provider = argv[++i];
    } else if (arg == "--sysfs-root" && has_value) {
      options.sysfs_root = argv[++i];
    } else if (arg == "--proc-root" && has_value) {
      options.proc_root = argv[++i];
    } else if (arg == "--dev-root" && has_value) {
      options.dev_root = argv[++i];
    } else if (arg == "--no-cuda") {
      options.probe_cuda = false;
    } else {
      std::cerr << "dissect doctor: unknown or incomplete argument '" << arg << "'\n";
      usage(std::cerr);
      return 2;
    }
  }
  if (!known_provider(provider)) {
    std::cerr << "dissect doctor: unknown provider '" << provider << "'\n";
    return 2;
  }
  DoctorInputs inputs = gather_inputs(options);
  inputs.provider = provider;
  return run_doctor(inputs, std::cout);
}

}  // namespace dissect::doctor

// `dissect doctor`: the machine checks of src/doctor behind the same parser as every subcommand.
#include <iostream>
#include <string>

#include "dissect/bench/experiment.h"
#include "dissect/doctor/doctor.h"
#include "doctor_command.h"

namespace dissect::bench {

int doctor_main(int argc, char** argv) {
  const Arguments a(argc, argv);
  doctor::GatherOptions options;
  const std::string provider =
      a.choice("provider", "softnic", {"softnic", "mlx5", "ibverbs"},
               "the provider whose needs are checked: softnic (none beyond a CPU), mlx5 (a ConnectX, "
               "rdma-core, GPU peer memory), ibverbs (rdma-core verbs, for the proxy workers)");
  options.sysfs_root = a.text("sysfs-root", options.sysfs_root, "where sysfs is read (a copy of another machine's, for tests)");
  options.proc_root = a.text("proc-root", options.proc_root, "where procfs is read");
  options.dev_root = a.text("dev-root", options.dev_root, "where the device nodes (/dev/infiniband) are looked for");
  options.probe_cuda = !a.flag("no-cuda", "do not load the CUDA driver to list the GPUs");
  a.check_all_used();
  doctor::DoctorInputs inputs = doctor::gather_inputs(options);
  inputs.provider = provider;
  return doctor::run_doctor(inputs, std::cout);
}

}  // namespace dissect::bench

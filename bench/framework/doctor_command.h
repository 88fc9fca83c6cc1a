// `dissect doctor`: checks this machine for what a provider needs (src/doctor); exits 1 when a
// required check fails, 2 on a bad flag.
#pragma once

namespace dissect::bench {

int doctor_main(int argc, char** argv);  // argv[0] is "doctor"

}  // namespace dissect::bench

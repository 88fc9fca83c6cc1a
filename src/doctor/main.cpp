// Standalone `dissect-doctor` until the lead wires `dissect doctor` into the CLI.
#include "dissect/doctor/doctor.h"

int main(int argc, char** argv) { return dissect::doctor::doctor_main(argc, argv); }

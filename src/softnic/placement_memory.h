// Private: memory in a queue placement. Host memory is page-aligned and zeroed; with CUDA present
// it is also pinned and mapped, so a GPU submitter reaches it at the same address (UVA).
#pragma once

#include <cstddef>

#include "dissect/nic/nic.h"

namespace dissect::softnic {

void* allocate_placement(size_t bytes, nic::Placement placement);
void free_placement(void* address);

}  // namespace dissect::softnic

// One PE per process under an MPI launcher (mpirun, or srun with PMI/PMIx): ranks from
// MPI_COMM_WORLD, local ranks from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), collectives from
// MPI_Allgather / MPI_Barrier / MPI_Bcast. Built only when CMake finds MPI (DISSECT_HAVE_MPI);
// create_bootstrap() reports the build has no MPI otherwise.
//
// MPI has no timeouts: a PE that never arrives blocks the others until the launcher gives up.
// MPI is initialised (MPI_THREAD_SERIALIZED) if the application has not done it, and finalised by
// the destructor only in that case.
#pragma once

#include <memory>

#include "dissect/bootstrap/bootstrap.h"

namespace dissect::bootstrap {

// True when this process looks launched by an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK is set).
bool launched_by_mpi();

// Throws Error when the build has no MPI.
std::unique_ptr<Bootstrap> create_mpi_bootstrap();

}  // namespace dissect::bootstrap

// The MPI bootstrap, compiled only when CMake found MPI (DISSECT_HAVE_MPI).
#include "dissect/bootstrap/mpi.h"

#include <climits>
#include <cstdlib>
#include <string>

#ifdef DISSECT_HAVE_MPI
#include <mpi.h>
#endif

namespace dissect::bootstrap {

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name)) return true;
  }
  return false;
}

#ifdef DISSECT_HAVE_MPI

bool have_mpi() { return true; }

namespace {

std::string mpi_error(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string("MPI bootstrap: ") + call + " failed: " + std::string(text, static_cast<size_t>(length));
}

void check(const char* call, int code) {
  if (code != MPI_SUCCESS) throw Error(mpi_error(call, code));
}

int count_of(size_t bytes, const char* what) {
  if (bytes > static_cast<size_t>(INT_MAX)) {
    throw InvalidArgument(std::string("MPI bootstrap: ") + what + " of " + std::to_string(bytes) +
                          " bytes exceeds MPI's int count");
  }
  return static_cast<int>(bytes);
}

class Mpi : public Bootstrap {
 public:
  Mpi() {
    int initialized = 0;
    check("MPI_Initialized", MPI_Initialized(&initialized));
    if (!initialized) {
      int provided = 0;
      check("MPI_Init_thread", MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      owns_mpi_ = true;
    }
    // Errors come back as codes (turned into exceptions) instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check("MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    check("MPI_Comm_size", MPI_Comm_size(MPI_COMM_WORLD, &size_));
    check("MPI_Comm_split_type",
          MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_));
    check("MPI_Comm_rank(node)", MPI_Comm_rank(node_, &local_rank_));
    check("MPI_Comm_size(node)", MPI_Comm_size(node_, &local_size_));
  }
  ~Mpi() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string kind() const override { return "mpi"; }

  std::vector<uint8_t> allgather(const void* data, size_t bytes) override {
    const int count = count_of(bytes, "allgather");
    count_of(bytes * static_cast<size_t>(size_), "allgather result");
    std::vector<uint8_t> out(bytes * static_cast<size_t>(size_));
    // MPI needs a non-null buffer even for zero bytes on some implementations.
    uint8_t dummy = 0;
    check("MPI_Allgather",
          MPI_Allgather(bytes ? data : &dummy, count, MPI_BYTE, bytes ? out.data() : &dummy, count,
                        MPI_BYTE, MPI_COMM_WORLD));
    return out;
  }
  void barrier() override { check("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD)); }
  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= size_) {
      throw InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " +
                            std::to_string(size_));
    }
    check("MPI_Bcast", MPI_Bcast(data, count_of(bytes, "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD));
  }

 private:
  bool owns_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Bootstrap> create_mpi_bootstrap() { return std::make_unique<Mpi>(); }

#else  // !DISSECT_HAVE_MPI

bool have_mpi() { return false; }

std::unique_ptr<Bootstrap> create_mpi_bootstrap() {
  throw Error(
      "MPI bootstrap requested, but this dissect was built without MPI (CMake found none: "
      "install an MPI, e.g. Debian's libopenmpi-dev, and configure with -DDISSECT_WITH_MPI=ON); "
      "or launch with the environment bootstrap: DISSECT_RANK, DISSECT_WORLD_SIZE, "
      "DISSECT_BOOTSTRAP=<host>:<port>");
}

#endif

}  // namespace dissect::bootstrap

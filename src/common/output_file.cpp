#include "dissect/common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace dissect {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string failure(const char* step, int error) { return std::string(step) + ": " + std::strerror(error); }

// Empty when the final name may be replaced: absent, or a regular file of ours.
std::string check_final_path(int directory, const std::string& file_name) {
  struct stat existing {};
  if (::fstatat(directory, file_name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? std::string() : failure("fstatat", errno);
  }
  if (S_ISLNK(existing.st_mode)) return "the path is a symbolic link; it is not followed";
  if (!S_ISREG(existing.st_mode)) return "the path exists and is not a regular file";
  if (existing.st_uid != ::geteuid())
    return "the path is owned by uid " + std::to_string(existing.st_uid) + ", not by us";
  return {};
}

bool write_all(int fd, const std::string& content, std::string& reason) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      reason = failure("write", errno);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    reason = failure("fsync", errno);
    return false;
  }
  return true;
}

std::string temporary_name(const std::string& file_name) {
  static std::atomic<unsigned> counter{0};
  return "." + file_name + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

WriteOutcome write_path_no_follow(const std::string& path, const std::string& content) {
  const auto [directory, file_name] = split_path(path);
  if (file_name.empty()) return {false, "the path ends in '/': it names no file"};
  return write_file_no_follow(directory, file_name, content);
}

std::string output_path_problem(const std::string& path) {
  const auto [directory, file_name] = split_path(path);
  if (file_name.empty()) return "the path ends in '/': it names no file";
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return failure(("cannot open the directory '" + directory + "'").c_str(), errno);
  if (::faccessat(dir.get(), ".", W_OK, AT_EACCESS) != 0) {
    return failure(("cannot write into the directory '" + directory + "'").c_str(), errno);
  }
  return check_final_path(dir.get(), file_name);
}

WriteOutcome write_file_no_follow(const std::string& directory, const std::string& file_name,
                                  const std::string& content) {
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return {false, failure("cannot open the directory", errno)};
  if (std::string refused = check_final_path(dir.get(), file_name); !refused.empty())
    return {false, refused};

  std::string temporary = temporary_name(file_name);
  FileDescriptor file(::openat(dir.get(), temporary.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (file.get() < 0) return {false, failure("cannot create the temporary file", errno)};
  std::string reason;
  bool ok = write_all(file.get(), content, reason);
  if (::close(file.release()) != 0 && ok) {
    ok = false;
    reason = failure("close", errno);
  }
  // Checked again just before the rename to narrow the window in which someone plants a link;
  // even if one lands after this check, rename() replaces the link itself and follows nothing.
  if (ok) reason = check_final_path(dir.get(), file_name);
  ok = ok && reason.empty();
  if (ok && ::renameat(dir.get(), temporary.c_str(), dir.get(), file_name.c_str()) != 0) {
    ok = false;
    reason = failure("rename", errno);
  }
  if (!ok) ::unlinkat(dir.get(), temporary.c_str(), 0);
  return {ok, reason};
}

}  // namespace dissect

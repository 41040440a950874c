#include "sim/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace shardsim {
namespace {

std::string Reason(int err) { return err != 0 ? std::strerror(err) : "unreadable"; }

std::string MiB(uint64_t bytes) {
  return std::to_string(bytes >> 20) + (bytes % (uint64_t{1} << 20) == 0 ? "" : "+") + " MiB";
}

}  // namespace

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever. It is cleared at
  // once, so a pipe with a writer is read to its end like a file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open '" + path + "': " + Reason(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::NotFound("cannot read '" + path + "': " + Reason(err));
  }
  // A directory opens as an empty stream on Linux: it would read as an empty document.
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::NotFound("cannot read '" + path + "': it is a directory, not a file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const std::string too_large = "'" + path + "' is larger than " + MiB(max_bytes) +
                                ", the most shardsim reads from one input file; is it the file "
                                "you meant?";
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::Invalid(too_large);
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  std::vector<char> buf(size_t{1} << 16);
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::NotFound("cannot read '" + path + "': " + Reason(err));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return Status::Invalid(too_large);
    }
    out.append(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

namespace {

Status WriteAll(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Invalid(Reason(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomic(const std::string& target, std::string_view content) {
  std::string path = target;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // Replace the file the link points at, not the link.
    if (char* real = ::realpath(target.c_str(), nullptr)) {
      path = real;
      std::free(real);
    }
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // /dev/null, /dev/stdout, a FIFO: written in place (renaming over them would replace them).
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return Status::Invalid("cannot write '" + target + "': " + Reason(errno));
    Status s = WriteAll(fd, content);
    ::close(fd);
    if (!s.ok()) return Status::Invalid("cannot write '" + target + "': " + s.message());
    return Status::Ok();
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // A name of our own beside the target: the same file system, so rename is atomic.
  std::string tmp = (slash == std::string::npos ? std::string() : dir) + "." + base + ".XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return Status::Invalid("cannot write '" + target + "': " + Reason(errno));
  tmp.assign(name.data());
  auto fail = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::Invalid("cannot write '" + target + "': " + why);
  };
  Status s = WriteAll(fd, content);
  if (!s.ok()) return fail(s.message());
  // mkstemp creates 0600; the result gets 0644 as the sweep's result files do (no umask call:
  // it is process-wide state).
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) return fail(Reason(errno));
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::Invalid("cannot write '" + target + "': " + Reason(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::Invalid("cannot write '" + target + "': " + Reason(err));
  }
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace shardsim

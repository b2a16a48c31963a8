#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/types.hpp"
#include "core/value_parsing.hpp"

namespace clm {

std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes) {
  const std::string name = what + " '" + echo_value(path) + "'";
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw InputError("cannot open " + name + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(name + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw InputError(name + " is not a regular file (a FIFO, device or socket)");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw InputError(name + " has " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " such a file may have");
  // O_NONBLOCK: should the path have become a FIFO since the stat, open does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot open " + name + ": " + std::strerror(errno));
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw InputError("cannot read " + name + ": " + why);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
    if (bytes.size() > max_bytes) {
      ::close(fd);
      throw InputError(name + " grew past " + std::to_string(max_bytes) + " bytes while it was read");
    }
  }
  ::close(fd);
  return bytes;
}

}  // namespace clm

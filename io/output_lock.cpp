#include "io/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "io/results_file.hpp"
#include "io/signal_cleanup.hpp"

namespace clm {

namespace fs = std::filesystem;

struct OutputLock::Held {
  int fd = -1;
  std::string path;
  std::pair<dev_t, ino_t> id{};
  std::vector<std::string> created_dirs;  // deepest last
  int signal_slot = -1;
  ~Held();
};

namespace {

// The locks this process holds, by the lock file's device and inode (so that two spellings of one path
// share one lock).
std::mutex g_mutex;
std::map<std::pair<dev_t, ino_t>, std::weak_ptr<OutputLock::Held>>& held_locks() {
  static std::map<std::pair<dev_t, ino_t>, std::weak_ptr<OutputLock::Held>> m;
  return m;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// "pid 1234 on host node7" from the holder's lock file, or "" when it says nothing readable.
std::string holder_line(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  if (text.back() != '\n') return "";  // not all written yet
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto space = text.find(' ');
  if (text.empty() || text.find('\n') != std::string::npos || space == std::string::npos) return "";
  return "pid " + text.substr(0, space) + " on host " + text.substr(space + 1);
}

// The holder writes its line just after it takes the lock; a writer refused in between (two sweeps started
// together, seen on a loaded sanitizer build) waits up to a second for it. "another process" when the
// file still says nothing readable (a holder that is not clmbench, or one killed before it wrote).
std::string holder(int fd) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (std::string who = holder_line(fd); !who.empty()) return who;
    usleep(5000);
  }
  return "another process";
}

void remove_dirs(std::vector<std::string>& dirs) {
  std::error_code ec;
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) fs::remove(*d, ec);  // only when empty
  dirs.clear();
}

}  // namespace

OutputLock::Held::~Held() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto& m = held_locks();
    const auto it = m.find(id);
    if (it != m.end() && it->second.expired()) m.erase(it);
  }
  struct stat now{};  // while still locked (see the header), and only the file this lock is
  if (::stat(path.c_str(), &now) == 0 && now.st_dev == id.first && now.st_ino == id.second) ::unlink(path.c_str());
  forget_on_signal(signal_slot);
  ::close(fd);
  remove_dirs(created_dirs);
}

OutputLock::OutputLock(const std::string& out_path) {
  const std::string path = lock_path(out_path);
  auto fail = [&](const std::string& why) -> OutputError {
    return OutputError("cannot write output file '" + out_path + "': " + why);
  };
  std::vector<std::string> created;
  std::error_code ec;
  std::vector<fs::path> missing;
  for (fs::path p = fs::path(out_path).parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    missing.push_back(p);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) {
      remove_dirs(created);
      throw fail("cannot create directory '" + it->string() + "': " + ec.message());
    }
    created.push_back(it->string());
  }
  std::unique_lock<std::mutex> lock(g_mutex);
  // A few tries: each fails only when the holder removed the file between our open and our flock.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      const std::string why = std::strerror(errno);
      remove_dirs(created);
      throw fail("cannot create its lock file '" + path + "': " + why);
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      remove_dirs(created);
      throw fail("its lock file '" + path + "' is not a regular file");
    }
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    if (held_locks()[id].lock()) {  // another writer of this process holds it (flock would let us in: same file)
      ::close(fd);
      remove_dirs(created);  // none: the holder's exist
      throw OutputError("output '" + out_path + "' is being written by another writer in this process (a run, "
                        "save or sweep started from another thread; lock '" + path +
                        "'); wait for it to finish, or choose another output");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      lock.unlock();  // holder() may wait up to a second: not while other outputs of this process wait to lock
      const std::string who = err == EWOULDBLOCK ? holder(fd) : "";
      ::close(fd);
      remove_dirs(created);
      if (err != EWOULDBLOCK) throw fail("cannot lock '" + path + "': " + std::strerror(err));
      throw OutputError("output '" + out_path + "' is being written by another clmbench (" + who + ", lock '" + path +
                        "'); wait for it to finish, or choose another --out");
    }
    struct stat now{};
    if (::stat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      ::close(fd);  // the holder removed it after our open: lock the new one
      continue;
    }
    const std::string text = std::to_string(getpid()) + " " + host_name() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const std::string why = std::strerror(errno);
      ::unlink(path.c_str());
      ::close(fd);
      remove_dirs(created);
      throw fail("cannot write its lock file '" + path + "': " + why);
    }
    auto held = std::make_shared<Held>();
    held->fd = fd;
    held->path = path;
    held->id = id;
    held->created_dirs = std::move(created);
    held->signal_slot = remove_on_signal(path);
    held_locks()[id] = held;
    held_ = std::move(held);
    return;
  }
  remove_dirs(created);
  throw fail("cannot take its lock file '" + path + "' (it keeps being replaced)");
}

OutputLock::~OutputLock() {
  // The registry's mutex is taken by Held's destructor, after the last reference is gone.
  held_.reset();
}
OutputLock::OutputLock(OutputLock&&) noexcept = default;
OutputLock& OutputLock::operator=(OutputLock&&) noexcept = default;

}  // namespace clm

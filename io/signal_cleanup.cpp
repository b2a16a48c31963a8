#include "io/signal_cleanup.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace clm {

namespace {

// Signal handlers may only use async-signal-safe calls, hence fixed buffers and unlink. One slot per file
// open at once: a sweep's workers each write their own part file. A slot is published by its first byte,
// written last.
constexpr int kSlots = 256;
char g_paths[kSlots][4096] = {};
std::mutex g_mutex;
int g_open = 0;
char g_message[8192] = {};
std::atomic<size_t> g_message_size{0};

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3] = {};  // the handlers before the first path was registered

std::atomic<bool> g_cooperative{false}, g_interrupted{false};
struct sigaction g_host_sigint = {};  // the host's SIGINT handler while cooperative interruption is on

extern "C" void remove_and_exit(int sig) {
  if (sig == SIGINT && g_cooperative.load()) {  // lock-free atomics: async-signal-safe
    g_interrupted.store(true);
    return;
  }
  for (auto& path : g_paths)
    if (path[0]) unlink(path);
  const size_t n = g_message_size.load();
  if (n > 0 && write(STDERR_FILENO, g_message, n) < 0) _exit(128 + sig);
  _exit(128 + sig);
}

}  // namespace

int remove_on_signal(const std::string& path) {
  if (path.empty()) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (g_paths[i][0]) continue;
    std::snprintf(g_paths[i] + 1, sizeof g_paths[i] - 1, "%s", path.c_str() + 1);
    std::atomic_signal_fence(std::memory_order_release);  // the rest of the path before its first byte
    g_paths[i][0] = path[0];
    if (g_open++ == 0) {
      // The handlers the process had (Python's, in the Python package) are put back when the last path is
      // forgotten: resetting them to the default would make a later Ctrl-C end the interpreter.
      struct sigaction action {};
      action.sa_handler = remove_and_exit;
      sigemptyset(&action.sa_mask);
      for (int k = 0; k < 3; ++k) sigaction(kSignals[k], &action, &g_previous[k]);
    }
    return i;
  }
  return -1;
}

void forget_on_signal(int& slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_paths[slot][0] = 0;
  slot = -1;
  if (--g_open == 0)
    for (int k = 0; k < 3; ++k) sigaction(kSignals[k], &g_previous[k], nullptr);
}

void set_cooperative_interrupt(bool on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (on == g_cooperative.load()) return;
  g_interrupted = false;
  if (on) {
    g_cooperative = true;
    if (g_open == 0) {  // else remove_and_exit is installed already, and g_previous holds the host's
      struct sigaction action {};
      action.sa_handler = remove_and_exit;
      sigemptyset(&action.sa_mask);
      sigaction(SIGINT, &action, &g_host_sigint);
    }
  } else {
    if (g_open == 0) sigaction(SIGINT, &g_host_sigint, nullptr);
    g_cooperative = false;
  }
}

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }

void set_signal_message(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_message_size = 0;  // not printed while it changes
  // On a terminal, after the progress line being redrawn there.
  const std::string text = line.empty() ? line : (isatty(STDERR_FILENO) ? "\n" : "") + line + "\n";
  const size_t n = std::min(text.size(), sizeof g_message);
  std::memcpy(g_message, text.data(), n);
  g_message_size = n;
}

}  // namespace clm

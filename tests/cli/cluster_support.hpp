// What the tests of `scalebench cluster` share (test_cluster_cli, test_cluster_slurm_cli,
// test_interconnect_emulated_cli): a shell command's output, why this machine cannot make
// emulated nodes, and a guard that removes a cluster whatever happened.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "cli_support.hpp"

namespace scalebench::test {

// stdout of a shell command (stderr discarded unless the command redirects it).
inline std::string shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) out += chunk.data();
  ::pclose(pipe);
  return out;
}

// Why `scalebench cluster up` cannot work here (a skip reason), or nothing when it can.
inline std::optional<std::string> why_no_namespaces() {
  if (::geteuid() != 0) return "network namespaces need root";
  if (std::system("ip netns add sbprobe >/dev/null 2>&1 && ip netns del sbprobe") != 0)
    return "`ip netns add` does not work here";
  if (std::system("unshare --uts true >/dev/null 2>&1") != 0)
    return "`unshare --uts` does not work here (util-linux, CAP_SYS_ADMIN)";
  if (std::system("ip link add sbprobebr type bridge >/dev/null 2>&1 && ip link del sbprobebr") !=
      0)
    return "a bridge cannot be made here";
  if (std::system("command -v tc >/dev/null 2>&1") != 0) return "no tc (iproute2)";
  return std::nullopt;
}

// One emulated-cluster test at a time on this machine (across test processes: ctest -j and the
// sanitizer job): they share the machine's cores, and their timing checks and Slurm's node
// choice assume no other cluster test beside them. Held until the test ends.
// Re-entrant within a process: a test with two clusters holds two guards.
struct ClusterTestLock {
  ClusterTestLock() {
    if (held()++ > 0) return;
    fd() = ::open("/tmp/scalebench-cluster-tests.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd() >= 0) (void)::flock(fd(), LOCK_EX);
  }
  ~ClusterTestLock() {
    if (--held() == 0 && fd() >= 0) ::close(fd());
  }
  ClusterTestLock(const ClusterTestLock&) = delete;
  ClusterTestLock& operator=(const ClusterTestLock&) = delete;

 private:
  static int& held() {
    static int count = 0;
    return count;
  }
  static int& fd() {
    static int descriptor = -1;
    return descriptor;
  }
};

// Removes the cluster `name` at scope exit, whatever happened: `cluster down`, then any
// namespace or link of its name that is still there.
struct ClusterGuard {
  std::string name;
  std::filesystem::path dir;
  ClusterTestLock lock = {};  // taken with the guard, before the cluster is made; freed last
  ~ClusterGuard() {
    (void)invoke({"cluster", "down", "--name", name, "--dir", dir.string()});
    (void)std::system(("for n in $(ip netns list | awk '{print $1}' | grep '^sb-" + name +
                       "-'); do ip netns del $n; done; ip link del sb" + name +
                       "br >/dev/null 2>&1")
                          .c_str());
  }
};

}  // namespace scalebench::test

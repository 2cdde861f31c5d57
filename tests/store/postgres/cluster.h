// A throwaway PostgreSQL 15 cluster for one test binary (initdb into a temporary directory, a
// free loopback port; as the `postgres` user when run as root, which initdb requires), and a
// new database per test. Get() is nullptr where the PostgreSQL 15 binaries are absent (the
// tests skip); CI installs them.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace turnpike::store::postgres {

namespace fs = std::filesystem;
const char* const kBin = "/usr/lib/postgresql/15/bin";

inline int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t size = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// One cluster for the whole binary (initdb costs about a second).
class Cluster {
 public:
  static Cluster* Get() {
    static Cluster* cluster = fs::exists(std::string(kBin) + "/initdb") ? new Cluster() : nullptr;
    return cluster;
  }
  std::string Url(const std::string& db) const {
    return "postgresql://turnpike@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }
  bool Run(const std::string& command) const {
    const std::string as = ::getuid() == 0 ? "runuser -u postgres -- " : "";
    return std::system((as + command + " >/dev/null 2>&1").c_str()) == 0;
  }
  bool Psql(const std::string& sql, const std::string& db = "postgres") const {
    return std::system((std::string(kBin) + "/psql -X -q -h 127.0.0.1 -p " + std::to_string(port_) +
                        " -U turnpike -d " + db + " -c \"" + sql + "\" >/dev/null 2>&1")
                           .c_str()) == 0;
  }
  bool Start() const {
    return Run(std::string(kBin) + "/pg_ctl -D " + data_ + " -l " + dir_ + "/log -o '-p " +
               std::to_string(port_) + " -k " + dir_ +
               " -c listen_addresses=127.0.0.1 -c fsync=off' -w start");
  }
  bool Stop() const { return Run(std::string(kBin) + "/pg_ctl -D " + data_ + " -m fast -w stop"); }
  // A new database per test.
  std::string Fresh() {
    const std::string db = "t" + std::to_string(++databases_);
    EXPECT_TRUE(Psql("CREATE DATABASE " + db));
    return db;
  }

 private:
  Cluster()
      : dir_((fs::temp_directory_path() / ("turnpike-pg-unit-" + std::to_string(::getpid())))
                 .string()),
        data_(dir_ + "/data"),
        port_(FreePort()) {
    fs::create_directories(dir_);
    if (::getuid() == 0) std::system(("chown postgres: " + dir_).c_str());
    EXPECT_TRUE(Run(std::string(kBin) + "/initdb -D " + data_ +
                    " -U turnpike --auth=trust -E UTF8 --no-sync"));
    EXPECT_TRUE(Start());
    std::atexit([] {
      Cluster* c = Get();
      c->Run(std::string(kBin) + "/pg_ctl -D " + c->data_ + " -m immediate -w stop");
      fs::remove_all(c->dir_);
    });
  }
  std::string dir_, data_;
  int port_;
  int databases_ = 0;
};

}  // namespace turnpike::store::postgres

#include "store/postgres/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace turnpike::store::postgres {
namespace {

constexpr uint32_t kMagic = 0x50535054;  // "TPSP"

void Put(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
}

// Reads `size` bytes at `pos`; false past the end.
bool Take(const std::string& in, size_t& pos, void* data, size_t size) {
  if (in.size() - pos < size) return false;
  std::memcpy(data, in.data() + pos, size);
  pos += size;
  return true;
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return ::fdatasync(fd) == 0;
}

std::string Encode(const Params& params, size_t rows) {
  std::string out;
  const uint32_t header[3] = {kMagic, static_cast<uint32_t>(rows),
                              static_cast<uint32_t>(params.size())};
  Put(out, header, sizeof header);
  for (const auto& value : params.values()) {
    const int64_t size = value ? static_cast<int64_t>(value->size()) : -1;
    Put(out, &size, sizeof size);
    if (value) out += *value;
  }
  return out;
}

}  // namespace

Spool::Spool(std::string path, size_t max_bytes) : path_(std::move(path)), max_bytes_(max_bytes) {
  for (const Entry& e : Load()) {
    rows_ += e.rows;
    bytes_ += Encode(e.params, e.rows).size();
  }
}

std::vector<Spool::Entry> Spool::Load() const {
  std::vector<Entry> out;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string in;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) in.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t pos = 0;
  while (pos < in.size()) {
    uint32_t header[3];
    if (!Take(in, pos, header, sizeof header) || header[0] != kMagic) break;
    Params::Values values;
    bool whole = true;
    for (uint32_t i = 0; i < header[2] && whole; ++i) {
      int64_t size = 0;
      whole = Take(in, pos, &size, sizeof size);
      if (!whole) break;
      if (size < 0) {
        values.emplace_back(std::nullopt);
        continue;
      }
      whole = in.size() - pos >= static_cast<size_t>(size);
      if (whole) values.emplace_back(in.substr(pos, static_cast<size_t>(size)));
      pos += whole ? static_cast<size_t>(size) : 0;
    }
    if (!whole) break;  // a torn tail
    out.push_back({Params(std::move(values)), header[1]});
  }
  return out;
}

Status Spool::Append(const Params& params, size_t rows) {
  const std::string bytes = Encode(params, rows);
  if (bytes_ + bytes.size() > max_bytes_) {
    return Error{ErrorCode::kUnavailable, "call-log spool " + path_ + " is full", ""};
  }
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && WriteAll(fd, bytes);
  if (fd >= 0) ::close(fd);
  if (!written) {
    return Error{ErrorCode::kUnavailable,
                 "cannot write the call-log spool " + path_ + ": " + std::strerror(errno), ""};
  }
  bytes_ += bytes.size();
  rows_ += rows;
  return Ok{};
}

Status Spool::Rewrite(const std::vector<Entry>& entries, size_t from) {
  if (from >= entries.size()) {
    ::unlink(path_.c_str());
    bytes_ = 0;
    rows_ = 0;
    return Ok{};
  }
  const std::string tmp = path_ + ".tmp";
  std::string bytes;
  size_t rows = 0;
  for (size_t i = from; i < entries.size(); ++i) {
    bytes += Encode(entries[i].params, entries[i].rows);
    rows += entries[i].rows;
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && WriteAll(fd, bytes);
  if (fd >= 0) ::close(fd);
  if (!written || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    return Error{ErrorCode::kInternal, "cannot rewrite the call-log spool " + path_, ""};
  }
  bytes_ = bytes.size();
  rows_ = rows;
  return Ok{};
}

Status Spool::Replay(const std::function<Status(const Params&, size_t rows)>& send) {
  if (empty()) return Ok{};
  const std::vector<Entry> entries = Load();
  size_t sent = 0;
  Status failed = Ok{};
  for (; sent < entries.size(); ++sent) {
    Status done = send(entries[sent].params, entries[sent].rows);
    if (done.ok()) continue;
    failed = done;
    // The server refused the rows themselves: replaying again cannot help; they are lost.
    if (done.error().code != ErrorCode::kUnavailable) {
      lost_rows_ += entries[sent].rows;
      continue;
    }
    break;
  }
  Status rewritten = Rewrite(entries, sent);
  if (!failed.ok()) return failed;
  return rewritten;
}

}  // namespace turnpike::store::postgres

#include "http/connection.h"

namespace turnpike::http {

void Connection::Arm(std::chrono::milliseconds timeout) {
  deadline_hit_ = false;
  const uint64_t generation = ++arm_generation_;
  deadline.expires_after(timeout);
  deadline.async_wait([self = shared_from_this(), generation](boost::system::error_code ec) {
    if (ec || self->arm_generation_ != generation) return;
    self->deadline_hit_ = true;
    boost::system::error_code ignored;
    self->socket.cancel(ignored);
  });
}

void Connection::Disarm() {
  ++arm_generation_;
  deadline.cancel();
}

void Connection::Close() {
  boost::system::error_code ec;
  deadline.cancel();
  socket.close(ec);
}

}  // namespace turnpike::http

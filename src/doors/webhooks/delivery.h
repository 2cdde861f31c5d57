// The webhook delivery loop: one thread of its own ("tp-webhooks") running one coroutine on its
// own io_context, never a worker's: it claims due deliveries from the store (webhook_store.h
// Claim, a job on the store thread's control lane), POSTs each to its endpoint, signed
// (signature.h), with webhook-id set to the delivery's id, and records the attempt (Finish):
// delivered on a 2xx answer; otherwise retried after Backoff (signature.h), until
// `max_attempts` attempts or `max_age` since the event, then failed.
//
// At least once: a delivery is marked delivered only after its 2xx; a gateway stopped (or
// killed) between the answer and the mark sends it again after its claim lapses, with the same
// webhook-id. Claims last `timeout` x `batch` + a margin, so that a batch sent one delivery
// after another never outlives its claim. The loop looks again at once after a batch and when
// this replica queued or replayed something (Wake); idle, it sleeps until the next pending
// delivery falls due (WebhookStore::NextDue: a retry's time, a claim's end), at most
// `poll_interval` (30 s by default: how late a delivery another replica queued and then dropped
// is found). An idle outbox makes no statement between looks.
//
// http:// and https:// endpoints (TLS verified against the system's trust store, the endpoint's
// host name checked); the answer's body is read up to 64 KiB and ignored.
//
// Ownership: owned by the Outbox, which it borrows. Threads: Wake from any thread; the
// constructor and Stop on the main thread. Stop lets the attempt in flight end (at most
// `timeout`), gives the rest of the batch's claims back unattempted, and joins the thread;
// past that wait it abandons the attempt (sent again once its claim lapses, as above).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <string_view>
#include <thread>

#include "common/result.h"

namespace turnpike::webhooks {

class Outbox;

// kInvalidRequest (field "url") unless `url` is an http:// or https:// URL with a host.
Status CheckEndpointUrl(std::string_view url);

class Deliverer {
 public:
  explicit Deliverer(Outbox& outbox);
  ~Deliverer();
  Deliverer(const Deliverer&) = delete;
  Deliverer& operator=(const Deliverer&) = delete;

  void Wake();
  void Stop();

  // For the loop (delivery.cc), on its thread.
  Outbox& outbox() { return outbox_; }
  boost::asio::steady_timer& timer() { return timer_; }
  boost::asio::ssl::context& tls() { return tls_; }
  bool woken = false;
  bool stopping = false;
  std::promise<void> ended;  // set by the loop when it returns

 private:
  Outbox& outbox_;
  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  boost::asio::ssl::context tls_;
  std::thread thread_;
};

}  // namespace turnpike::webhooks

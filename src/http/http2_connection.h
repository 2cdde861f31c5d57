// Internal to http/: the HTTP/2 protocol state of one client connection, without its socket.
// It owns the nghttp2 server session (libnghttp2, the codec) and the streams the client opened;
// the bytes come and go through Receive() and TakeOutput(), so the connection coroutine
// (http2_session.cc) does the I/O and tests feed frames straight in.
//
// Ownership: held by shared_ptr by the connection coroutine, its writer coroutine and every
// stream's handler coroutine (an exchange may outlive the socket). Streams (Http2Stream) are
// held by shared_ptr by the connection's table while nghttp2 has them open, and by the
// exchange that answers them. Thread safety: none; one worker thread for the whole life.
//
// Requests: a stream's header block and DATA are collected into its Request; at END_STREAM
// (or at once when the body passes `max_body_bytes`, then answered 413) `on_request` runs,
// which starts the stream's handler in its own coroutine. It never runs the handler inline:
// handler code never runs inside an nghttp2 callback.
//
// Responses: a stream's body is a queue of bytes that nghttp2 pulls through a data provider as
// the stream's and the connection's flow-control windows allow. An empty queue answers
// NGHTTP2_ERR_DEFERRED and a later Queue() resumes it; the exchange's Write() suspends while
// the queue holds more than kStreamQueueBytes, so a stream whose window the client keeps shut
// stops its own handler (and upstream read), not the connection's other streams.
//
// Limits and attacks: SETTINGS_MAX_CONCURRENT_STREAMS and SETTINGS_MAX_HEADER_LIST_SIZE are
// advertised and enforced; a header block over the header byte bound resets its stream
// (too many fields or bytes under the hard bound: 431 in the handler's error shape); nghttp2's
// own bounds cover CONTINUATION floods (kMaxContinuations frames), PING and SETTINGS floods
// (kMaxOutboundAcks queued acks, kMaxSettingsEntries entries per frame); client RST_STREAMs
// past kMaxClientResets in a kResetWindow make the connection end with GOAWAY
// ENHANCE_YOUR_CALM (rapid reset). Malformed frames and stream-id misuse end in nghttp2's own
// RST_STREAM or GOAWAY; input nghttp2 refuses outright ends the connection with GOAWAY
// PROTOCOL_ERROR.
#pragma once

#include <nghttp2/nghttp2.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "http/exchange.h"

namespace turnpike::http {

class Http2Connection;

// Per worker, written by that worker only; the counters are read (relaxed) by the metrics.
struct Http2Counters {
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> streams_opened{0};
  std::atomic<uint64_t> client_resets{0};  // RST_STREAM frames received
  std::atomic<uint64_t> goaways_sent{0};
  std::atomic<uint64_t> stream_timeouts{0};  // streams reset for a stalled response (below)
  // The worker's live connections (its thread only), so that a drain can send each a GOAWAY.
  std::unordered_set<Http2Connection*> live;
};

struct Http2Limits {
  uint32_t max_concurrent_streams = 128;
  size_t max_header_bytes = 16 * 1024;
  size_t max_header_fields = 100;
  size_t max_body_bytes = 4 * 1024 * 1024;
  // A response whose queue stays over kStreamQueueBytes with nothing taken by the client for
  // this long (its flow-control window held shut) is reset with CANCEL, which cancels its
  // upstream call: HTTP/1.1's write timeout, per stream.
  std::chrono::milliseconds stream_write_timeout{60'000};
};

// One request stream.
struct Http2Stream {
  Http2Stream(int32_t stream_id, Clock::time_point at) : id(stream_id), started(at) {}
  size_t queued() const { return out.size() - out_at; }

  const int32_t id;
  const Clock::time_point started;
  Request request;
  size_t header_bytes = 0;
  size_t header_fields = 0;
  bool headers_too_large = false;
  bool body_too_large = false;
  bool dispatched = false;  // on_request ran
  // The response body: bytes queued and not yet taken by nghttp2 are out[out_at..].
  std::string out;
  size_t out_at = 0;
  uint64_t taken = 0;                 // body bytes nghttp2 has taken, ever (progress)
  bool responded = false;             // the response head was submitted
  bool eof = false;                   // the handler ended the body
  bool deferred = false;              // the data provider answered DEFERRED; Queue() resumes it
  bool eof_sent = false;              // the last DATA frame (END_STREAM) went out
  bool reset_after_response = false;  // the request body was refused: RST once answered
  bool closed = false;                // nghttp2 closed the stream
  bool gone = false;                  // closed before its response was complete (reset or lost)
  std::function<void()> on_gone;
  // Wakes a Write() waiting for the queue to shrink (or the stream to close).
  std::unique_ptr<boost::asio::steady_timer> drained;
};

class Http2Connection : public std::enable_shared_from_this<Http2Connection> {
 public:
  static constexpr size_t kStreamQueueBytes = 64 * 1024;
  static constexpr size_t kMaxClientResets = 200;
  static constexpr std::chrono::seconds kResetWindow{10};
  static constexpr size_t kMaxContinuations = 8;
  static constexpr size_t kMaxOutboundAcks = 100;
  static constexpr size_t kMaxSettingsEntries = 32;

  using OnRequest = std::function<void(std::shared_ptr<Http2Stream>)>;

  // Submits the server's SETTINGS (sent by the first TakeOutput).
  Http2Connection(boost::asio::any_io_executor executor, const Http2Limits& limits,
                  Http2Counters& counters, std::string client_address, OnRequest on_request);
  ~Http2Connection();
  Http2Connection(const Http2Connection&) = delete;
  Http2Connection& operator=(const Http2Connection&) = delete;

  // Feeds bytes read from the client. False: the input was refused as a whole; the session is
  // terminated (a GOAWAY is queued) and no more is read.
  bool Receive(std::string_view bytes);
  // Appends the bytes to send now (up to about kOutputBytes). False on a fatal session error.
  static constexpr size_t kOutputBytes = 64 * 1024;
  bool TakeOutput(std::string& out);
  // Whether nghttp2 still wants to read or to write (false: the connection is finished).
  bool WantsRead() const;
  bool Alive() const;
  size_t open_streams() const { return streams_.size(); }

  // The socket is gone (or the coroutine ends): every open stream is gone, and nothing more is
  // received or sent (Receive and TakeOutput answer false); idempotent.
  void ConnectionLost();
  // Graceful end (drain): GOAWAY with the last stream seen; open streams finish. Once.
  void Shutdown();

  // For the exchange: the response head, with a body to follow (`body`) or not.
  bool SubmitResponse(Http2Stream& stream, unsigned status, std::string_view content_type,
                      std::string_view content_length, std::string_view request_id,
                      std::string_view extra_lines, bool body);
  // Appends to the stream's body (`eof`: and ends it) and resumes its data provider.
  void Queue(Http2Stream& stream, std::string_view data, bool eof);
  // RST_STREAM INTERNAL_ERROR.
  void Reset(Http2Stream& stream);
  // RST_STREAM CANCEL for a response the client stopped taking (Limits::stream_write_timeout).
  void ResetStalled(Http2Stream& stream);
  std::chrono::milliseconds stream_write_timeout() const { return limits_.stream_write_timeout; }

  // Replaces the request callback (before the first Receive).
  void set_on_request(OnRequest on_request) { on_request_ = std::move(on_request); }
  const std::string& client_address() const { return client_address_; }
  const boost::asio::any_io_executor& executor() const { return executor_; }

  // The writer coroutine waits here for output; Wake() ends the wait.
  boost::asio::steady_timer& work_signal() { return work_; }
  void Wake() { work_.cancel(); }
  bool reader_done = false;  // the reader coroutine ended: the writer flushes and closes
  bool writing = false;      // a write is under way (under the connection's write timeout)

 private:
  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                      void* self);
  static int OnDataChunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data,
                         size_t len, void* self);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self);
  static ssize_t ReadBody(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* self);

  Http2Stream* Find(int32_t stream_id);
  void Dispatch(Http2Stream& stream);
  void CountClientReset();
  void MarkGone(Http2Stream& stream);
  static void Bump(std::atomic<uint64_t>& counter) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  const boost::asio::any_io_executor executor_;
  const Http2Limits limits_;
  Http2Counters& counters_;
  const std::string client_address_;
  OnRequest on_request_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<int32_t, std::shared_ptr<Http2Stream>> streams_;
  boost::asio::steady_timer work_;
  bool shut_down_ = false;
  bool lost_ = false;
  Clock::time_point reset_window_start_{};
  size_t resets_in_window_ = 0;
};

}  // namespace turnpike::http

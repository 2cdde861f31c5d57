// The HTTP/2 client protocol state of one upstream connection, without its socket: it owns the
// nghttp2 client session (libnghttp2, the codec) and the streams opened on it. Bytes come and
// go through Receive() and TakeOutput(), so the connection coroutine (h2_connection.cc) does the
// I/O and tests feed frames straight in (the inbound codec, http/http2_connection.h, is the
// model and the tests' peer).
//
// Ownership: held by its H2Connection. Streams (H2Stream) are held by shared_ptr by the
// session's table while nghttp2 has them open, and by the H2Call that reads them, which may
// outlive the session. Thread safety: none; one worker thread for the whole life.
//
// Requests: Submit() sends the request head and the body (held by the stream, so a call that
// goes away mid-send leaves nothing dangling). Responses: the final head, DATA and the end are
// recorded on the stream and its `signal` timer is cancelled to wake the reader.
//
// Flow control: automatic WINDOW_UPDATEs are off; a stream's window (kStreamWindow) opens
// again only as its reader takes bytes (Consume()), so a slow client stalls only its own
// stream. The connection window is large (kConnectionWindow) and is given back as streams
// consume or are dropped.
//
// Cancel (the client went away, the call was dropped): RST_STREAM CANCEL. GOAWAY from the
// server: streams above its last stream id are closed REFUSED_STREAM (`refused`: never
// processed, safe to send again elsewhere); the ones below finish; no new stream is taken.
// ConnectionLost(): every open stream ends `lost` (with `sent` false if its head never left).
#pragma once

#include <nghttp2/nghttp2.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace turnpike::upstream {

struct OutgoingRequest;

// One request and its response as they arrive.
struct H2Stream {
  explicit H2Stream(const boost::asio::any_io_executor& executor) : signal(executor) {}
  void Wake() { signal.cancel(); }
  bool ended() const { return eof || closed; }

  int32_t id = -1;
  std::string body;  // the request body; the data provider reads body[body_at..]
  size_t body_at = 0;
  bool sent = false;  // the request's HEADERS frame went out
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  bool head = false;                                         // the final (non-1xx) head arrived
  std::string data;                                          // DATA received and not taken
  bool eof = false;                                          // END_STREAM received
  bool closed = false;                                       // nghttp2 closed the stream
  uint32_t error = 0;      // the close's error code (RST_STREAM, GOAWAY), 0 on a clean end
  bool refused = false;    // closed unprocessed (REFUSED_STREAM, above a GOAWAY's last id)
  bool lost = false;       // the connection failed under it
  bool cancelled = false;  // Cancel() sent RST_STREAM
  // Cancelled (never expiring) by every event above; the reader waits on it.
  boost::asio::steady_timer signal;
};

class H2Session {
 public:
  static constexpr uint32_t kStreamWindow = 256 * 1024;
  static constexpr int32_t kConnectionWindow = 16 * 1024 * 1024;
  // Streams per connection until the server's SETTINGS say otherwise (RFC 9113 advises at
  // least 100).
  static constexpr uint32_t kAssumedMaxStreams = 100;
  static constexpr size_t kOutputBytes = 64 * 1024;

  // `max_streams`: a local cap on streams per connection; 0 = the server's limit only.
  H2Session(boost::asio::any_io_executor executor, uint32_t max_streams);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // Opens a stream for `request` (":authority" = `authority`, ":scheme" http or https).
  // nullptr when the session takes no new stream (GOAWAY, lost, or nghttp2 refused it).
  std::shared_ptr<H2Stream> Submit(const OutgoingRequest& request, std::string_view scheme,
                                   std::string_view authority);
  // Feeds bytes read from the server. False: refused as a whole (the session is terminated).
  bool Receive(std::string_view bytes);
  // Appends what is to be sent now (up to about kOutputBytes). False on a fatal error.
  bool TakeOutput(std::string& out);
  bool WantsWrite() const;
  bool Alive() const;  // nghttp2 still wants to read or write

  // The reader took `n` bytes of `stream`'s data: opens the windows again.
  void Consume(H2Stream& stream, size_t n);
  // RST_STREAM CANCEL, unless the stream already ended; its unread data is given back.
  void Cancel(H2Stream& stream);
  // The socket is gone: every open stream ends `lost`; idempotent.
  void ConnectionLost();
  // GOAWAY (NO_ERROR) of our own: no new streams, open ones finish (pool shutdown).
  void Shutdown();

  // Whether another stream fits: not going away, not lost, below the stream limit.
  bool HasRoom() const;
  size_t open_streams() const { return streams_.size(); }
  bool going_away() const { return goaway_received_ || lost_ || shut_down_; }
  uint32_t max_streams() const;  // min(server's SETTINGS_MAX_CONCURRENT_STREAMS, local cap)

  // The connection's writer waits here for output; Wake() ends the wait.
  boost::asio::steady_timer& work_signal() { return work_; }
  void Wake() { work_.cancel(); }

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

  H2Stream* Find(int32_t stream_id);

  const boost::asio::any_io_executor executor_;
  const uint32_t local_max_streams_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<int32_t, std::shared_ptr<H2Stream>> streams_;
  boost::asio::steady_timer work_;
  bool goaway_received_ = false;
  bool shut_down_ = false;
  bool lost_ = false;
};

}  // namespace turnpike::upstream

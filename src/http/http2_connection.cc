#include "http/http2_connection.h"

#include <algorithm>
#include <array>
#include <boost/beast/http/field.hpp>
#include <cctype>
#include <cstring>

#include "net/h2_fields.h"

namespace turnpike::http {
namespace {

constexpr int kHttp2Version = 20;
// HPACK's accounting of a field: its name and value plus 32 bytes (RFC 7541 section 4.1).
constexpr size_t kFieldOverhead = 32;
// A header block this many times over max_header_bytes is not answered but reset: its bytes
// are not kept, and a CONTINUATION stream cannot grow it further.
constexpr size_t kHardHeaderFactor = 4;
// The most response header fields passed to nghttp2 (pseudo and fixed ones included).
constexpr size_t kMaxResponseFields = 64;

using net::H2Field;
using net::H2View;

}  // namespace

Http2Connection::Http2Connection(boost::asio::any_io_executor executor, const Http2Limits& limits,
                                 Http2Counters& counters, std::string client_address,
                                 OnRequest on_request)
    : executor_(std::move(executor)),
      limits_(limits),
      counters_(counters),
      client_address_(std::move(client_address)),
      on_request_(std::move(on_request)),
      work_(executor_) {
  work_.expires_at(boost::asio::steady_timer::time_point::max());
  Bump(counters_.connections);
  counters_.live.insert(this);
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &OnFrameRecv);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, &OnFrameSend);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &OnStreamClose);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_max_continuations(option, kMaxContinuations);
  nghttp2_option_set_max_outbound_ack(option, kMaxOutboundAcks);
  nghttp2_option_set_max_settings(option, kMaxSettingsEntries);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_session_server_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  const std::array<nghttp2_settings_entry, 2> settings{{
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits_.max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(limits_.max_header_bytes)},
  }};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
}

Http2Connection::~Http2Connection() {
  counters_.live.erase(this);
  nghttp2_session_del(session_);
}

bool Http2Connection::Receive(std::string_view bytes) {
  if (lost_) return false;
  const ssize_t rv = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (rv >= 0) return true;
  // Refused as a whole (a bad preface, a flood): GOAWAY unless nghttp2 queued one already.
  nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
  return false;
}

bool Http2Connection::TakeOutput(std::string& out) {
  if (lost_) return false;  // the streams' queues are gone: nothing may pull from them
  while (out.size() < kOutputBytes) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return false;
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return true;
}

bool Http2Connection::WantsRead() const { return nghttp2_session_want_read(session_) != 0; }

bool Http2Connection::Alive() const {
  return nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0;
}

void Http2Connection::ConnectionLost() {
  if (lost_) return;
  lost_ = true;
  // on_gone may reach back into this connection: take the table first.
  std::unordered_map<int32_t, std::shared_ptr<Http2Stream>> streams;
  streams.swap(streams_);
  for (auto& [id, stream] : streams) {
    stream->closed = true;
    MarkGone(*stream);
  }
}

void Http2Connection::Shutdown() {
  if (shut_down_ || lost_) return;
  shut_down_ = true;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
  Wake();
}

bool Http2Connection::SubmitResponse(Http2Stream& stream, unsigned status,
                                     std::string_view content_type, std::string_view content_length,
                                     std::string_view request_id, std::string_view extra_lines,
                                     bool body) {
  if (stream.closed) return false;
  stream.responded = true;
  const std::string status_text = std::to_string(status);
  std::array<nghttp2_nv, kMaxResponseFields> nva;
  size_t n = 0;
  nva[n++] = H2Field(":status", status_text);
  if (!content_type.empty()) nva[n++] = H2Field("content-type", content_type);
  if (!content_length.empty()) nva[n++] = H2Field("content-length", content_length);
  // Never indexed: inserting a value new in every response into HPACK's dynamic table (and
  // evicting what a later response could reuse) cost about 4,500 instructions per response.
  nva[n++] = H2Field("x-request-id", request_id, NGHTTP2_NV_FLAG_NO_INDEX);
  // The handler's "Name: value\r\n" lines; HTTP/2 wants the names in lower case.
  std::string names;
  n = net::AppendH2HeaderLines(extra_lines, names, nva, n, [](std::string_view) { return false; });
  nghttp2_data_provider provider{};
  provider.source.ptr = &stream;
  provider.read_callback = &ReadBody;
  const int rv =
      nghttp2_submit_response(session_, stream.id, nva.data(), n, body ? &provider : nullptr);
  if (!body) stream.eof_sent = true;
  Wake();
  return rv == 0;
}

void Http2Connection::Queue(Http2Stream& stream, std::string_view data, bool eof) {
  if (stream.closed) return;
  if (stream.out_at == stream.out.size()) {
    stream.out.clear();
    stream.out_at = 0;
  }
  stream.out.append(data);
  stream.eof = stream.eof || eof;
  if (stream.deferred) {
    stream.deferred = false;
    nghttp2_session_resume_data(session_, stream.id);
  }
  Wake();
}

void Http2Connection::Reset(Http2Stream& stream) {
  if (stream.closed) return;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream.id, NGHTTP2_INTERNAL_ERROR);
  Wake();
}

void Http2Connection::ResetStalled(Http2Stream& stream) {
  if (stream.closed) return;
  Bump(counters_.stream_timeouts);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream.id, NGHTTP2_CANCEL);
  Wake();
}

Http2Stream* Http2Connection::Find(int32_t stream_id) {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void Http2Connection::Dispatch(Http2Stream& stream) {
  if (stream.dispatched) return;
  stream.dispatched = true;
  on_request_(streams_.at(stream.id));
}

void Http2Connection::MarkGone(Http2Stream& stream) {
  if (!stream.eof_sent) stream.gone = true;
  if (stream.drained) stream.drained->cancel();
  if (!stream.gone) return;
  auto on_gone = std::move(stream.on_gone);
  stream.on_gone = nullptr;
  if (on_gone) on_gone();
}

void Http2Connection::CountClientReset() {
  Bump(counters_.client_resets);
  const Clock::time_point now = Clock::now();
  if (now - reset_window_start_ > kResetWindow) {
    reset_window_start_ = now;
    resets_in_window_ = 0;
  }
  if (++resets_in_window_ > kMaxClientResets) {
    nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
  }
}

int Http2Connection::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  auto stream = std::make_shared<Http2Stream>(frame->hd.stream_id, Clock::now());
  stream->request.version(kHttp2Version);
  c->streams_[frame->hd.stream_id] = std::move(stream);
  Bump(c->counters_.streams_opened);
  return 0;
}

int Http2Connection::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                              size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                              void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  Http2Stream* s = c->Find(frame->hd.stream_id);
  if (s == nullptr) return 0;
  s->header_bytes += namelen + valuelen + kFieldOverhead;
  if (s->header_bytes > kHardHeaderFactor * c->limits_.max_header_bytes) {
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM
  }
  if (s->header_bytes > c->limits_.max_header_bytes ||
      ++s->header_fields > c->limits_.max_header_fields) {
    s->headers_too_large = true;
  }
  if (s->headers_too_large) return 0;
  const std::string_view n = H2View(name, namelen);
  const std::string_view v = H2View(value, valuelen);
  if (n == ":method") {
    s->request.method_string(v);
  } else if (n == ":path") {
    s->request.target(v);
  } else if (n == ":authority") {
    s->request.set(boost::beast::http::field::host, v);
  } else if (!n.empty() && n.front() != ':') {
    s->request.insert(n, v);
  }
  return 0;
}

int Http2Connection::OnDataChunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data,
                                 size_t len, void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  Http2Stream* s = c->Find(stream_id);
  if (s == nullptr || s->body_too_large) return 0;
  std::string& body = s->request.body();
  if (body.size() + len > c->limits_.max_body_bytes) {
    // Answered 413 at once; the rest of the body is refused by RST_STREAM after the answer.
    s->body_too_large = true;
    s->reset_after_response = true;
    body.clear();
    c->Dispatch(*s);
    return 0;
  }
  body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int Http2Connection::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  switch (frame->hd.type) {
    case NGHTTP2_RST_STREAM:
      c->CountClientReset();
      return 0;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA: {
      if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
      Http2Stream* s = c->Find(frame->hd.stream_id);
      if (s != nullptr) c->Dispatch(*s);
      return 0;
    }
    default:
      return 0;
  }
}

int Http2Connection::OnFrameSend(nghttp2_session* session, const nghttp2_frame* frame, void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    Bump(c->counters_.goaways_sent);
    return 0;
  }
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
  Http2Stream* s = c->Find(frame->hd.stream_id);
  if (s == nullptr) return 0;
  s->eof_sent = true;
  if (s->reset_after_response) {
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_NO_ERROR);
  }
  return 0;
}

int Http2Connection::OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t, void* self) {
  auto* c = static_cast<Http2Connection*>(self);
  auto it = c->streams_.find(stream_id);
  if (it == c->streams_.end()) return 0;
  std::shared_ptr<Http2Stream> stream = std::move(it->second);
  c->streams_.erase(it);
  stream->closed = true;
  c->MarkGone(*stream);
  return 0;
}

ssize_t Http2Connection::ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                                  uint32_t* data_flags, nghttp2_data_source* source, void*) {
  auto* s = static_cast<Http2Stream*>(source->ptr);
  const size_t n = std::min(length, s->queued());
  if (n > 0) {
    std::memcpy(buf, s->out.data() + s->out_at, n);
    s->out_at += n;
    s->taken += n;
    if (s->queued() <= kStreamQueueBytes && s->drained) s->drained->cancel();
  }
  if (s->queued() == 0) {
    if (s->eof) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      std::string().swap(s->out);
      s->out_at = 0;
    } else if (n == 0) {
      s->deferred = true;
      return NGHTTP2_ERR_DEFERRED;
    }
  }
  return static_cast<ssize_t>(n);
}

}  // namespace turnpike::http

#include "upstream/h2_session.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "net/h2_fields.h"
#include "upstream/call.h"

namespace turnpike::upstream {
namespace {

// The most request header fields passed to nghttp2 (pseudo and fixed ones included).
constexpr size_t kMaxRequestFields = 48;
// What nghttp2 reports for SETTINGS_MAX_CONCURRENT_STREAMS before the server sent any.
constexpr uint32_t kUnlimitedStreams = 0xffffffffu;

using net::H2Field;
using net::H2View;

}  // namespace

H2Session::H2Session(boost::asio::any_io_executor executor, uint32_t max_streams)
    : executor_(std::move(executor)), local_max_streams_(max_streams), work_(executor_) {
  work_.expires_at(boost::asio::steady_timer::time_point::max());
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
  nghttp2_option_set_no_auto_window_update(option, 1);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_session_client_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  const std::array<nghttp2_settings_entry, 2> settings{{
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  }};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

H2Session::~H2Session() {
  ConnectionLost();
  nghttp2_session_del(session_);
}

uint32_t H2Session::max_streams() const {
  // Before the server's SETTINGS nghttp2 reports "unlimited": assume the common floor.
  uint32_t remote =
      nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  if (remote == kUnlimitedStreams) remote = kAssumedMaxStreams;
  return local_max_streams_ > 0 ? std::min(remote, local_max_streams_) : remote;
}

bool H2Session::HasRoom() const { return !going_away() && streams_.size() < max_streams(); }

std::shared_ptr<H2Stream> H2Session::Submit(const OutgoingRequest& request, std::string_view scheme,
                                            std::string_view authority) {
  if (going_away()) return nullptr;
  std::array<nghttp2_nv, kMaxRequestFields> nva;
  size_t n = 0;
  nva[n++] = H2Field(":method", request.method);
  nva[n++] = H2Field(":scheme", scheme);
  nva[n++] = H2Field(":authority", authority);
  nva[n++] = H2Field(":path", request.target);
  const std::string length = std::to_string(request.body.size());
  nva[n++] = H2Field("content-length", length);
  if (!request.content_type.empty()) nva[n++] = H2Field("content-type", request.content_type);
  auto add = [&nva, &n](std::string_view name, std::string_view value,
                        uint8_t flags = NGHTTP2_NV_FLAG_NONE) {
    if (!value.empty()) nva[n++] = H2Field(name, value, flags);
  };
  add("accept", request.accept);
  add("authorization", request.authorization);
  add("x-request-id", request.request_id, NGHTTP2_NV_FLAG_NO_INDEX);  // new in every request
  add("traceparent", request.traceparent, NGHTTP2_NV_FLAG_NO_INDEX);
  // The deployment's "Name: value\r\n..." lines; HTTP/2 wants the names in lower case
  // (nghttp2 copies the fields, so the lowered names need live only through the submit).
  // ("host" is :authority, and content-length was set above.)
  std::string names;
  n = net::AppendH2HeaderLines(request.extra_headers, names, nva, n, [](std::string_view name) {
    return name == "host" || name == "content-length";
  });
  auto stream = std::make_shared<H2Stream>(executor_);
  stream->signal.expires_at(boost::asio::steady_timer::time_point::max());
  stream->body.assign(request.body);
  nghttp2_data_provider provider{};
  provider.source.ptr = stream.get();
  provider.read_callback = &ReadBody;
  const int32_t id = nghttp2_submit_request(
      session_, nullptr, nva.data(), n, request.body.empty() ? nullptr : &provider, stream.get());
  if (id < 0) return nullptr;
  stream->id = id;
  streams_[id] = stream;
  Wake();
  return stream;
}

bool H2Session::Receive(std::string_view bytes) {
  if (lost_) return false;
  const ssize_t rv = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (rv >= 0) return true;
  nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
  return false;
}

bool H2Session::TakeOutput(std::string& out) {
  if (lost_) return false;
  while (out.size() < kOutputBytes) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return false;
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return true;
}

bool H2Session::WantsWrite() const { return !lost_ && nghttp2_session_want_write(session_) != 0; }

bool H2Session::Alive() const {
  return !lost_ &&
         (nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0);
}

void H2Session::Consume(H2Stream& stream, size_t n) {
  if (lost_ || n == 0) return;
  // Gives back the connection window always and the stream's while it is open.
  nghttp2_session_consume(session_, stream.closed ? 0 : stream.id, n);
  if (stream.closed) nghttp2_session_consume_connection(session_, n);
  if (nghttp2_session_want_write(session_) != 0) Wake();
}

void H2Session::Cancel(H2Stream& stream) {
  if (stream.closed || stream.cancelled || stream.id < 0) return;
  stream.cancelled = true;
  if (!lost_) {
    if (!stream.data.empty()) nghttp2_session_consume_connection(session_, stream.data.size());
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream.id, NGHTTP2_CANCEL);
  }
  stream.data.clear();
  Wake();
}

void H2Session::ConnectionLost() {
  if (lost_) return;
  lost_ = true;
  std::unordered_map<int32_t, std::shared_ptr<H2Stream>> streams;
  streams.swap(streams_);
  for (auto& [id, stream] : streams) {
    stream->closed = true;
    if (!stream->eof) stream->lost = true;
    stream->Wake();
  }
  Wake();
}

void H2Session::Shutdown() {
  if (shut_down_ || lost_) return;
  shut_down_ = true;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, nullptr, 0);
  Wake();
}

H2Stream* H2Session::Find(int32_t stream_id) {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? nullptr : it->second.get();
}

int H2Session::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* s = static_cast<H2Session*>(self);
  H2Stream* stream = s->Find(frame->hd.stream_id);
  // A second head after a 1xx replaces it; trailers (after the final head) add to it.
  if (stream != nullptr && !stream->head) {
    stream->headers.clear();
    stream->status = 0;
  }
  return 0;
}

int H2Session::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                        size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                        void* self) {
  auto* s = static_cast<H2Session*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  H2Stream* stream = s->Find(frame->hd.stream_id);
  if (stream == nullptr || stream->head) return 0;  // trailers are not kept
  const std::string_view n = H2View(name, namelen);
  const std::string_view v = H2View(value, valuelen);
  if (n == ":status") {
    unsigned code = 0;
    for (char c : v) code = code * 10 + static_cast<unsigned>(c - '0');
    stream->status = code;
  } else if (!n.empty() && n.front() != ':') {
    stream->headers.emplace_back(n, v);
  }
  return 0;
}

int H2Session::OnDataChunk(nghttp2_session* session, uint8_t, int32_t stream_id,
                           const uint8_t* data, size_t len, void* self) {
  auto* s = static_cast<H2Session*>(self);
  H2Stream* stream = s->Find(stream_id);
  if (stream == nullptr || stream->cancelled) {
    nghttp2_session_consume_connection(session, len);  // nobody will read it
    return 0;
  }
  stream->data.append(reinterpret_cast<const char*>(data), len);
  stream->Wake();
  return 0;
}

int H2Session::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* s = static_cast<H2Session*>(self);
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    // nghttp2 closes the streams above last_stream_id (REFUSED_STREAM) itself.
    s->goaway_received_ = true;
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  H2Stream* stream = s->Find(frame->hd.stream_id);
  if (stream == nullptr) return 0;
  if (frame->hd.type == NGHTTP2_HEADERS && !stream->head && stream->status >= 200) {
    stream->head = true;
  }
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) stream->eof = true;
  stream->Wake();
  return 0;
}

int H2Session::OnFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* s = static_cast<H2Session*>(self);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  H2Stream* stream = s->Find(frame->hd.stream_id);
  if (stream != nullptr) stream->sent = true;
  return 0;
}

int H2Session::OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self) {
  auto* s = static_cast<H2Session*>(self);
  auto it = s->streams_.find(stream_id);
  if (it == s->streams_.end()) return 0;
  std::shared_ptr<H2Stream> stream = std::move(it->second);
  s->streams_.erase(it);
  stream->closed = true;
  stream->error = error_code;
  if (error_code == NGHTTP2_REFUSED_STREAM) stream->refused = true;
  stream->Wake();
  return 0;
}

ssize_t H2Session::ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                            uint32_t* data_flags, nghttp2_data_source* source, void*) {
  auto* stream = static_cast<H2Stream*>(source->ptr);
  const size_t n = std::min(length, stream->body.size() - stream->body_at);
  std::memcpy(buf, stream->body.data() + stream->body_at, n);
  stream->body_at += n;
  if (stream->body_at == stream->body.size()) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    std::string().swap(stream->body);
    stream->body_at = 0;
  }
  return static_cast<ssize_t>(n);
}

}  // namespace turnpike::upstream

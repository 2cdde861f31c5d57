// The Provider interface: one implementation per API dialect (providers/<dialect>/), each able
// to play both roles of a translation.
//
//   upstream role: BuildRequest -> (stream) NewDecoder | (whole) ParseResponse | ParseError
//   client role:   ParseRequest -> (stream) NewEncoder | (whole) RenderResponse | RenderError
//
// Requests are translated through one pivot, an OpenAI chat completion request held as a
// boost::json::object: a client dialect's ParseRequest produces it, the upstream dialect's
// BuildRequest consumes it. Answers are translated through the event model of events.h. So a
// client in dialect A reaches a provider in dialect B through A.ParseRequest, B.BuildRequest,
// B.NewDecoder and A.NewEncoder, and a new dialect needs only its own folder. When A == B the
// gateway does not call any of this: the identity path forwards the bytes untouched.
//
// Requests are translated once per request (a DOM is fine there); streams are translated per
// chunk by a decoder/encoder pair made once per stream (see translator.h), which must not
// allocate per chunk in steady state. A DOM used once and dropped (a client's document read
// into the pivot, an upstream body built and serialized, a whole answer read or rendered) is
// parsed or built in a ScratchJson (scratch_json.h), not node by node on the heap; the pivot,
// which the request keeps for its retries, is the exception.
//
// Ownership: a Provider is immutable after construction and shared by every worker; decoders
// and encoders it makes belong to one stream on one worker. Thread safety: every const method
// is safe to call concurrently. Errors: values, never exceptions. A request the target cannot
// express is kInvalidRequest with `param` naming the client's field; an upstream answer that
// cannot be read is kUpstreamBadResponse.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "providers/events.h"
#include "stream/sse_parser.h"

namespace turnpike::providers {

// What Endpoint needs to know about one deployment.
struct EndpointParams {
  std::string_view base_path;  // the deployment's base URL path, no trailing '/' ("" or "/v1")
  std::string_view model;      // the model name the provider knows
  std::string_view api_key;    // may be empty (a keyless local server)
};

// Where and how a deployment of a dialect is called. Worked out once per deployment when the
// route table is built, so the hot path only hands these strings to the upstream call.
struct UpstreamEndpoint {
  std::string path;           // request target for a whole answer, base path included
  std::string stream_path;    // request target for a streamed answer
  std::string authorization;  // the Authorization header's value, or empty for none
  // More request header lines, "Name: value" joined by CRLF, no trailing CRLF; may be empty.
  std::string extra_headers;
  // Request target of the dialect's embeddings API (embeddings.h); empty when it has none.
  std::string embed_path;
  // Request target of the dialect's token-count API (Anthropic /v1/messages/count_tokens,
  // Gemini :countTokens), forwarded the client's body of the same dialect; empty when none.
  std::string count_tokens_path;
};

// How the dialect frames a streamed answer; the relay splits the upstream bytes accordingly and
// hands each frame to the decoder as an SseEvent (NDJSON: `data` is one line, `event` empty).
enum class StreamFraming : uint8_t {
  kSse,     // text/event-stream
  kNdjson,  // one JSON document per line (application/x-ndjson)
};

// The Content-Type a streamed answer in that framing comes with (and the Accept asked for).
constexpr std::string_view StreamContentType(StreamFraming framing) {
  return framing == StreamFraming::kNdjson ? "application/x-ndjson" : "text/event-stream";
}

// A pivot message and its JSON text (json::serialize of `value`): an agent turn's window holds
// them, the same messages turn after turn, each serialized once when it entered memory.
struct TextMessage {
  const boost::json::value* value = nullptr;
  std::string_view text;
};

// Used by BuildRequest.
struct UpstreamRequestOptions {
  std::string_view upstream_model;  // the model name the provider knows
  int64_t default_max_tokens = 0;   // for dialects that require a limit when the client gave none
  // Tools the pivot does not hold, offered as its `tools` member after its others (an agent's,
  // translated when it was made): `tools` for any dialect, `tools_text` (their JSON text) for
  // one that writes chat JSON as it stands. Read by BuildRequestWithWindow, not BuildRequest;
  // a pivot that holds tools keeps its own.
  const boost::json::array* tools = nullptr;
  std::string_view tools_text;
};

// Used by NewEncoder: what a client stream needs that the upstream may not say.
struct EncoderOptions {
  int64_t created = 0;         // unix seconds, for dialects whose chunks carry it
  bool include_usage = false;  // the client asked for a usage chunk (OpenAI stream_options)
  // The client's request body, for dialects whose answers echo request fields (the Responses
  // API). Borrowed: valid for the request's life; read once when the encoder is made.
  std::string_view client_body;
  // The same body as the door parsed it, when it did (a /v1/responses body, read for its
  // model): such dialects read it instead of parsing client_body again. Borrowed likewise.
  const boost::json::object* client_document = nullptr;
  // The Responses API: the members its response object echoes, already rendered (render.h's
  // ResponseHead::echo), in place of those read from client_body. An agent turn's (its
  // conversation, store and the agent's tools). Borrowed like client_body.
  std::string_view echo;
  bool background = false;  // the Responses API: the response runs in the background
};

// Turns one stream's upstream SSE events into StreamEvents. State is per stream and small
// (no text is kept); one decoder per stream, on the stream's worker.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;

  // Decodes one complete SSE event, handing 0..n events to `sink`, in order. Events that carry
  // nothing (pings, comments) give none. Errors: kUpstreamBadResponse when the event is not
  // what the dialect allows at this point; the stream should then end with that error.
  virtual Status Decode(const stream::SseEvent& event, EventSink& sink) = 0;

  // The same for an event before SSE framing (stream::SseParser's `take`): when `bytes` starts
  // with a whole event that this decoder reads without framing, decodes it into `sink` exactly
  // as Decode would and returns its size; otherwise 0, with nothing decoded. The default reads
  // none.
  virtual size_t DecodeFramed(std::string_view bytes, EventSink& sink) {
    static_cast<void>(bytes);
    static_cast<void>(sink);
    return 0;
  }

  // The usage reported so far, in the common convention (events.h).
  virtual const TokenUsage& usage() const = 0;
};

// Renders StreamEvents as one client stream's bytes, appended to the string given to
// set_output. One encoder per stream, on the stream's worker.
class StreamEncoder : public EventSink {
 public:
  void set_output(std::string& out) { out_ = &out; }

 protected:
  std::string& out() { return *out_; }

 private:
  std::string* out_ = nullptr;
};

class EmbeddingsApi;     // embeddings.h
class EmbeddingsClient;  // embeddings.h

class Provider {
 public:
  virtual ~Provider() = default;

  // The dialect's name as configured (`provider: anthropic`).
  virtual std::string_view name() const = 0;
  // False for a client-only dialect (an inbound API with no upstream role, such as OpenAI's
  // legacy completions): the route table refuses it as a deployment's provider, and its
  // upstream role methods are never called.
  virtual bool serves_upstream() const { return true; }

  // Upstream role.
  virtual UpstreamEndpoint Endpoint(const EndpointParams& params) const = 0;
  virtual StreamFraming stream_framing() const { return StreamFraming::kSse; }
  // The request body for this provider from the pivot request (`model` is replaced).
  virtual Result<std::string> BuildRequest(const boost::json::object& chat,
                                           const UpstreamRequestOptions& options) const = 0;
  // BuildRequest of `chat` with `window` inserted into its messages before messages[at] (at
  // most their count): an agent turn's window, kept apart from the turn's pivot. This default
  // translates a copy of the pivot with the window spliced in; a dialect that can write the
  // window's messages from their texts overrides it (OpenAI chat).
  virtual Result<std::string> BuildRequestWithWindow(const boost::json::object& chat,
                                                     const UpstreamRequestOptions& options,
                                                     size_t at,
                                                     std::span<const TextMessage> window) const;
  virtual std::unique_ptr<StreamDecoder> NewDecoder() const = 0;
  // A whole 2xx answer body. An error object in it is returned as that error (the dialect's
  // error type decides the code), so an upstream error never reaches a client as a 200.
  virtual Result<Response> ParseResponse(std::string_view body) const = 0;
  // A non-2xx answer: its status and body (any body, even not JSON) as a neutral error.
  virtual Error ParseError(int status, std::string_view body) const = 0;

  // Client role.
  // The pivot request from a client body in this dialect.
  virtual Result<boost::json::object> ParseRequest(std::string_view body) const = 0;
  // The same from a body a door already parsed (to decide a hand-off, core/handoff.h), so that
  // it is not parsed twice. By default not available (kInternal).
  virtual Result<boost::json::object> ParseRequestDocument(
      const boost::json::object& document) const;
  virtual std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const = 0;
  virtual std::string RenderResponse(const Response& response, int64_t created) const = 0;
  // The same, for dialects whose whole answers echo request fields (options.client_body); what
  // the gateway calls. By default RenderResponse(response, options.created).
  virtual std::string RenderWholeResponse(const Response& response,
                                          const EncoderOptions& options) const {
    return RenderResponse(response, options.created);
  }
  virtual ErrorReply RenderError(const Error& error) const = 0;
  // The identity path of a dialect whose requests the gateway reads only through the pivot (the
  // Responses API): the client's body for a deployment of this same dialect, bytes untouched
  // but for `model` (and what the dialect must force, as the Responses API's store:false).
  // Chat and Messages bodies are spliced by the gateway itself (openai/chat_request.h); by
  // default this is not available (kInternal).
  virtual Result<std::string> IdentityBody(std::string_view body,
                                           std::string_view upstream_model) const;

  // Optional: the dialect's embeddings translation (embeddings.h), owned by the provider; nullptr
  // when the API has none (the gateway answers 400 for a model served by such a dialect).
  // Upstream errors of embeddings calls go through ParseError above.
  virtual const EmbeddingsApi* embeddings() const { return nullptr; }
  // Optional: the dialect's embeddings API as a client API (embeddings.h); nullptr when the
  // gateway does not serve it to clients.
  virtual const EmbeddingsClient* embeddings_client() const { return nullptr; }
};

}  // namespace turnpike::providers

// GuardSink in front of a real client encoder (OpenAI chat chunks): at every split of the
// answer's text, every chunk the client gets is valid JSON, and its contents add up to the
// guarded text, the same as guarding the whole text at once.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "guard/guard_sink.h"
#include "guard_test_util.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::guard {
namespace {

using testing::Escape;
using testing::Turn;
using testing::Unescape;

providers::EncoderOptions Options() {
  providers::EncoderOptions options;
  options.created = 1700000000;
  return options;
}

// The client's encoder sink: renders each event as the client's SSE chunks.
class EncoderSink final : public model_call::AnswerSink {
 public:
  explicit EncoderSink(const providers::Provider& provider)
      : encoder_(provider.NewEncoder(Options())) {
    encoder_->set_output(out);
  }
  void OnEvent(const providers::StreamEvent& event) override { encoder_->OnEvent(event); }

  std::string out;

 private:
  std::unique_ptr<providers::StreamEncoder> encoder_;
};

// The text content of every `data:` chunk, in order; fails on a chunk that is not JSON.
std::string Contents(std::string_view sse) {
  std::string text;
  constexpr std::string_view kData = "data: ";
  for (size_t at = sse.find(kData); at != std::string_view::npos; at = sse.find(kData, at)) {
    at += kData.size();
    const size_t end = sse.find('\n', at);
    const std::string_view data = sse.substr(at, end - at);
    if (data == "[DONE]") continue;
    boost::system::error_code error;
    const boost::json::value chunk = boost::json::parse(data, error);
    EXPECT_FALSE(error) << data;
    if (error) continue;
    const boost::json::object& delta = chunk.at("choices").at(0).at("delta").as_object();
    if (const boost::json::value* content = delta.if_contains("content")) {
      if (content->is_string()) text += content->as_string();
    }
  }
  return text;
}

providers::StreamEvent Event(providers::EventKind kind, std::string_view text = {}) {
  providers::StreamEvent event;
  event.kind = kind;
  event.text = text;
  event.id = "chatcmpl-1";
  event.model = "m";
  event.finish = providers::FinishReason::kStop;
  return event;
}

std::string Encode(Turn& turn, std::string_view escaped, const std::vector<size_t>& cuts) {
  const providers::openai::OpenAiProvider openai;
  GuardSink guard(turn.config, turn.context, turn.report);
  EncoderSink client(openai);
  guard.AddDownstream(client);
  guard.OnEvent(Event(providers::EventKind::kStart));
  size_t from = 0;
  for (const size_t cut : cuts) {
    guard.OnEvent(Event(providers::EventKind::kTextDelta, escaped.substr(from, cut - from)));
    from = cut;
  }
  guard.OnEvent(Event(providers::EventKind::kTextDelta, escaped.substr(from)));
  guard.OnEvent(Event(providers::EventKind::kFinish));
  guard.OnEvent(Event(providers::EventKind::kEnd));
  return Contents(client.out);
}

TEST(GuardEncoder, EveryChunkIsValidJsonAtEverySplit) {
  for (const std::string& escaped :
       {Escape("caf\u00e9 \"https://evil.com/\u65e5\" and https://docs.example.com/x.\n\U0001F600 "
               "[a](evil.com) www.evil.com"),
        std::string(R"(see https:\/\/evil.com\/x \u00e9\ud83d\ude00 www.example.com\/a \\ end)")}) {
    Turn turn;
    const std::string expected = turn.Raw(Unescape(escaped));
    for (size_t i = 0; i <= escaped.size(); ++i) {
      for (size_t j = i; j <= escaped.size(); j += 3) {
        ASSERT_EQ(Encode(turn, escaped, {i, j}), expected) << i << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace turnpike::guard

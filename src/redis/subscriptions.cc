#include "redis/subscriptions.h"

namespace turnpike::redis {
namespace {

constexpr std::string_view kSubscribe[] = {"SUBSCRIBE", "PSUBSCRIBE"};
constexpr std::string_view kUnsubscribe[] = {"UNSUBSCRIBE", "PUNSUBSCRIBE"};

std::string_view SubscribeCommand(NameKind kind) { return kSubscribe[static_cast<size_t>(kind)]; }
std::string_view UnsubscribeCommand(NameKind kind) {
  return kUnsubscribe[static_cast<size_t>(kind)];
}

// Moved out before the call, so that it runs once even if the callback is re-entered.
void RunOnce(std::function<void()>& callback) {
  if (!callback) return;
  std::function<void()> run = std::move(callback);
  callback = nullptr;
  run();
}

Error Malformed(std::string message) {
  return Error{ErrorCode::kUnavailable, "redis subscriber: " + std::move(message), ""};
}

}  // namespace

void Subscriptions::Add(NameKind kind, std::string name, SubscriptionId id, MessageHandler handler,
                        std::function<void()> on_subscribed) {
  Entry& e = Names(kind)[name];
  e.handlers.push_back(Handler{id, std::move(handler), std::move(on_subscribed)});
  const bool first = e.handlers.size() == 1;
  where_.emplace(id, Where{kind, std::move(name)});
  if (!up_) return;
  if (first) {
    // Also when an UNSUBSCRIBE is still in flight: the server answers both, in order.
    Queue(SubscribeCommand(kind), where_[id].name);
    ++e.in_flight;
    return;
  }
  if (e.in_flight == 0) RunOnce(e.handlers.back().on_subscribed);
}

void Subscriptions::Remove(SubscriptionId id) {
  auto w = where_.find(id);
  if (w == where_.end()) return;
  const Where at = std::move(w->second);
  where_.erase(w);
  auto& names = Names(at.kind);
  auto it = names.find(at.name);
  Entry& e = it->second;
  std::erase_if(e.handlers, [id](const Handler& h) { return h.id == id; });
  if (!e.handlers.empty()) return;
  if (!up_) {
    names.erase(it);
    return;
  }
  Queue(UnsubscribeCommand(at.kind), at.name);
  ++e.in_flight;
}

size_t Subscriptions::Connected() {
  up_ = true;
  size_t sent = 0;
  for (NameKind kind : {NameKind::kChannel, NameKind::kPattern}) {
    for (auto& [name, e] : Names(kind)) {
      Queue(SubscribeCommand(kind), name);
      e.in_flight = 1;
      ++sent;
    }
  }
  return sent;
}

void Subscriptions::Disconnected() {
  up_ = false;
  commands_.clear();
  for (auto& names : names_) {
    std::erase_if(names, [](const auto& kv) { return kv.second.handlers.empty(); });
    for (auto& [name, e] : names) e.in_flight = 0;
  }
}

void Subscriptions::Confirmed(NameKind kind, const std::string& name) {
  auto& names = Names(kind);
  auto it = names.find(name);
  if (it == names.end() || it->second.in_flight == 0) return;
  if (--it->second.in_flight > 0) return;
  if (it->second.handlers.empty()) {
    names.erase(it);
    return;
  }
  for (Handler& h : it->second.handlers) RunOnce(h.on_subscribed);
}

void Subscriptions::Deliver(NameKind kind, const std::string& name, std::string_view channel,
                            std::string_view payload) {
  auto& names = Names(kind);
  auto it = names.find(name);
  if (it == names.end()) return;
  for (Handler& h : it->second.handlers) h.on_message(channel, payload);
}

Result<Subscriptions::Push> Subscriptions::Classify(const Reply& r) {
  if (r.is_error()) return Malformed("server refused: " + r.text);
  if (r.type != Reply::Type::kArray || r.items.empty()) return Malformed("not a push reply");
  const std::string& kind = r.items[0].text;
  const size_t n = r.items.size();
  if ((kind == "message" && n == 3) || (kind == "pmessage" && n == 4)) return Push::kMessage;
  if ((kind == "subscribe" || kind == "unsubscribe" || kind == "psubscribe" ||
       kind == "punsubscribe") &&
      n == 3) {
    return Push::kConfirmation;
  }
  if (kind == "pong") return Push::kPong;
  return Push::kOther;  // e.g. a newer server's kind: skipped
}

void Subscriptions::OnPush(const Reply& r, Push push) {
  if (push != Push::kMessage && push != Push::kConfirmation) return;
  // A pattern's replies are "pmessage", "psubscribe", "punsubscribe".
  const NameKind kind = r.items[0].text[0] == 'p' ? NameKind::kPattern : NameKind::kChannel;
  if (push == Push::kConfirmation) return Confirmed(kind, r.items[1].text);
  const std::string& channel = r.items[r.items.size() - 2].text;
  Deliver(kind, r.items[1].text, channel, r.items.back().text);
}

std::string Subscriptions::TakeCommands() {
  std::string taken;
  taken.swap(commands_);
  return taken;
}

void Subscriptions::Clear() {
  for (auto& names : names_) names.clear();
  where_.clear();
}

}  // namespace turnpike::redis

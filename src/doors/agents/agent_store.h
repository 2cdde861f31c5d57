// The agent door's store role ("agents", store/role.h): agents (a row per version),
// conversations, their items, and stored responses, on both engines from one set of statements
// (a portable role over store::SqlSession: `?` parameters in order), with the purposes
// agent_read and agent_write counted in turnpike_store_statements_total{op}.
//
// Tables (times are unix seconds; JSON is kept as text):
//   agents               (id, version) -> tenant_id, spec (the agent's JSON, agent.h),
//                        created_at, deleted_at (set on every version when deleted)
//   conversations        id -> tenant_id, metadata, created_at
//   conversation_items   (conversation_id, seq) -> id (unique), item (JSON), response_id (the
//                        turn that added it; NULL when added through the items API), created_at
//   agent_responses      id -> tenant_id, conversation_id, agent_id, agent_version, status,
//                        body (the response object), input_items (JSON array), context (JSON
//                        array: the items the turn was given plus its input and output, which a
//                        turn continuing it by previous_response_id starts from; "" for a
//                        conversation's turn that kept its items: the conversation's items
//                        through its own, read by GetResponseContext),
//                        previous_response_id, created_at, events (a background turn's SSE
//                        events once it ended, for resuming its stream; NULL otherwise)
//
// Statements per call (what the door's statement-count tests assert): every read is one
// statement; AppendItems and SaveTurn are one transaction of one statement per item plus one
// (the conversation's last seq, counted as agent_write: it is the write's), and one for the
// response; SaveTurns the same statements for several turns in one transaction;
// CreateConversation likewise; DeleteConversation two. A background turn's
// response is inserted when it starts (SaveTurn with the response only) and updated at its end
// (SaveTurn with update_response). FailUnended, at start-up, is one read plus one update per
// turn that had not ended.
//
// Retention (PurgeExpired, retention.h): a response is expired once it ended and was created
// before the cutoff; a conversation once its last activity (its creation, or its newest item's)
// is; one run deletes at most `limit` of each, in one transaction: one read for each kind, one
// delete per response, two per conversation.
//
// Threads: an AgentStore is one engine session's, used only on its store thread (reached in a
// job with engine.role<AgentStore>()). Errors: the engine's (kInternal, kUnavailable,
// kConflict for a duplicate id).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "doors/agents/agent.h"
#include "store/role.h"
#include "store/sql_session.h"

namespace turnpike::agents {

struct ConversationRow {
  std::string id;
  std::string tenant;
  std::string metadata = "{}";
  int64_t created_at = 0;
};

struct NewItem {
  std::string id;
  std::string json;  // the item object, with its id
};

struct ItemRow {
  int64_t seq = 0;
  std::string id;
  std::string json;
  std::string response_id;
  int64_t created_at = 0;
};

struct ItemPage {
  std::vector<ItemRow> items;
  bool has_more = false;
};

struct ResponseRow {
  std::string id;
  std::string tenant;
  std::string conversation_id;
  std::string agent_id;
  int64_t agent_version = 0;
  std::string status;
  std::string body;
  std::string input_items = "[]";
  std::string context = "[]";
  std::string previous_response_id;
  int64_t created_at = 0;
  std::string events;  // written only (a background turn's end); "" is NULL
};

// A stored response's stream (GetResponseEvents).
struct StoredStream {
  std::string tenant;
  std::string status;
  std::string events;  // "" when none was kept
};

// What one retention run deleted (their ids).
struct PurgeResult {
  std::vector<std::string> responses;
  std::vector<std::string> conversations;
};

// What one turn writes, in one transaction.
struct TurnWrite {
  std::string conversation_id;          // empty: the turn is not in a conversation
  std::vector<NewItem> items;           // appended in order (input, then output)
  std::optional<ResponseRow> response;  // stored when the turn says store
  // The response row exists (a background turn's): its status, body, context and events are
  // updated (kNotFound when it is gone: deleted while the turn ran).
  bool update_response = false;
  int64_t now = 0;
};

class AgentStore final : public store::Role {
 public:
  AgentStore(std::unique_ptr<store::SqlSession> session, store::RoleOps ops);
  ~AgentStore() override;

  Status PutAgent(const Agent& agent);
  // version 0: the latest. A deleted agent is not found.
  Result<std::optional<Agent>> GetAgent(std::string_view id, int64_t version);
  // The latest version of each agent, by id; tenant "" lists every tenant's.
  Result<std::vector<Agent>> ListAgents(std::string_view tenant);
  // Every version of an agent not deleted, newest first (the admin API's history).
  Result<std::vector<Agent>> ListVersions(std::string_view id);
  Result<bool> DeleteAgent(std::string_view id, int64_t now);

  Status CreateConversation(const ConversationRow& row, const std::vector<NewItem>& items);
  Result<std::optional<ConversationRow>> GetConversation(std::string_view id);
  // The newest `limit` conversations (by creation), of `tenant` ("" every tenant's): the admin
  // API's read-only list; a scan of the table (no tenant index), on a read lane.
  Result<std::vector<ConversationRow>> ListConversations(std::string_view tenant, int64_t limit);
  Result<bool> UpdateConversation(std::string_view id, std::string_view metadata);
  Result<bool> DeleteConversation(std::string_view id);

  // `after`: an item id (its position; none: from the start); limit items in seq order.
  Result<ItemPage> ListItems(std::string_view conversation, std::string_view after, int64_t limit,
                             bool descending);
  Result<std::vector<ItemRow>> AppendItems(std::string_view conversation,
                                           const std::vector<NewItem>& items, int64_t now);
  Result<std::optional<ItemRow>> GetItem(std::string_view conversation, std::string_view id);
  Result<bool> DeleteItem(std::string_view conversation, std::string_view id);
  // The last `count` items, oldest first (a turn's memory).
  Result<std::vector<ItemRow>> LastItems(std::string_view conversation, int64_t count);

  // The turn's items and response, in one transaction; the items' rows (with their seq) in
  // order.
  Result<std::vector<ItemRow>> SaveTurn(const TurnWrite& turn);
  // Several turns' writes in one transaction (a group commit, turn_writer.h); each turn's
  // result, in order. A turn whose background response is gone fails alone (kNotFound, nothing
  // of it written); any other error rolls the group back, and each turn is then written in its
  // own transaction, so that its error is its own. One turn: SaveTurn.
  std::vector<Result<std::vector<ItemRow>>> SaveTurns(const std::vector<const TurnWrite*>& turns);
  Result<std::optional<ResponseRow>> GetResponse(std::string_view id);
  // The same, its context filled in when it is a reference (the last `count` items through
  // its own): one statement more then.
  Result<std::optional<ResponseRow>> GetResponseContext(std::string_view id, int64_t count);
  Result<bool> DeleteResponse(std::string_view id);
  Result<std::optional<StoredStream>> GetResponseEvents(std::string_view id);
  // Every response still queued or in progress becomes failed, its body what `fail` makes of
  // the stored one; how many. For the turns of a process that stopped (agent_door.cc says when
  // it runs).
  Result<int64_t> FailUnended(const std::function<std::string(std::string_view)>& fail);
  // Fleet mode's sweep (fleet_loop.cc): the ids of the responses still queued or in progress;
  // of `ids`, the ones still unended become failed (one read and at most one update each, in
  // one transaction); how many.
  Result<std::vector<std::string>> UnendedIds();
  Result<int64_t> FailOrphans(const std::vector<std::string>& ids,
                              const std::function<std::string(std::string_view)>& fail);

  // Deletes expired responses and conversations (with their items): at most `limit` of each,
  // oldest first; `cutoff` in unix seconds.
  Result<PurgeResult> PurgeExpired(int64_t cutoff, int64_t limit);
  // Each agent's cost in the call log's `month` ("YYYY-MM"): one statement (start-up only: it
  // reads the month's log).
  Result<std::vector<std::pair<std::string, int64_t>>> AgentSpend(std::string_view month);

 private:
  // SaveTurn's statements, inside the caller's transaction.
  Result<std::vector<ItemRow>> WriteTurn(const TurnWrite& turn);
  Result<std::vector<ItemRow>> InsertItems(std::string_view conversation,
                                           const std::vector<NewItem>& items,
                                           std::string_view response_id, int64_t now);

  std::unique_ptr<store::SqlSession> sql_;
  const store::StoreOp read_;   // agent_read
  const store::StoreOp write_;  // agent_write
};

// The role as app/ registers it.
store::RoleSpec AgentsRole();

}  // namespace turnpike::agents

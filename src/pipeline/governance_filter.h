// The governance filter: authentication, model access, the per-request cost cap, budget
// reservations and rate limits (governance/admission.h) before the upstream call, and
// settlement after it. Runs first in the chain, so an unauthenticated caller learns nothing
// about models or routes.
//
// Admission reads only the worker's current snapshot (no I/O, no lock): the key's hash, one
// lookup, two budget CASes and up to four GCRA CASes.
//
// Settlement (OnComplete), exactly once per admitted request:
//   usage reported       Complete(usage): cost at the model's price, cached tokens as cached
//   no usage, output     Complete(estimate), flagged usage_estimated: the prompt estimate of
//                        cost.h plus ceil(output bytes / 3) completion tokens (the same
//                        deliberately high bytes-per-token ratio as the prompt estimate), so a
//                        stream whose provider sent no usage is never priced at $0
//   no usage, no output  Release: a failed or cancelled request costs nothing
// Errors (the client's OpenAI envelope): 401 without a credential or with a bad key, 403
// revoked/expired/suspended, 404 model not allowed, 400 per-request cap (param max_tokens),
// 429 insufficient_quota (budget) or rate_limit_exceeded (RPM/TPM, with Retry-After).
//
// Ownership and threads: one per worker (its SecretVerifier and SnapshotReader are the
// worker's own); the cell and route table outlive it.
#pragma once

#include <memory>

#include "governance/keys.h"
#include "governance/snapshot_cell.h"
#include "pipeline/filter.h"
#include "pipeline/route_table.h"

namespace turnpike::pipeline {

class GovernanceFilter : public Filter {
 public:
  GovernanceFilter(const governance::SnapshotCell& cell, std::shared_ptr<const RouteTable> routes,
                   governance::SecretVerifier verifier)
      : reader_(cell), routes_(std::move(routes)), verifier_(std::move(verifier)) {}

  FilterStatus OnRequest(RequestContext& context, Error& error) override;
  void OnComplete(RequestContext& context) override;

 private:
  governance::SnapshotReader reader_;
  std::shared_ptr<const RouteTable> routes_;
  governance::SecretVerifier verifier_;
};

}  // namespace turnpike::pipeline

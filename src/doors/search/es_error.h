// Errors of the search door in Elasticsearch's terms. The door and every backend return
// turnpike::Error (Result<T>), with one convention: `param` carries Elasticsearch's exception
// type ("parsing_exception", "index_not_found_exception", ...) so the door renders
//
//   {"error":{"root_cause":[{"type":T,"reason":R}],"type":T,"reason":R},"status":S}
//
// where S is HttpStatus(code). An empty `param` renders from the code (see EsErrorType).
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"

namespace turnpike::search {

// ES exception types the door and backends use.
inline constexpr std::string_view kParsingException = "parsing_exception";
inline constexpr std::string_view kIllegalArgument = "illegal_argument_exception";
inline constexpr std::string_view kMapperParsing = "mapper_parsing_exception";
inline constexpr std::string_view kIndexNotFound = "index_not_found_exception";
inline constexpr std::string_view kResourceExists = "resource_already_exists_exception";
inline constexpr std::string_view kDocumentMissing = "document_missing_exception";
inline constexpr std::string_view kVersionConflict = "version_conflict_engine_exception";
inline constexpr std::string_view kSearchPhase = "search_phase_execution_exception";
inline constexpr std::string_view kTimeout = "timeout_exception";

// A 400 (or `code`'s status) with ES type `type`.
inline Error EsError(std::string_view type, std::string reason,
                     ErrorCode code = ErrorCode::kInvalidRequest) {
  return Error{code, std::move(reason), std::string(type)};
}

// The ES type of `error`: its param, or a type derived from its code.
std::string_view EsErrorType(const Error& error);

// The ES error body for `error` (without the HTTP status line).
std::string RenderEsError(const Error& error);

}  // namespace turnpike::search

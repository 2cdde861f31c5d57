# Unity builds (-DTURNPIKE_UNITY_BUILD=ON; scripts/test.sh, and so CI, builds this way): each
# target's files are compiled in batches of up to 8 per compiler run, so the headers they share
# (the standard library, Asio, Beast, JSON) are parsed and their templates instantiated once per
# batch instead of once per file. A clean build took 0.73x the time (docs/BENCHMARKS.md "Build
# time").
#
# A batch is one translation unit: two files of one target that define the same name in an
# anonymous namespace (a `Bad` error helper, a `kJson` constant) do not compile together, nor
# does a file whose namespace alias hides a name another file's header looks up. The files below
# are compiled on their own for that reason. A new file that collides fails the unity build (CI)
# with "redefinition of" or an ambiguous call: rename the helper, or list the file here.
set(turnpike_unity_alone
  src/config/scalars.cc
  src/config/webhooks.cc
  src/doors/agents/conversations.cc
  src/doors/agents/resume.cc
  src/doors/agents/turn.cc
  src/doors/llm/chat_flow.cc
  src/doors/llm/chat_flow_count_tokens.cc
  src/doors/llm/chat_flow_embeddings.cc
  src/doors/llm/client_sink.cc
  src/doors/llm/llm_door.cc
  src/doors/search/embedded/rank.cc
  src/doors/search/embedded/store_docs.cc
  src/doors/search/search_cache.cc
  src/doors/search/search_ops.cc
  src/doors/webhooks/outbox.cc
  src/guard/url_scan.cc
  src/http/http2_connection.cc
  src/http/http2_exchange.cc
  src/http/http2_session.cc
  src/http/session.cc
  src/http/worker.cc
  src/loadgen/connection.cc
  src/mock/chat_request.cc
  src/mock/cohere_render.cc
  src/mock/gemini_render.cc
  src/mock/mock_handler.cc
  src/mock/openai_render.cc
  src/model_call/replay.cc
  src/observability/otlp_protobuf.cc
  src/providers/anthropic/request_to_chat.cc
  src/providers/anthropic/stream_decoder.cc
  src/providers/cohere/client_embeddings.cc
  src/providers/cohere/embeddings.cc
  src/providers/cohere/messages_from_chat.cc
  src/providers/cohere/request_to_chat.cc
  src/providers/cohere/stream_decoder.cc
  src/providers/gemini/embeddings.cc
  src/providers/gemini/gemini_provider.cc
  src/providers/gemini/request_from_chat.cc
  src/providers/gemini/request_to_chat.cc
  src/providers/gemini/stream_decoder.cc
  src/providers/ollama/ollama_provider.cc
  src/providers/ollama/stream_decoder.cc
  src/providers/openai/embeddings.cc
  src/providers/openai/stream_codec.cc
  src/providers/openai/upstream_body.cc
  src/providers/openai_responses/request_from_chat.cc
  src/providers/openai_responses/request_input.cc
  src/providers/openai_responses/upstream_answer.cc
  src/redis/subscriber.cc
  src/stream/sse_parser.cc
  src/upstream/call.cc
  src/upstream/h2_call.cc
  src/upstream/h2_connection.cc
  src/upstream/h2_session.cc
  tests/cache/l1_cache_test.cc
  tests/cache/request_digest_test.cc
  tests/cache/single_flight_test.cc
  tests/config/telemetry_config_test.cc
  tests/config/tls_config_test.cc
  tests/config/webhooks_config_test.cc
  tests/core/refill_wait_test.cc
  tests/doors/llm/response_cache_test.cc
  tests/doors/llm/semantic_index_test.cc
  tests/governance/budget_alerts_test.cc
  tests/governance/counter_table_test.cc
  tests/governance/counters_test.cc
  tests/governance/keys_test.cc
  tests/governance/rate_limit_test.cc
  tests/guard/encoder_test.cc
  tests/model_call/fan_out_test.cc
  tests/model_call/recording_codec_test.cc
  tests/model_call/replay_forms_test.cc
  tests/providers/cohere/embeddings_test.cc
  tests/providers/cohere/response_test.cc
  tests/providers/gemini/requests_test.cc
  tests/providers/ollama/embeddings_test.cc
)

# The folders this build configured (the fuzz build configures only some).
set(turnpike_configured_dirs)
set(pending ${PROJECT_SOURCE_DIR})
while(pending)
  list(POP_FRONT pending dir)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  list(APPEND turnpike_configured_dirs ${subdirs})
  list(APPEND pending ${subdirs})
endwhile()

# A source file's property is read in the directory of its target: set it in every configured
# folder from the file's own up to the top.
foreach(file IN LISTS turnpike_unity_alone)
  get_filename_component(dir ${PROJECT_SOURCE_DIR}/${file} DIRECTORY)
  set(dirs)
  while(NOT dir STREQUAL PROJECT_SOURCE_DIR)
    if(dir IN_LIST turnpike_configured_dirs)
      list(APPEND dirs ${dir})
    endif()
    get_filename_component(dir ${dir} DIRECTORY)
  endwhile()
  if(dirs)
    set_source_files_properties(${PROJECT_SOURCE_DIR}/${file} DIRECTORY ${dirs}
      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endforeach()

// `turnpike admin ...`: the admin API from a shell. Tables for people, `--json` (the API's own
// response body) for scripts. The URL comes from --url, else TURNPIKE_URL, else
// http://127.0.0.1:8080; the token from --token, else TURNPIKE_ADMIN_TOKEN.
// Exit status: 0 on a 2xx answer, 1 on an API error (its message on stderr), 2 on a usage or
// connection error.
#pragma once

#include <CLI/CLI.hpp>

namespace turnpike::app {

void RegisterAdminCommand(CLI::App& root);

}  // namespace turnpike::app

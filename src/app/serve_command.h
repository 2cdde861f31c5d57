// `turnpike serve` and `turnpike validate`: the composition root of the gateway. Everything
// the server needs is built here from the config and handed to constructors; nothing else in
// the tree builds its own dependencies.
#pragma once

#include <CLI/CLI.hpp>

namespace turnpike::app {

void RegisterServeCommands(CLI::App& root);

}  // namespace turnpike::app

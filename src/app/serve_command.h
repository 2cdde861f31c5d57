// `turnpike serve` and `turnpike validate`: the composition root of the gateway. Everything
// the server needs is built here from the config and handed to constructors; nothing else in
// the tree builds its own dependencies.
#pragma once

#include <CLI/CLI.hpp>

#include "app/feature.h"

namespace turnpike::app {

// `serve` runs the gateway with `features` (feature.h) beside the product's doors.
void RegisterServeCommands(CLI::App& root, Features features);

}  // namespace turnpike::app

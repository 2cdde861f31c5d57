// The `turnpike` binary's commands (serve, validate, admin, mock-provider, bench), with the
// gateway serving `features` (feature.h). src/app/main.cc passes the product's.
#pragma once

#include "app/feature.h"

namespace turnpike::app {

// The product's features, one line each (a feature of the product registers here).
Features ProductFeatures();

// Parses the command line and runs the command it names; the process's exit status.
int Main(int argc, char** argv, Features features);

}  // namespace turnpike::app

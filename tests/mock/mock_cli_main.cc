// A binary with only the mock-provider subcommand, so the command test can run it as a
// process (the real `turnpike` binary is wired in app/).
#include <CLI/CLI.hpp>

#include "mock/mock_command.h"

int main(int argc, char** argv) {
  CLI::App app{"turnpike (mock-provider only)"};
  turnpike::mock::RegisterMockProviderCommand(app);
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

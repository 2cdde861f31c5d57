// turnpike: one binary, several commands (app/main_command.h); see app/README in src/README.md
// for the composition root's role.
#include "app/main_command.h"

int main(int argc, char** argv) {
  return turnpike::app::Main(argc, argv, turnpike::app::ProductFeatures());
}

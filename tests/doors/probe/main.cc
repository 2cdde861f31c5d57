// turnpike-probe: the turnpike binary with the probe door (probe_door.h) registered beside the
// product's features: the one line the probe door adds outside its folder's own files.
#include "app/main_command.h"
#include "probe_door.h"

int main(int argc, char** argv) {
  turnpike::app::Features features = turnpike::app::ProductFeatures();
  features.push_back(turnpike::probe::ProbeFeature());
  return turnpike::app::Main(argc, argv, std::move(features));
}

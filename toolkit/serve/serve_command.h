// csan-serve's run: loads the models, serves until SIGTERM or SIGINT, then answers every
// request it accepted and returns (toolkit/serve/stop_signals.h: a second signal exits at once).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "toolkit/serve/translation_server.h"

namespace csan::serve {

struct ServeCommand {
  std::vector<ModelSpec> models;
  ServerOptions server;
  std::string access_log;  // "" : stderr
};

// Throws csan::Error for a bad option, a model that does not load, an address in use or
// an access log that cannot be opened.
void run_serve(const ServeCommand& command, std::ostream& log);

}  // namespace csan::serve

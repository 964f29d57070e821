// csan-serve's HTTP side, on cpp-httplib: the routes, the limits on what a client may
// send, and the graceful stop. Each model has its tasks::Translator and its BatchQueue.
//   POST /translate  {"model": NAME, "text": "..."} or {"q": [...]} (+ search options;
//                    toolkit/serve/translate_request.h) -> translations, scores, n-best
//   GET  /models     names, architecture, languages, precision, device
//   GET  /health     {"status": "ok"}
//   GET  /metrics    Prometheus text (toolkit/serve/metrics.h)
//   GET  /           the web page (toolkit/serve/web/)
// Every error is a one-line JSON object {"error": "...", "field": "..."} with its status:
// 400 malformed request or bad option, 404 unknown route or model (the model also 400
// when named in the body), 413 body or sentences over the limits, 503 queue full (with
// Retry-After), 504 no answer within --timeout-ms.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "toolkit/serve/access_log.h"
#include "toolkit/serve/batch_queue.h"
#include "toolkit/serve/metrics.h"
#include "toolkit/serve/translate_request.h"
#include "toolkit/tasks/translator.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace csan::serve {

struct ModelSpec {
  std::string name;
  tasks::TranslatorOptions translator;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                  // 0: any free port (the log says which)
  size_t max_body_bytes = 1 << 20;  // larger bodies get 413 without being read
  int64_t timeout_ms = 30000;       // a request not answered by then gets 504
  size_t max_connections = 1024;    // connections served at once; more wait for a thread
  int64_t read_timeout_s = 5;       // a client silent this long mid-request is dropped
  int64_t batch_size = 64;          // sentences per decoding batch (csan-generate's --batch-size)
  // Files whose lines each model translates once at start as one batch (BatchQueue::warm_up):
  // none, one for every model, or one per model in order.
  std::vector<std::string> warm_up_files;
  RequestLimits request;
  QueueOptions queue;
};

class TranslationServer {
 public:
  // Loads every model (throws csan::Error naming the checkpoint or option) and binds the
  // address (throws when it is taken); `log` gets the startup lines, `access` one line per request.
  TranslationServer(const std::vector<ModelSpec>& models, const ServerOptions& options, std::ostream& log,
                    std::ostream& access);
  ~TranslationServer();

  int port() const { return port_; }
  // Serves until stop(); returns once every accepted request is answered.
  void serve();
  // Stops accepting connections; serve() then finishes what it has. Safe from any thread.
  void stop();

 private:
  struct Model;
  void route();
  void warm_up_model(Model& model, const std::string& path);
  void translate(const httplib::Request& request, httplib::Response& response);
  std::string models_json() const;

  ServerOptions options_;
  std::ostream& log_;
  Metrics metrics_;
  AccessLog access_;
  std::vector<std::unique_ptr<Model>> models_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::atomic<bool> stop_requested_{false}, served_{false};
};

}  // namespace csan::serve

#include "toolkit/serve/translation_server.h"

#include <ATen/ThreadLocalState.h>

#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"
#include "toolkit/nn/precision.h"
#include "toolkit/serve/connection_threads.h"
#include "toolkit/serve/http.h"
#include "toolkit/serve/web_assets.h"
#include "toolkit/tasks/recipe.h"

namespace csan::serve {

namespace {

// Loads a model on a thread that ends afterwards. Loading runs OpenMP regions, and a
// thread's OpenMP workers live as long as it does: left on the main thread, they counted
// against the CPUs, and libgomp, seeing more threads than CPUs, stopped letting the
// batcher's worker spin between decoding's many small regions; each region then woke it
// from sleep (one sentence on 2 threads: p50 29 ms; 12 ms now, csan-generate's speed;
// tools/experiments/results/serve-latency-2026-11-29.md).
std::unique_ptr<tasks::Translator> load_on_a_thread_of_its_own(const tasks::TranslatorOptions& options,
                                                              std::ostream& log) {
  std::unique_ptr<tasks::Translator> translator;
  std::exception_ptr error;
  const at::ThreadLocalState caller_state;  // grad mode and the like, as on the caller
  std::thread([&] {
    try {
      at::ThreadLocalStateGuard state(caller_state);
      translator = std::make_unique<tasks::Translator>(options, log);
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) std::rethrow_exception(error);
  return translator;
}

using json = nlohmann::json;

// What the access log and the latency histogram need about the request a connection
// thread is serving (httplib's logger sees only the request and the response).
struct RequestTiming {
  Clock::time_point start;
  bool started = false;
  size_t sentences = 0;
};
thread_local RequestTiming timing;

std::string dump_json(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

void reply_error(httplib::Response& response, int status, const std::string& message, const std::string& field = "") {
  json body = {{"error", message}};
  if (!field.empty()) body["field"] = field;
  response.status = status;
  response.set_content(dump_json(body) + "\n", "application/json");
}

// "beam: 9 exceeds ..." -> "beam": the field a translator's option error names.
std::string field_of(const std::string& message) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos || colon > 40 || message.find(' ') < colon) return "";
  std::string field = message.substr(0, colon);
  while (!field.empty() && field.front() == '-') field.erase(0, 1);
  for (char& c : field)
    if (c == '-') c = '_';
  return field == "nbest" ? "n_best" : field;
}

std::string architecture_of(const std::string& path) {
  checkpoint::CheckpointReader reader(path);
  return tasks::describe_model(reader.meta(), path).config.get<std::string>("model.arch");
}

json hypothesis_json(const tasks::TextHypothesis& h, bool positional) {
  json out = {{"text", h.text}, {"score", h.score}};
  if (positional) {
    out["tokens"] = h.tokens;
    out["positional_scores"] = h.positional_scores;
  }
  return out;
}

}  // namespace

struct TranslationServer::Model {
  std::string name;
  std::vector<std::string> paths;
  std::string architecture;
  std::unique_ptr<tasks::Translator> translator;
  std::unique_ptr<BatchQueue> queue;
};

TranslationServer::TranslationServer(const std::vector<ModelSpec>& models, const ServerOptions& options,
                                     std::ostream& log, std::ostream& access)
    : options_(options), log_(log), access_(access) {
  if (models.empty()) throw Error("path: no model given", ErrorKind::bad_option);
  if (options_.timeout_ms < 1) throw Error("timeout-ms: must be at least 1", ErrorKind::bad_option);
  if (options_.max_connections < 1) throw Error("max-connections: must be at least 1", ErrorKind::bad_option);
  if (options_.read_timeout_s < 1) throw Error("read-timeout: must be at least 1 second", ErrorKind::bad_option);
  if (options_.batch_size < 1) throw Error("batch-size: must be at least 1", ErrorKind::bad_option);
  if (options_.request.max_sentences < 1) throw Error("max-sentences: must be at least 1", ErrorKind::bad_option);
  const auto& warm_up = options_.warm_up_files;
  if (warm_up.size() > 1 && warm_up.size() != models.size())
    throw Error("warm-up: " + std::to_string(warm_up.size()) + " files for " + std::to_string(models.size()) +
                    " models (give one for all, or one per --path)",
                ErrorKind::bad_option);
  for (const auto& spec : models) {
    if (spec.name.empty()) throw Error("name: a model's name must not be empty", ErrorKind::bad_option);
    for (const auto& m : models_)
      if (m->name == spec.name)
        throw Error("name: two models are called '" + spec.name + "' (give each --path its own --name)",
                    ErrorKind::bad_option);
    auto model = std::make_unique<Model>();
    model->name = spec.name;
    model->paths = spec.translator.paths;
    model->translator = load_on_a_thread_of_its_own(spec.translator, log_);
    model->architecture = architecture_of(spec.translator.paths.at(0));
    model->queue = std::make_unique<BatchQueue>(*model->translator, options_.queue, metrics_);
    if (!warm_up.empty()) warm_up_model(*model, warm_up.size() == 1 ? warm_up[0] : warm_up[models_.size()]);
    models_.push_back(std::move(model));
  }

  http_ = std::make_unique<httplib::Server>();
  const size_t connections = options_.max_connections;
  http_->new_task_queue = [connections] { return new ConnectionThreads(connections); };
  // Answers go out at once: with Nagle's algorithm on, an answer written in two parts
  // (headers, then body) waited for the client's delayed ACK of the first, 40 ms on Linux.
  http_->set_tcp_nodelay(true);
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_read_timeout(static_cast<time_t>(options_.read_timeout_s), 0);
  // A connection silent this long is closed, before its first request as between two.
  http_->set_keep_alive_timeout(static_cast<time_t>(options_.read_timeout_s));
  // httplib's default socket options also set SO_REUSEPORT, with which a second server on
  // a port in use binds it too and shares its connections instead of failing. The socket
  // is kept to deepen its backlog below.
  auto listening = std::make_shared<socket_t>(INVALID_SOCKET);
  http_->set_socket_options([listening](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening = sock;
  });
  route();
  port_ = options_.port == 0 ? http_->bind_to_any_port(options_.host) : options_.port;
  if (port_ < 0 || (options_.port != 0 && !http_->bind_to_port(options_.host, options_.port)))
    throw Error("port: cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                    " (in use, or not an address of this machine)",
                ErrorKind::bad_option);
  // httplib listens with a backlog of 5: a burst of clients (many idle connections, a
  // load test) would have their SYNs dropped and retried after seconds. Linux lets
  // listen() be called again on a listening socket to change its backlog.
  if (*listening != INVALID_SOCKET) ::listen(*listening, SOMAXCONN);
  std::string names;
  for (const auto& m : models_) names += (names.empty() ? "" : ", ") + m->name + " (" + m->architecture + ")";
  log_ << "csan-serve: listening on http://" << options_.host << ":" << port_ << "/ with models " << names << std::endl;
}

TranslationServer::~TranslationServer() = default;

void TranslationServer::warm_up_model(Model& model, const std::string& path) {
  const auto lines = read_lines(path);
  if (lines.empty()) throw Error("warm-up: " + path + " has no lines", ErrorKind::bad_input);
  tasks::TranslateOptions options;  // a request's defaults
  options.limits.batch_size = options_.batch_size;
  const auto started = Clock::now();
  model.queue->warm_up(lines, options, path);
  log_ << "csan-serve: " << model.name << " warmed up on " << lines.size() << " sentences of " << path << " in "
       << std::chrono::duration<double>(Clock::now() - started).count() << " s" << std::endl;
}

void TranslationServer::serve() {
  if (!stop_requested_) http_->listen_after_bind();
  served_ = true;
}

void TranslationServer::stop() {
  stop_requested_ = true;
  // httplib's stop() stops only a server that is listening: wait for serve() to get there.
  while (!http_->is_running() && !served_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  http_->stop();
}

std::string TranslationServer::models_json() const {
  json list = json::array();
  for (const auto& m : models_)
    list.push_back({{"name", m->name},
                    {"paths", m->paths},
                    {"architecture", m->architecture},
                    {"source_language", m->translator->source_language()},
                    {"target_language", m->translator->target_language()},
                    {"precision", nn::precision_name(m->translator->precision().precision)},
                    {"device", m->translator->device()}});
  return dump_json(json{{"models", list}}) + "\n";
}

void TranslationServer::route() {
  http_->set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    timing = RequestTiming{Clock::now(), true, 0};
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http_->set_logger([this](const httplib::Request& request, const httplib::Response& response) {
    const double seconds = timing.started ? std::chrono::duration<double>(Clock::now() - timing.start).count() : 0.0;
    access_.write(request.remote_addr, request.method, request.path, response.status, timing.sentences, seconds * 1000);
    // Routes, not paths, as labels: a client inventing paths must not grow the metrics.
    const bool known = request.path == "/translate" || request.path == "/models" || request.path == "/health" ||
                       request.path == "/metrics" || request.path == "/";
    metrics_.request(known ? request.path : "other", response.status, seconds);
    timing = RequestTiming{};
  });
  // Statuses httplib sets itself (404, 413 before the body is read, 400 for a request it
  // cannot parse) get the same one-line JSON as ours; ours already have a body.
  http_->set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        switch (response.status) {
          case 404:
            reply_error(response, 404,
                        "no such route: " + request.method + " " + request.path +
                            " (POST /translate, GET /models, /health, /metrics, /)");
            break;
          case 413:
            reply_error(response, 413, "the body is larger than the server's limit (--max-body-bytes)");
            break;
          default:
            reply_error(response, response.status,
                        response.status == 400 ? "not an HTTP request this server can read" : "HTTP error");
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    reply_error(response, 500, message);
  });

  http_->Post("/translate",
              [this](const httplib::Request& request, httplib::Response& response) { translate(request, response); });
  http_->Get("/models", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(models_json(), "application/json");
  });
  http_->Get("/health", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("{\"status\":\"ok\"}\n", "application/json");
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    std::vector<std::pair<std::string, size_t>> queued;
    for (const auto& m : models_) queued.emplace_back(m->name, m->queue->queued());
    response.set_content(metrics_.render(queued), "text/plain; version=0.0.4");
  });
  for (const WebAsset& asset : web_assets()) {
    auto handler = [&asset](const httplib::Request&, httplib::Response& response) {
      response.set_content(asset.body.data(), asset.body.size(), std::string(asset.content_type).c_str());
      response.set_header("Cache-Control", "no-cache");
    };
    http_->Get(std::string(asset.path), handler);
    if (asset.path == "/index.html") http_->Get("/", handler);
  }
}

void TranslationServer::translate(const httplib::Request& request, httplib::Response& response) {
  const auto started = timing.started ? timing.start : Clock::now();
  TranslateRequest parsed;
  try {
    parsed = parse_translate_request(request.body, options_.request);
  } catch (const RequestError& e) {
    metrics_.error(e.status() == 413 ? "too_large" : "bad_request");
    return reply_error(response, e.status(), e.what(), e.field());
  }
  Model* model = nullptr;
  if (parsed.model.empty() && models_.size() == 1) model = models_.front().get();
  for (const auto& m : models_)
    if (m->name == parsed.model) model = m.get();
  if (!model) {
    std::string names;
    for (const auto& m : models_) names += (names.empty() ? "" : ", ") + m->name;
    metrics_.error("unknown_model");
    return reply_error(response, 400,
                       parsed.model.empty()
                           ? "model: missing (this server has several: " + names + ")"
                           : "model: unknown model '" + parsed.model + "' (this server has " + names + ")",
                       "model");
  }
  tasks::TranslateOptions options;
  options.search = parsed.search;
  options.limits.batch_size = options_.batch_size;
  timing.sentences = parsed.lines.size();

  std::shared_ptr<TranslationJob> job;
  try {
    job = model->queue->submit(parsed.lines, options, started + std::chrono::milliseconds(options_.timeout_ms));
  } catch (const QueueFull& e) {
    metrics_.error("queue_full");
    response.set_header("Retry-After", "1");
    return reply_error(response, 503, e.what());
  }
  if (!model->queue->wait(*job)) {
    metrics_.error("timeout");
    return reply_error(response, 504,
                       "no translation within the server's timeout of " + std::to_string(options_.timeout_ms) + " ms");
  }
  if (job->error) {
    try {
      std::rethrow_exception(job->error);
    } catch (const Error& e) {
      const bool client = e.kind() == ErrorKind::bad_option || e.kind() == ErrorKind::bad_input;
      metrics_.error(client ? "bad_request" : "translation_failed");
      return reply_error(response, client ? 400 : 500, e.what(), client ? field_of(e.what()) : "");
    } catch (const std::exception& e) {
      metrics_.error("translation_failed");
      return reply_error(response, 500, std::string("translation failed: ") + e.what());
    }
  }
  json translations = json::array();
  for (const auto& sentence : job->hypotheses) {
    json item;
    if (sentence.empty()) {
      item = {{"text", ""}, {"score", nullptr}};
    } else {
      item = hypothesis_json(sentence.front(), parsed.positional_scores);
    }
    if (parsed.search.nbest > 1) {
      item["n_best"] = json::array();
      for (const auto& h : sentence) item["n_best"].push_back(hypothesis_json(h, parsed.positional_scores));
    }
    translations.push_back(std::move(item));
  }
  json body = {{"model", model->name}, {"translations", translations}};
  if (parsed.single) body["translation"] = translations.at(0)["text"];
  body["milliseconds"] = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  response.set_content(dump_json(body) + "\n", "application/json");
}

}  // namespace csan::serve

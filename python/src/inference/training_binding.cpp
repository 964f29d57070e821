// csan._inference.train: csan-train's library call (tasks::train) in this process. The
// GIL is released for the whole run and taken back only to hand each metrics record to
// the on_log callable. SIGINT/SIGTERM are csan-train's for the whole call (set-up
// included): the loop saves a checkpoint and stops, and the exit status says which signal
// came; the previous handlers (Python's) are restored on return.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "inference_bindings.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/kernel_switches.h"
#include "toolkit/tasks/train_command.h"
#include "toolkit/training/stop_signal.h"

namespace py = pybind11;

namespace csan::python {

namespace {

using Setting = std::variant<bool, int64_t, double, std::string>;

// A record as json.loads reads its metrics.jsonl line (non-finite numbers are null there).
py::dict record_dict(const training::TrainLogRecord& record) {
  py::dict d;
  for (const auto& [key, value] : record) {
    if (const auto* x = std::get_if<double>(&value))
      d[py::str(key)] = std::isfinite(*x) ? py::object(py::float_(*x)) : py::object(py::none());
    else if (const auto* n = std::get_if<long long>(&value))
      d[py::str(key)] = py::int_(*n);
    else
      d[py::str(key)] = py::str(std::get<std::string>(value));
  }
  return d;
}

// csan-train's exit status and the run's save dir.
std::pair<int, std::string> train(const std::string& recipe, const std::vector<std::string>& overrides,
                                  const std::vector<std::pair<std::string, Setting>>& settings,
                                  const std::string& command_line, const py::object& on_log) {
  core::check_kernel_switches();  // as every executable does before it starts (run_main)
  std::vector<std::pair<std::string, core::Value>> values;
  for (const auto& [key, setting] : settings)
    values.emplace_back(key, std::visit([](const auto& v) { return core::Value(v); }, setting));
  tasks::TrainInvocation how;
  how.command_line = command_line;
  if (!on_log.is_none())
    how.on_record = [&on_log](const training::TrainLogRecord& record) {
      py::gil_scoped_acquire gil;
      on_log(record_dict(record));  // an exception propagates and ends the run
    };
  py::gil_scoped_release release;
  training::StopSignalGuard signals;
  core::keep_large_allocations_mapped();  // as csan-train: training steps reuse their buffers
  const core::Config cfg = tasks::training_recipe(recipe, overrides, values);
  return {tasks::train(cfg, how), cfg.get<std::string>("checkpoint.save_dir")};
}

}  // namespace

void bind_training(py::module_& m) {
  m.def("train", &train, py::arg("recipe"), py::arg("overrides"), py::arg("settings"), py::arg("command_line"),
        py::arg("on_log"));
  m.def("train_flags", [] {
    std::vector<std::tuple<std::string, std::string, std::string>> flags;
    for (const auto& f : tasks::train_flags())
      flags.emplace_back(f.name, f.key,
                         f.type == core::ValueType::Bool     ? "bool"
                         : f.type == core::ValueType::Int    ? "int"
                         : f.type == core::ValueType::Double ? "float"
                                                             : "str");
    return flags;
  });
}

}  // namespace csan::python

#include "errors.h"

#include <cerrno>
#include <filesystem>

#include "toolkit/core/error.h"

namespace py = pybind11;

namespace csan::python {

namespace {

// The csan.errors class for each kind: the only place that pairs them.
const char* class_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_option:
      return "BadOptionError";
    case ErrorKind::bad_input:
      return "BadInputError";
    case ErrorKind::missing_file:
      return "MissingFileError";
    case ErrorKind::corrupt_checkpoint:
      return "CorruptCheckpointError";
    case ErrorKind::general:
      break;
  }
  return "Error";
}

void raise(const char* name, const char* message) {
  // Imported when needed: the pure-Python module defines the classes (with their
  // builtin bases: ValueError, FileNotFoundError), the extension only raises them.
  py::object cls = py::module_::import("csan.errors").attr(name);
  PyErr_SetString(cls.ptr(), message);
}

}  // namespace

void register_error_translation() {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& e) {
      raise(class_name(e.kind()), e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      raise(e.code() == std::errc::no_such_file_or_directory ? "MissingFileError" : "Error", e.what());
    }
  });
}

}  // namespace csan::python

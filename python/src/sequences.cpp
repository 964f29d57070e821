#include "sequences.h"

#include "toolkit/core/error.h"

namespace py = pybind11;

namespace csan::python {

namespace {

std::string type_name(py::handle object) { return Py_TYPE(object.ptr())->tp_name; }

// The items of a list, tuple or other iterable; a str (a sequence of characters) is refused.
py::object as_fast_sequence(py::handle object, const std::string& what, const char* expected) {
  if (PyUnicode_Check(object.ptr()) || PyBytes_Check(object.ptr()))
    throw py::type_error(what + ": expected " + expected + ", got a single " + type_name(object));
  PyObject* fast = PySequence_Fast(object.ptr(), "");
  if (!fast) {
    PyErr_Clear();
    throw py::type_error(what + ": expected " + expected + ", got " + type_name(object));
  }
  return py::reinterpret_steal<py::object>(fast);
}

std::string utf8_of(PyObject* item, const std::string& where) {
  if (!PyUnicode_Check(item)) {
    if (item == Py_None) throw py::type_error(where + " is None, expected str");
    throw py::type_error(where + ": expected str, got " + type_name(item));
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(item, &size);
  if (!data) {
    PyErr_Clear();
    throw Error(where + ": cannot be encoded as UTF-8 (it holds a lone surrogate)", ErrorKind::bad_input);
  }
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

std::vector<std::string> to_lines(py::handle sequence, const std::string& what) {
  const py::object fast = as_fast_sequence(sequence, what, "a sequence of str");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  std::vector<std::string> lines;
  lines.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) lines.push_back(utf8_of(items[i], what + "[" + std::to_string(i) + "]"));
  return lines;
}

scoring::ReferenceStreams to_reference_streams(py::handle sequence, const std::string& what) {
  const char* expected = "a sequence of reference streams (e.g. [refs])";
  const py::object outer = as_fast_sequence(sequence, what, expected);
  const Py_ssize_t n_streams = PySequence_Fast_GET_SIZE(outer.ptr());
  PyObject** streams = PySequence_Fast_ITEMS(outer.ptr());
  scoring::ReferenceStreams refs;
  bool any_missing = false;
  for (Py_ssize_t r = 0; r < n_streams; ++r) {
    const std::string stream_name = what + "[" + std::to_string(r) + "]";
    const py::object inner = as_fast_sequence(streams[r], stream_name, "a sequence of str (one reference stream)");
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(inner.ptr());
    if (r > 0 && static_cast<std::size_t>(n) != refs.streams[0].size())
      throw Error(stream_name + " has " + std::to_string(n) + " segments, " + what + "[0] has " +
                      std::to_string(refs.streams[0].size()),
                  ErrorKind::bad_input);
    PyObject** items = PySequence_Fast_ITEMS(inner.ptr());
    std::vector<std::string> lines(static_cast<std::size_t>(n));
    std::vector<bool> present(static_cast<std::size_t>(n), true);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (items[i] == Py_None) {
        present[i] = false;
        any_missing = true;
        continue;
      }
      lines[i] = utf8_of(items[i], stream_name + "[" + std::to_string(i) + "]");
    }
    refs.streams.push_back(std::move(lines));
    refs.present.push_back(std::move(present));
  }
  if (!any_missing) refs.present.clear();
  return refs;
}

}  // namespace csan::python

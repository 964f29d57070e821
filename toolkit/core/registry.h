// A name -> factory table. Components register where they are defined, with a static
// Registrar object, so nobody switches on a name:
//
//   core::Registry<ModelFactory>& arch_registry();   // function-local static: no init-order issue
//   static core::Registrar<ModelFactory> reg(arch_registry(), "transformer", &build_transformer);
//
// Note: an object file in a static library is linked only if something references it.
// A file whose only job is registration is named by its folder's pattern (*_arch.cpp in
// models/, *_entry.cpp in nn/, *_task.cpp in tasks/) and says
// CSAN_REGISTRATION_ANCHOR(<file stem>) once; the build generates
// csan::anchors::link_<folder>(), which calls every anchor of the folder, and the
// folder's registry accessor calls it (see cmake/CsanComponents.cmake).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/error.h"

namespace csan::core {

template <typename Factory>
class Registry {
 public:
  // `kind` names the entries in errors: "unknown arch 'x'; known: a, b".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(const std::string& name, Factory factory) {
    if (!entries_.emplace(name, std::move(factory)).second) throw Error(kind_ + " '" + name + "' is registered twice");
  }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  const Factory& get(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) throw Error("unknown " + kind_ + " '" + name + "'; known: " + known());
    return it->second;
  }
  // Sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_) out.push_back(entry.first);
    return out;
  }
  // "a, b, c".
  std::string known() const {
    std::string out;
    for (const auto& entry : entries_) out += (out.empty() ? "" : ", ") + entry.first;
    return out.empty() ? "(none)" : out;
  }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::map<std::string, Factory> entries_;
};

template <typename Factory>
struct Registrar {
  Registrar(Registry<Factory>& registry, const std::string& name, Factory factory) {
    registry.add(name, std::move(factory));
  }
};

}  // namespace csan::core

#define CSAN_REGISTRATION_ANCHOR(stem) \
  namespace csan::anchors {            \
  void stem() {}                       \
  }

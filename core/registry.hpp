// Name -> factory tables for problems, formulations and integrators. Registry names are a stable
// contract (docs/design.md section 3): configs, tests and users rely on them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace clm {

template <class Entry>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}
  // A name registered twice is a programming error that used to pass silently (the second entry unreachable,
  // e.g. a promoted mechanism-file header named like a zoo problem): refused when the table is built.
  void add(Entry e) {
    const std::string key = e.name;
    if (!entries_.emplace(key, std::move(e)).second)
      throw std::logic_error(kind_ + " '" + key + "' is registered twice");
  }
  const Entry& get(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& [k, _] : entries_) known += (known.empty() ? "" : ", ") + k;
      throw InputError("unknown " + kind_ + " '" + name + "' (known: " + known + ")");
    }
    return it->second;
  }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  std::vector<const Entry*> all() const {
    std::vector<const Entry*> out;
    for (const auto& [_, e] : entries_) out.push_back(&e);
    return out;
  }

 private:
  std::string kind_;
  std::map<std::string, Entry> entries_;
};

}  // namespace clm

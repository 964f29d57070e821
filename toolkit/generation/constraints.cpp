#include "toolkit/generation/constraints.h"

#include "toolkit/core/error.h"
#include "toolkit/generation/text_codec.h"

namespace csan::generation {

ConstraintOrder parse_constraint_order(const std::string& name) {
  if (name.empty()) return ConstraintOrder::none;
  if (name == "ordered") return ConstraintOrder::ordered;
  if (name == "unordered") return ConstraintOrder::unordered;
  throw Error("--constraints: unknown order '" + name + "' (ordered or unordered)", ErrorKind::bad_option);
}

ConstrainedLine split_constraints(const std::string& line, const TextCodec& target, int64_t unk,
                                  const std::string& origin, long line_number) {
  ConstrainedLine out;
  size_t tab = line.find('\t');
  out.source = line.substr(0, tab);
  for (int field = 1; tab != std::string::npos; ++field) {
    const size_t next = line.find('\t', tab + 1);
    const std::string text = line.substr(tab + 1, next == std::string::npos ? std::string::npos : next - tab - 1);
    tab = next;
    const std::string which = "constraint " + std::to_string(field);
    if (text.find_first_not_of(" \r") == std::string::npos)
      throw Error::at(origin, line_number, which + " is empty (constraints are tab-separated after the source)");
    std::vector<int64_t> ids = target.encode(text, origin, line_number, 0).ids;
    ids.pop_back();  // its </s>
    for (int64_t id : ids)
      if (id == unk)
        throw Error::at(origin, line_number, which + " '" + text + "' has a token outside the target vocabulary");
    if (ids.empty()) throw Error::at(origin, line_number, which + " '" + text + "' encodes to no token");
    out.constraints.push_back(std::move(ids));
  }
  if (out.constraints.size() > kMaxConstraints)
    throw Error::at(
        origin, line_number,
        std::to_string(out.constraints.size()) + " constraints, at most " + std::to_string(kMaxConstraints));
  return out;
}

ConstraintState::ConstraintState(const Constraints* constraints, ConstraintOrder order)
    : constraints_(constraints), order_(order) {
  if (constraints->size() > kMaxConstraints)
    throw Error("constraints: " + std::to_string(constraints->size()) + " for one sentence, at most " +
                std::to_string(kMaxConstraints));
  for (const auto& c : *constraints_) {
    if (c.empty()) throw Error("constraints: an empty constraint");
    total_ += static_cast<int64_t>(c.size());
  }
  if (order_ == ConstraintOrder::ordered) current_ = 0;
}

void ConstraintState::recount() {
  met_ = partial_;
  for (size_t c = 0; c < constraints_->size(); ++c)
    if (done_ >> c & 1) met_ += static_cast<int64_t>((*constraints_)[c].size());
}

int64_t ConstraintState::continuing(int64_t token) const {
  const Constraints& all = *constraints_;
  for (size_t c = 0; c < all.size(); ++c) {
    if (done_ >> c & 1 || static_cast<int64_t>(all[c].size()) <= partial_ || all[c][partial_] != token) continue;
    // Its first partial_ tokens must be those of the one in progress.
    bool same = true;
    for (int64_t t = 0; same && t < partial_; ++t) same = all[c][t] == all[current_][t];
    if (same) return static_cast<int64_t>(c);
  }
  return -1;
}

ConstraintState ConstraintState::advance(int64_t token) const {
  if (!constraints_ || finished()) return *this;
  ConstraintState next = *this;
  const Constraints& all = *constraints_;
  auto complete_if_whole = [&all](ConstraintState& s) {
    if (s.partial_ == static_cast<int64_t>(all[s.current_].size())) {
      s.done_ |= uint64_t{1} << s.current_;
      s.partial_ = 0;
      s.current_ = s.order_ == ConstraintOrder::ordered ? s.current_ + 1 : -1;
    }
  };
  if (order_ == ConstraintOrder::ordered) {
    const auto& c = all[current_];
    if (c[partial_] == token) {
      ++next.partial_;
    } else {
      // The constraint in progress starts again (at this token when it is its first).
      next.partial_ = c[0] == token ? 1 : 0;
    }
    complete_if_whole(next);
  } else {
    int64_t c = continuing(token);
    if (c >= 0) {
      next.current_ = c, ++next.partial_;
    } else {
      next.partial_ = 0, next.current_ = -1;  // the one in progress is broken off ...
      if (partial_ > 0) {
        c = next.continuing(token);  // ... and this token may start another
        if (c >= 0) next.current_ = c, next.partial_ = 1;
      }
    }
    if (next.partial_ > 0) complete_if_whole(next);
  }
  next.recount();
  return next;
}

std::vector<int64_t> ConstraintState::next_tokens() const {
  std::vector<int64_t> tokens;
  if (!constraints_ || finished()) return tokens;
  const Constraints& all = *constraints_;
  if (order_ == ConstraintOrder::ordered) {
    tokens.push_back(all[current_][partial_]);
    return tokens;
  }
  for (size_t c = 0; c < all.size(); ++c) {
    if (done_ >> c & 1) continue;
    tokens.push_back(all[c][0]);
    if (partial_ > 0 && static_cast<int64_t>(all[c].size()) > partial_) {
      bool same = true;
      for (int64_t t = 0; same && t < partial_; ++t) same = all[c][t] == all[current_][t];
      if (same) tokens.push_back(all[c][partial_]);
    }
  }
  return tokens;
}

}  // namespace csan::generation

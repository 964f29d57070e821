// Lexical constraints (csan-generate --constraints): token sequences that every output
// must contain, and how far a hypothesis has got through them (Post & Vilar 2018; Hu et
// al. 2019). Ordered: the constraints appear in the order given; unordered: in any order,
// each one whole (its tokens consecutive).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::generation {

enum class ConstraintOrder { none, ordered, unordered };
// "" -> none, "ordered", "unordered"; anything else throws csan::Error naming --constraints.
ConstraintOrder parse_constraint_order(const std::string& name);

// A sentence's constraints: each a non-empty sequence of target ids (no </s>).
using Constraints = std::vector<std::vector<int64_t>>;

// The most constraints one sentence may have (a hypothesis keeps which ones it has met as bits).
inline constexpr size_t kMaxConstraints = 64;

// Where a hypothesis stands: which constraints it has met and how far into the one it is
// in. A value type: advance() returns the state after one more token.
class ConstraintState {
 public:
  ConstraintState() = default;  // no constraints: finished
  // `constraints` must outlive the state (at most kMaxConstraints, none empty).
  ConstraintState(const Constraints* constraints, ConstraintOrder order);

  ConstraintState advance(int64_t token) const;
  // Constraint tokens met so far (the bank of dynamic beam allocation): those of the
  // constraints met whole, plus the tokens of the one in progress.
  int64_t met() const { return met_; }
  int64_t total() const { return total_; }
  bool finished() const { return met_ == total_ && partial_ == 0; }
  // The tokens that extend the progress: the next token of the constraint in progress,
  // and (unordered) the first token of every constraint not yet met.
  std::vector<int64_t> next_tokens() const;

 private:
  // Unordered: the constraint `c` not yet met whose first partial_ + 1 tokens are those
  // matched so far plus `token` (the lowest such index), or -1.
  int64_t continuing(int64_t token) const;
  void recount();

  const Constraints* constraints_ = nullptr;
  ConstraintOrder order_ = ConstraintOrder::none;
  uint64_t done_ = 0;     // bit c: constraint c met
  int64_t current_ = -1;  // the constraint in progress (partial_ > 0), or ordered: the next one
  int64_t partial_ = 0;   // its tokens matched so far
  int64_t met_ = 0, total_ = 0;
};

class TextCodec;

// A raw input line with its constraints after the source, tab-separated
// (fairseq-interactive's convention): "source\tconstraint 1\tconstraint 2".
struct ConstrainedLine {
  std::string source;
  Constraints constraints;
};
// Encodes the constraints with the target side's codec. Throws csan::Error "ORIGIN:LINE: ..."
// for an empty constraint, one with a token outside the target vocabulary (<unk>), and more
// than kMaxConstraints.
ConstrainedLine split_constraints(const std::string& line, const TextCodec& target, int64_t unk,
                                  const std::string& origin, long line_number);

}  // namespace csan::generation

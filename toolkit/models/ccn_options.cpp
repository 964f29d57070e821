#include "toolkit/models/ccn_options.h"

#include "toolkit/core/error.h"

namespace csan::models {

namespace {

const std::vector<std::string> kBranches = {"left", "right"};

int branch_of(const std::string& name) { return name == "left" ? kLeft : kRight; }

void check_length(const std::string& key, const std::vector<std::string>& gates, size_t expected, const char* order) {
  if (gates.size() != expected)
    throw Error::for_key(key, "needs " + std::to_string(expected) + " branches, one per gate (" + order + "), got " +
                                  std::to_string(gates.size()));
}

}  // namespace

const core::OptionTable<CcnOptions>& ccn_option_table() {
  using O = CcnOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("model.ccn.swap_probability", &O::swap_probability,
               "CCN: in training, the probability per sentence and encoder branch of swapping two of its tokens", 0.0,
               1.0)
          .add("model.ccn.encoder_left_qkv", &O::encoder_left_qkv,
               "CCN eq. 3: the branches feeding Q, K, V of the left encoder branch's attention", kBranches)
          .add("model.ccn.encoder_right_qkv", &O::encoder_right_qkv,
               "CCN eq. 4: the branches feeding Q, K, V of the right encoder branch's attention", kBranches)
          .add("model.ccn.decoder_left_kv", &O::decoder_left_kv,
               "CCN eq. 3: the memories feeding K, V of the decoder's left encoder-decoder attention", kBranches)
          .add("model.ccn.decoder_right_kv", &O::decoder_right_kv,
               "CCN eq. 4: the memories feeding K, V of the decoder's right encoder-decoder attention", kBranches);
  return table;
}

CcnOptions CcnOptions::from_config(const core::Config& cfg) {
  CcnOptions o = ccn_option_table().read(cfg);
  check_length("model.ccn.encoder_left_qkv", o.encoder_left_qkv, 3, "Q, K, V");
  check_length("model.ccn.encoder_right_qkv", o.encoder_right_qkv, 3, "Q, K, V");
  check_length("model.ccn.decoder_left_kv", o.decoder_left_kv, 2, "K, V");
  check_length("model.ccn.decoder_right_kv", o.decoder_right_kv, 2, "K, V");
  return o;
}

std::array<EncoderGates, 2> CcnOptions::encoder_gates() const {
  auto gates = [](const std::vector<std::string>& qkv) {
    return EncoderGates{branch_of(qkv[0]), branch_of(qkv[1]), branch_of(qkv[2])};
  };
  return {gates(encoder_left_qkv), gates(encoder_right_qkv)};
}

std::array<DecoderGates, 2> CcnOptions::decoder_gates() const {
  auto gates = [](const std::vector<std::string>& kv) { return DecoderGates{branch_of(kv[0]), branch_of(kv[1])}; };
  return {gates(decoder_left_kv), gates(decoder_right_kv)};
}

const std::vector<std::string>& ccn_attention_roles() {
  static const std::vector<std::string> roles = {"encoder.left.self", "encoder.right.self", "decoder.self",
                                                 "decoder.cross.left", "decoder.cross.right"};
  return roles;
}

}  // namespace csan::models

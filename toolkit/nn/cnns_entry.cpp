#include "toolkit/nn/cnns_entry.h"

#include <cmath>
#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/residual_block.h"
#include "toolkit/nn/transformer_layer_options.h"

CSAN_REGISTRATION_ANCHOR(cnns_entry)

namespace csan::nn {

const core::OptionTable<CnnsOptions>& cnns_option_table() {
  static const auto table =
      core::OptionTable<CnnsOptions>()
          .add("model.cnns.kernel_size", &CnnsOptions::kernel_size,
               "CNNs: positions each depthwise kernel covers (odd: centred on the position)", 1)
          .add("model.cnns.conv_layers", &CnnsOptions::conv_layers,
               "CNNs: depthwise-separable convolution sublayers before each chosen self-attention", 1)
          .add("model.cnns.encoder_layers", &CnnsOptions::encoder_layers,
               "CNNs: encoder layers (0 = lowest) with convolutions before their self-attention", 0)
          .add("model.cnns.decoder_layers", &CnnsOptions::decoder_layers,
               "CNNs: decoder layers with causal convolutions before their self-attention", 0);
  return table;
}

CnnsOptions CnnsOptions::from_config(const core::Config& cfg) {
  CnnsOptions o = cnns_option_table().read(cfg);
  if (o.kernel_size % 2 == 0)
    throw Error::for_key("model.cnns.kernel_size",
                         "must be odd (a kernel centred on the position), got " + std::to_string(o.kernel_size));
  return o;
}

SeparableConvImpl::SeparableConvImpl(int64_t dim, int64_t kernel_size) : kernel_size_(kernel_size) {
  depthwise = register_parameter("depthwise", torch::empty({dim, 1, kernel_size}));
  pointwise = register_module("pointwise", Dense(dim, dim));
  norm = register_module("norm", layer_norm(dim));
  // A depthwise kernel's fan-in is its k positions (PyTorch's Conv1d default bound).
  const double bound = 1.0 / std::sqrt(double(kernel_size));
  init_uniform(depthwise, -bound, bound);
  init_xavier_uniform(pointwise->weight);
  init_constant(pointwise->bias, 0.0);
}

torch::Tensor SeparableConvImpl::forward(const torch::Tensor& x, bool causal, const torch::Tensor& earlier) {
  const int64_t k = kernel_size_;
  torch::Tensor channels_first = x.transpose(1, 2);  // [B, D, T]
  int64_t left = causal ? k - 1 : (k - 1) / 2, right = causal ? 0 : (k - 1) / 2;
  if (earlier.defined() && earlier.size(1) > 0) {
    channels_first = torch::cat({earlier.transpose(1, 2), channels_first}, 2);
    left -= earlier.size(1);
  }
  channels_first = torch::constant_pad_nd(channels_first, {left, right});
  const int64_t one = 1, none = 0;
  const torch::Tensor mixed = torch::conv1d(channels_first, depthwise.to(x.scalar_type()), torch::Tensor(), one, none,
                                            one, /*groups=*/x.size(2));
  return torch::relu(pointwise(mixed.transpose(1, 2)));
}

CnnsEntry::CnnsEntry(int64_t embed_dim, int64_t kernel_size, int64_t conv_layers, bool normalize_before, double dropout)
    : kernel_size_(kernel_size), normalize_before_(normalize_before), dropout_(dropout) {
  for (int64_t i = 0; i < conv_layers; ++i) convs->push_back(SeparableConv(embed_dim, kernel_size));
  register_module("convs", convs);
}

torch::Tensor CnnsEntry::before(const torch::Tensor& x_in, const BeforeInputs& in) {
  torch::Tensor x = x_in;
  for (size_t i = 0; i < convs->size(); ++i) {
    auto conv = convs[i]->as<SeparableConv>();
    const std::string cache = in.cache_key + ".cnns." + std::to_string(i);
    x = residual_block(x, conv->norm, normalize_before_, dropout_, in.training, [&](const torch::Tensor& h) {
      torch::Tensor input = in.padding_mask.defined() ? h.masked_fill(in.padding_mask.unsqueeze(-1), 0.0) : h;
      torch::Tensor earlier;
      if (in.state) {  // causal by construction: decoders are the ones with a state
        if (in.state->has(cache)) {
          earlier = in.state->at(cache).squeeze(1);  // [R, T so far, D]
          const int64_t keep = std::min<int64_t>(kernel_size_ - 1, earlier.size(1));
          earlier = earlier.narrow(1, earlier.size(1) - keep, keep);
        }
        in.state->append(cache, input.unsqueeze(1));
      }
      return conv->forward(input, in.causal, earlier);
    });
  }
  return x;
}

namespace {

std::shared_ptr<AttentionEntry> make_cnns_entry(const core::Config& cfg, const AttentionSite& site) {
  const CnnsOptions o = CnnsOptions::from_config(cfg);
  EntryLayers layers{"cnns", &o.encoder_layers, &o.decoder_layers};
  layers.no_cross = "convolves the layer's own input before its self-attention (self-attention sites only)";
  if (!applies_at(layers, site)) return nullptr;
  const bool pre = cfg.has("model.normalize_before") && cfg.get<bool>("model.normalize_before");
  const double dropout = cfg.has("model.dropout") ? cfg.get<double>("model.dropout") : 0.0;
  return std::make_shared<CnnsEntry>(site.embed_dim, o.kernel_size, o.conv_layers, pre, dropout);
}

core::Registrar<AttentionEntrySpec> cnns_entry(
    attention_entry_registry(), "cnns",
    {"CNNs (Yu et al. 2018 QANet, CSAN Table 1): depthwise-separable convolution layers before self-attention",
     [](core::ConfigSchema& s) { cnns_option_table().declare(s, /*with_defaults=*/false); },
     [] { return cnns_option_table().defaults(); }, make_cnns_entry});

}  // namespace

}  // namespace csan::nn

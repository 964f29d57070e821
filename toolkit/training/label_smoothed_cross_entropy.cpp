#include "toolkit/training/label_smoothed_cross_entropy.h"

namespace csan::training {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class FusedLabelSmoothedCE : public torch::autograd::Function<FusedLabelSmoothedCE> {
 public:
  static variable_list forward(AutogradContext* ctx, torch::Tensor logits, torch::Tensor target, double epsilon,
                               int64_t ignore_index) {
    const int64_t vocab = logits.size(-1);
    auto flat_logits = logits.reshape({-1, vocab});
    auto flat_target = target.reshape({-1, 1});
    // Half-precision logits are normalized in fp32; double stays double (tests).
    const auto compute_type = logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
    auto lprobs = torch::log_softmax(flat_logits, -1, compute_type);  // the one V-wide buffer
    auto keep = flat_target.ne(ignore_index);
    auto safe_target = flat_target.masked_fill(keep.logical_not(), 0);
    auto weight = keep.to(compute_type);
    auto nll = -(lprobs.gather(1, safe_target) * weight).sum();
    const double eps_i = vocab > 1 ? epsilon / static_cast<double>(vocab - 1) : 0.0;
    torch::Tensor loss;
    if (epsilon != 0.0) {
      auto smooth = -(lprobs.sum(1, /*keepdim=*/true) * weight).sum();
      loss = (1.0 - epsilon - eps_i) * nll + eps_i * smooth;
    } else {
      loss = nll.clone();
    }
    ctx->save_for_backward({lprobs, safe_target, weight});
    ctx->saved_data["eps_i"] = eps_i;
    ctx->saved_data["target_coef"] = 1.0 - epsilon - eps_i;
    ctx->saved_data["shape"] = logits.sizes().vec();
    ctx->saved_data["dtype"] = static_cast<int64_t>(logits.scalar_type());
    ctx->mark_non_differentiable({nll});
    return {loss, nll};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad = saved[0];  // log-probs, turned into the gradient in place (used once)
    const auto& target = saved[1];
    auto row_scale = saved[2].mul(grad_outputs[0]);  // [N, 1]: 0 at padding
    const double eps_i = ctx->saved_data["eps_i"].toDouble();
    const double target_coef = ctx->saved_data["target_coef"].toDouble();
    grad.exp_();
    if (eps_i != 0.0) grad.sub_(eps_i);
    grad.mul_(row_scale);
    grad.scatter_add_(1, target, row_scale.mul(-target_coef));
    auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    grad = grad.view(ctx->saved_data["shape"].toIntVector()).to(dtype);
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

LabelSmoothedLoss label_smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target,
                                               double epsilon, int64_t ignore_index) {
  auto out = FusedLabelSmoothedCE::apply(logits, target, epsilon, ignore_index);
  return {out[0], out[1]};
}

}  // namespace csan::training

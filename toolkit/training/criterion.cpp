#include "toolkit/training/criterion.h"

#include <cmath>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/training/label_smoothed_cross_entropy.h"

namespace csan::training {

namespace {

// fairseq's label_smoothed_cross_entropy; with smoothing 0 it is cross_entropy. Reads the
// translation batch fields: the source, "prev_output_tokens" and "target".
class LabelSmoothedCrossEntropyCriterion : public Criterion {
 public:
  LabelSmoothedCrossEntropyCriterion(double epsilon, int64_t pad) : epsilon_(epsilon), pad_(pad) {}

  CriterionOutput compute(models::Model& model, const TensorBatch& batch) override {
    auto& translation = models::as_family<models::EncoderDecoderModel>(model, "criterion label_smoothed_cross_entropy",
                                                                       models::kEncoderDecoder);
    // Padding positions contribute nothing: never project them onto the vocabulary.
    const auto flat_target = batch.fields.at("target").reshape({-1});
    const auto positions = flat_target.ne(pad_).nonzero().squeeze(1);
    auto logits = translation.forward_positions(batch.fields, positions);
    auto target = flat_target.index_select(0, positions);
    auto result = label_smoothed_cross_entropy(logits, target, epsilon_, pad_);
    CriterionOutput out;
    out.loss = result.loss;
    out.loss_sum = result.loss.item<double>();
    out.nll_sum = result.nll.item<double>();
    out.ntokens = batch.ntokens;
    out.nsentences = batch.nsentences;
    out.sample_size = batch.ntokens;
    return out;
  }

 private:
  double epsilon_;
  int64_t pad_;
};

core::Registrar<CriterionFactory> label_smoothed(criterion_registry(), "label_smoothed_cross_entropy",
                                                 [](const core::Config& cfg, int64_t pad) {
                                                   return std::make_unique<LabelSmoothedCrossEntropyCriterion>(
                                                       cfg.get<double>("criterion.label_smoothing"), pad);
                                                 });
core::Registrar<CriterionFactory> cross_entropy(criterion_registry(), "cross_entropy",
                                                [](const core::Config&, int64_t pad) {
                                                  return std::make_unique<LabelSmoothedCrossEntropyCriterion>(0.0, pad);
                                                });

}  // namespace

core::Registry<CriterionFactory>& criterion_registry() {
  static core::Registry<CriterionFactory> registry("criterion");
  return registry;
}

void declare_criterion_options(core::ConfigSchema& schema) {
  schema.add_string("criterion.name", "label_smoothed_cross_entropy", "training criterion",
                    criterion_registry().names());
  schema.add_double("criterion.label_smoothing", 0.0, "label smoothing epsilon (label_smoothed_cross_entropy)", 0.0,
                    1.0);
}

std::unique_ptr<Criterion> build_criterion(const core::Config& cfg, int64_t pad_index) {
  return criterion_registry().get(cfg.get<std::string>("criterion.name"))(cfg, pad_index);
}

double base2(double nats_sum, double count) { return count > 0 ? nats_sum / count / std::log(2.0) : 0.0; }

}  // namespace csan::training

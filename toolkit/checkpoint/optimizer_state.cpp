#include "toolkit/checkpoint/optimizer_state.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <unordered_set>

#include "toolkit/core/error.h"

namespace csan::checkpoint {

namespace {

using nlohmann::json;

// LibTorch keys an optimizer's state by the parameter's TensorImpl address: as text in
// 1.13 (c10::guts::to_string of the pointer, what an ostream writes), as the pointer in 2.x.
template <typename StateMap>
auto state_key(const StateMap&, const torch::Tensor& parameter) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;
    key << parameter.unsafeGetTensorImpl();
    return key.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

// One tensor field of a parameter's state: how to get it, and to set it on a fresh state.
template <typename State>
struct Field {
  const char* name;
  const torch::Tensor& (State::*get)() const noexcept;
  State& (State::*set)(const torch::Tensor&);
};

// What differs between the optimizers: their name, state fields and options.
template <typename Opt, typename State, typename Options>
struct Kind {
  const char* name;
  std::vector<Field<State>> fields;
  json (*options_json)(const Options&);
  void (*set_options)(Options&, const json&);
};

json adam_options(const torch::optim::AdamOptions& o) {
  return {{"lr", o.lr()},
          {"betas", {std::get<0>(o.betas()), std::get<1>(o.betas())}},
          {"eps", o.eps()},
          {"weight_decay", o.weight_decay()},
          {"amsgrad", o.amsgrad()}};
}
void set_adam_options(torch::optim::AdamOptions& o, const json& j) {
  o.lr(j.at("lr").get<double>()).eps(j.at("eps").get<double>()).weight_decay(j.at("weight_decay").get<double>());
  o.betas({j.at("betas").at(0).get<double>(), j.at("betas").at(1).get<double>()}).amsgrad(j.at("amsgrad").get<bool>());
}
json adamw_options(const torch::optim::AdamWOptions& o) {
  return {{"lr", o.lr()},
          {"betas", {std::get<0>(o.betas()), std::get<1>(o.betas())}},
          {"eps", o.eps()},
          {"weight_decay", o.weight_decay()},
          {"amsgrad", o.amsgrad()}};
}
void set_adamw_options(torch::optim::AdamWOptions& o, const json& j) {
  o.lr(j.at("lr").get<double>()).eps(j.at("eps").get<double>()).weight_decay(j.at("weight_decay").get<double>());
  o.betas({j.at("betas").at(0).get<double>(), j.at("betas").at(1).get<double>()}).amsgrad(j.at("amsgrad").get<bool>());
}
json rmsprop_options(const torch::optim::RMSpropOptions& o) {
  return {{"lr", o.lr()},
          {"alpha", o.alpha()},
          {"eps", o.eps()},
          {"weight_decay", o.weight_decay()},
          {"momentum", o.momentum()},
          {"centered", o.centered()}};
}
void set_rmsprop_options(torch::optim::RMSpropOptions& o, const json& j) {
  o.lr(j.at("lr").get<double>()).alpha(j.at("alpha").get<double>()).eps(j.at("eps").get<double>());
  o.weight_decay(j.at("weight_decay").get<double>()).momentum(j.at("momentum").get<double>());
  o.centered(j.at("centered").get<bool>());
}

using torch::optim::Adam;
using torch::optim::AdamOptions;
using torch::optim::AdamParamState;
using torch::optim::AdamW;
using torch::optim::AdamWOptions;
using torch::optim::AdamWParamState;
using torch::optim::RMSprop;
using torch::optim::RMSpropOptions;
using torch::optim::RMSpropParamState;

const Kind<Adam, AdamParamState, AdamOptions> kAdam{
    "adam",
    {{"exp_avg", &AdamParamState::exp_avg, &AdamParamState::exp_avg},
     {"exp_avg_sq", &AdamParamState::exp_avg_sq, &AdamParamState::exp_avg_sq},
     {"max_exp_avg_sq", &AdamParamState::max_exp_avg_sq, &AdamParamState::max_exp_avg_sq}},
    adam_options,
    set_adam_options};
const Kind<AdamW, AdamWParamState, AdamWOptions> kAdamW{
    "adamw",
    {{"exp_avg", &AdamWParamState::exp_avg, &AdamWParamState::exp_avg},
     {"exp_avg_sq", &AdamWParamState::exp_avg_sq, &AdamWParamState::exp_avg_sq},
     {"max_exp_avg_sq", &AdamWParamState::max_exp_avg_sq, &AdamWParamState::max_exp_avg_sq}},
    adamw_options,
    set_adamw_options};
const Kind<RMSprop, RMSpropParamState, RMSpropOptions> kRMSprop{
    "rmsprop",
    {{"square_avg", &RMSpropParamState::square_avg, &RMSpropParamState::square_avg},
     {"momentum_buffer", &RMSpropParamState::momentum_buffer, &RMSpropParamState::momentum_buffer},
     {"grad_avg", &RMSpropParamState::grad_avg, &RMSpropParamState::grad_avg}},
    rmsprop_options,
    set_rmsprop_options};

template <typename Opt, typename State, typename Options>
SavedOptimizer save_as(const Opt& optimizer, const Kind<Opt, State, Options>& kind,
                       const std::vector<std::string>& names) {
  SavedOptimizer saved;
  json groups = json::array();
  size_t position = 0;
  for (const auto& group : optimizer.param_groups()) {
    json params = json::array();
    for (const auto& p : group.params()) {
      if (position == names.size())
        throw Error("checkpoint: the optimizer has more parameters than the model (" + std::to_string(names.size()) +
                    ")");
      const std::string& name = names[position++];
      params.push_back(name);
      const auto found = optimizer.state().find(state_key(optimizer.state(), p));
      if (found == optimizer.state().end()) continue;  // not stepped yet
      const auto& state = static_cast<const State&>(*found->second);
      saved.state.emplace_back("optimizer." + name + ".step", torch::tensor(state.step(), torch::kLong));
      for (const auto& field : kind.fields) {
        const torch::Tensor& t = (state.*field.get)();
        if (t.defined()) saved.state.emplace_back("optimizer." + name + "." + field.name, t.detach());
      }
    }
    groups.push_back(
        {{"options", kind.options_json(static_cast<const Options&>(group.options()))}, {"params", params}});
  }
  if (position != names.size())
    throw Error("checkpoint: the optimizer has " + std::to_string(position) + " parameters, the model " +
                std::to_string(names.size()));
  saved.json = json{{"name", kind.name}, {"param_groups", groups}}.dump();
  return saved;
}

template <typename Opt, typename State, typename Options>
void load_as(Opt& optimizer, const Kind<Opt, State, Options>& kind, const std::vector<std::string>& names,
             const json& saved, const SectionReader& reader, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw Error(where + ": the optimizer state does not fit (" + what + ")", ErrorKind::corrupt_checkpoint);
  };
  const std::string stored_name = saved.at("name").get<std::string>();
  if (stored_name != kind.name) fail("saved for " + stored_name + ", this run uses " + kind.name);
  const json& groups = saved.at("param_groups");
  auto& current = optimizer.param_groups();
  if (groups.size() != current.size())
    fail(std::to_string(groups.size()) + " parameter groups saved, " + std::to_string(current.size()) + " here");
  size_t position = 0;
  for (size_t g = 0; g < current.size(); ++g) {
    const json& params = groups[g].at("params");
    auto& group = current[g];
    if (params.size() != group.params().size())
      fail("group " + std::to_string(g) + " has " + std::to_string(params.size()) + " parameters saved, " +
           std::to_string(group.params().size()) + " here");
    for (size_t i = 0; i < params.size(); ++i, ++position) {
      const std::string name = params[i].get<std::string>();
      if (position >= names.size() || names[position] != name)
        fail("parameter " + std::to_string(position) + " is '" + name + "' in the checkpoint, '" +
             (position < names.size() ? names[position] : std::string("none")) + "' here");
    }
    kind.set_options(static_cast<Options&>(group.options()), groups[g].at("options"));
  }
  optimizer.state().clear();
  position = 0;
  for (auto& group : current) {
    for (const auto& p : group.params()) {
      const std::string& name = names[position++];
      torch::Tensor step;
      if (!reader.try_read("optimizer." + name + ".step", step)) continue;
      if (step.numel() != 1 || step.scalar_type() != torch::kLong) fail("'optimizer." + name + ".step' is not one I64");
      auto state = std::make_unique<State>();
      state->step(step.item<int64_t>());
      for (const auto& field : kind.fields) {
        torch::Tensor value;
        if (!reader.try_read("optimizer." + name + "." + field.name, value)) continue;
        if (value.sizes() != p.sizes() || value.scalar_type() != p.scalar_type())
          fail("'optimizer." + name + "." + field.name + "' has another shape or type than the parameter");
        (*state.*field.set)(value);
      }
      optimizer.state()[state_key(optimizer.state(), p)] = std::move(state);
    }
  }
}

}  // namespace

std::vector<std::string> unique_parameter_names(const torch::nn::Module& model) {
  std::vector<std::string> names;
  std::unordered_set<const void*> seen;
  for (const auto& p : model.named_parameters(/*recurse=*/true))
    if (seen.insert(p.value().unsafeGetTensorImpl()).second) names.push_back(p.key());
  return names;
}

SavedOptimizer save_optimizer(const torch::optim::Optimizer& optimizer, const std::vector<std::string>& names) {
  if (const auto* adam = dynamic_cast<const Adam*>(&optimizer)) return save_as(*adam, kAdam, names);
  if (const auto* adamw = dynamic_cast<const AdamW*>(&optimizer)) return save_as(*adamw, kAdamW, names);
  if (const auto* rmsprop = dynamic_cast<const RMSprop*>(&optimizer)) return save_as(*rmsprop, kRMSprop, names);
  throw Error("checkpoint: cannot save the state of this optimizer (csan saves adam, adamw and rmsprop)");
}

void load_optimizer(torch::optim::Optimizer& optimizer, const std::vector<std::string>& names, const std::string& text,
                    const SectionReader& state, const std::string& where) {
  try {
    const json saved = json::parse(text);
    if (auto* adam = dynamic_cast<Adam*>(&optimizer)) return load_as(*adam, kAdam, names, saved, state, where);
    if (auto* adamw = dynamic_cast<AdamW*>(&optimizer)) return load_as(*adamw, kAdamW, names, saved, state, where);
    if (auto* rmsprop = dynamic_cast<RMSprop*>(&optimizer))
      return load_as(*rmsprop, kRMSprop, names, saved, state, where);
  } catch (const json::exception& e) {
    throw Error(where + ": csan.optimizer is not the JSON csan writes (" + e.what() + ")",
                ErrorKind::corrupt_checkpoint);
  }
  throw Error(where + ": cannot restore the state of this optimizer (csan saves adam, adamw and rmsprop)");
}

}  // namespace csan::checkpoint

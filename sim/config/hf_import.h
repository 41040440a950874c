// Hugging Face `config.json` → model keys (internal to sim/config; ImportHfConfig in loader.h).
//
// Families (by `architectures[0]`, else `model_type`): Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE,
// GPT-2, GPT-NeoX, OPT, Falcon (7B multi-query / 40B new_decoder_architecture), BLOOM, Gemma,
// Gemma2, DeepSeek-V2/V3 (MLA + MoE + MTP). Each field is mapped with the conventions of that
// family's transformers implementation (e.g. Qwen2 q/k/v biases only, OPT's 2 extra position
// rows, Falcon-7B's one norm per parallel block), and the defaults of its transformers Config
// class where a field is absent. Every produced value is located at the JSON key it came from,
// so overrides and errors point into the config.json.
#ifndef SHARDSIM_CONFIG_HF_IMPORT_H_
#define SHARDSIM_CONFIG_HF_IMPORT_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/config_node.h"

namespace shardsim {

// A mapping of model keys (as a models/*.yaml would write them) from a parsed config.json.
Result<ConfigNode> HfConfigToModelTree(const ConfigNode& json);

// The `architectures` values HfConfigToModelTree understands, sorted.
std::vector<std::string> SupportedHfArchitectures();

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_HF_IMPORT_H_

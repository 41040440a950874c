// Loading shardsim's input files (docs/reference.md §3) into validated specs.
//
// A scenario names a model, a hardware and a topology, each as a bare library name
// (`llama3-70b`: <library>/models/llama3-70b.yaml), a path (ends in .yaml/.yml/.json or contains
// '/', resolved relative to the file that names it), an inline mapping, or for models
// `{hf_config: path/config.json}` (or "hf:path/config.json"). A file or inline mapping may start
// with `base: NAME-or-path` and override any key; nested mappings merge key by key. Every
// problem of the inputs is collected and returned at once, each located at file:line:col.
//
// Status codes: kInvalidInput for malformed inputs (syntax, unknown keys, types, units, missing
// keys, unknown names, and layouts the framework would refuse: ValidateScenario's tp not
// dividing the heads, gpus != dp*tp*pp*cp, ...) and kNotFound when the file given to a Load*
// function cannot be opened.
#ifndef SHARDSIM_CONFIG_LOADER_H_
#define SHARDSIM_CONFIG_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

class ConfigNode;
class FileCache;

struct LoadOptions {
  // Folders holding models/, hardware/, topologies/, searched in order for bare names. Empty:
  // the folders of $SHARDSIM_LIBRARY (':'-separated), then SHARDSIM_DEFAULT_LIBRARY (the source
  // tree, a compile definition).
  std::vector<std::string> library_dirs;
};

// The library folders `options` stands for (after the $SHARDSIM_LIBRARY / default fallback).
std::vector<std::string> LibraryDirs(const LoadOptions& options);

Result<Scenario> LoadScenario(const std::string& path, const LoadOptions& options);
// `name_or_path`: a library name, a path, or "hf:path/config.json". A .json file whose top level
// has `architectures` is read as a Hugging Face config.
Result<ModelSpec> LoadModel(const std::string& name_or_path, const LoadOptions& options);
Result<HardwareSpec> LoadHardware(const std::string& name_or_path, const LoadOptions& options);
Result<TopologySpec> LoadTopology(const std::string& name_or_path, const LoadOptions& options);

// A Hugging Face `config.json` as a ModelSpec (families: see hf_import.h).
Result<ModelSpec> ImportHfConfig(const std::string& path);

// Checks of a model on its own: heads divisible by kv heads, MoE top_k <= experts, ...
Status ValidateModel(const ModelSpec& model);
// The layout arithmetic a training framework checks before it starts (gpus == dp*tp*pp*cp, tp
// divides the heads, layers split over the pipeline, batch over dp, sequence over cp, ...), each
// problem located at the offending key. Returns kInvalidInput with every problem found.
Status ValidateScenario(const Scenario& scenario);
// parallel.virtual_stages as the scenario runs it, for the outputs that echo it: the key under
// the interleaved schedule, 2 under the V schedules (zb_v, dualpipe_v: two chunks per rank
// whether the key says 2 or is left out), else 1 (DualPipe's two chunks are copies of a 1F1B
// split of pp stages, not a finer split).
int64_t SimulatedVirtualStages(const ParallelSpec& parallel);

// A scenario parsed once and varied many times (sweeps): Set overrides any key by its dotted
// path, Build resolves and validates. Library files read by Build are parsed once and shared by
// copies of the document; Build is safe to call from several threads at once.
class ScenarioDocument {
 public:
  static Result<ScenarioDocument> Parse(const std::string& path);
  // `text` is named `virtual_path` in messages; relative paths in it resolve from its folder.
  static Result<ScenarioDocument> ParseText(const std::string& text,
                                            const std::string& virtual_path);

  // Sets `dotted_key` ("parallel.tp", "training.micro_batch", "hardware", "model.num_layers") to
  // `yaml_value` parsed as YAML ("8", "h100-sxm", "{base: h100-sxm, memory: {capacity: 96 GB}}").
  // Setting a key below a model/hardware/topology given by name turns it into {base: NAME, ...}.
  // Setting a key below a framework given by name turns it into {name: NAME, ...}.
  // Unknown keys are reported by Build, located at the override.
  Status Set(const std::string& dotted_key, const std::string& yaml_value);

  Result<Scenario> Build(const LoadOptions& options) const;
  // The scenario's tree with its `base:` chain merged in (library references left as written).
  Result<ConfigNode> Resolved(const LoadOptions& options) const;

  const std::string& path() const { return path_; }
  const ConfigNode& tree() const { return *tree_; }

  ScenarioDocument(const ScenarioDocument&);
  ScenarioDocument& operator=(const ScenarioDocument&);
  ScenarioDocument(ScenarioDocument&&) noexcept;
  ScenarioDocument& operator=(ScenarioDocument&&) noexcept;
  ~ScenarioDocument();

 private:
  ScenarioDocument(std::string path, std::unique_ptr<ConfigNode> tree);
  std::string path_;
  std::unique_ptr<ConfigNode> tree_;
  std::shared_ptr<FileCache> cache_;
};

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_LOADER_H_

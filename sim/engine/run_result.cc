#include "sim/engine/run_result.h"

#include <string>

namespace shardsim {

std::span<const TaskId> RunResult::StreamTasks(ResourceId s) const {
  const auto begin = static_cast<size_t>(stream_begin_[Index(s)]);
  const auto end = static_cast<size_t>(stream_begin_[Index(s) + 1]);
  return std::span<const TaskId>(stream_tasks_).subspan(begin, end - begin);
}

std::string RunResult::CriticalPathToString() const {
  std::string out;
  for (const CriticalStep& step : critical_path_) {
    out += "task " + std::to_string(step.task.v) + " [" + std::to_string(step.start.picos()) +
           ", " + std::to_string(step.end.picos()) + ") ps";
    switch (step.released_by) {
      case Release::kAtStart:
        out += " at start\n";
        break;
      case Release::kDependency:
        out += " after its dependency\n";
        break;
      case Release::kStreamOrder:
        out += " after the task ahead on its stream\n";
        break;
    }
  }
  return out;
}

}  // namespace shardsim

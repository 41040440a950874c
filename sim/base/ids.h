// Strong integer ids: a RankId cannot be passed where a LinkId is expected.
#ifndef SHARDSIM_BASE_IDS_H_
#define SHARDSIM_BASE_IDS_H_

#include <compare>
#include <cstdint>
#include <functional>

namespace shardsim {

template <class Tag>
struct Id {
  int32_t v = -1;

  constexpr Id() = default;
  constexpr explicit Id(int32_t value) : v(value) {}
  constexpr bool valid() const { return v >= 0; }
  constexpr auto operator<=>(const Id&) const = default;
};

struct RankTag {};
struct GpuTag {};
struct LinkTag {};
struct TaskTag {};
struct ResourceTag {};

using RankId = Id<RankTag>;          // a parallel rank (dp, tp, pp, cp coordinates)
using GpuId = Id<GpuTag>;            // a physical GPU of the topology
using LinkId = Id<LinkTag>;          // a directed link of the topology
using TaskId = Id<TaskTag>;          // a task of a device program
using ResourceId = Id<ResourceTag>;  // an engine resource (a stream, a link)

}  // namespace shardsim

template <class Tag>
struct std::hash<shardsim::Id<Tag>> {
  size_t operator()(const shardsim::Id<Tag>& id) const noexcept {
    return std::hash<int32_t>()(id.v);
  }
};

#endif  // SHARDSIM_BASE_IDS_H_

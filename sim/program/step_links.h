// The step's network: engine links for the physical links the simulated devices' flows cross,
// and each collective as flows on them (one per phase of the algorithm NCCL runs).
//
// Links are real: capacities in bytes/s (nominal bandwidth times the efficiency NCCL reaches,
// topologies/PUBLISHED.md), flows in bytes. One engine link per physical unit a simulated device
// uses, created on first use and shared by every flow that crosses it, whatever its kind (DP
// buckets, ZeRO gathers, PP sends, embedding sync):
//   - nvlink: the GPU's port into its NVLink/NVSwitch domain (or its links of a full mesh);
//   - nic: the NIC the GPU's rail uses (NCCL takes the NIC local to the GPU; GPUs that share one
//     NIC share this link; a GPU with several NICs gets them as one link);
//   - leaf uplink / pod uplink: the uplinks of the GPU's leaf domain / pod to the layer above,
//     with over-subscription (Cluster::NominalBandwidth), ECMP-spread: one link per domain.
// A phase of a collective (sim/collective PhaseTraffic) is one flow of the rank's bytes on the
// class it loads most, crossing every class the phase loads, with weight
//     w_c = (b_c / F) * (base efficiency_c / efficiency_c) * m_c
// on each (b_c the rank's bytes across class c: a unit's bytes over the group's ranks behind it;
// F = b_c of the class on which b_c alone would take longest, so that on that link the weight is
// the multiplicity and flows of other kinds share it byte for byte; m_c the multiplicity, below).
// Alone, the phase then takes max_c m_c * b_c / (nominal_c * efficiency_c): the collective model's
// time when the m_c ranks behind the unit send alike (tests/program/network_test.cc checks the
// closed forms).
//
// Multiplicity (symmetric replicas): every rank of a pipeline stage does the same work at the same
// time. In representative mode one device stands for its stage, so m_c counts the GPUs of that
// stage behind the unit (all its dp, cp and tp replicas); in every-rank mode each (dp, cp, pp)
// device is simulated with its own flows on the shared links and m_c counts only its tp lanes.
// Both count in closed form (O(1) per unit in representative mode, O(tp) in every-rank mode), so
// the cost of building the step does not grow with the DP degree. Representative == every-rank
// (tests/program/simulate_test.cc) checks one count against the other.
#ifndef SHARDSIM_PROGRAM_STEP_LINKS_H_
#define SHARDSIM_PROGRAM_STEP_LINKS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/units.h"
#include "sim/collective/collective.h"
#include "sim/engine/engine.h"
#include "sim/parallel/layout.h"

namespace shardsim {

// One phase of a collective as one engine flow.
struct PhaseFlow {
  Bytes bytes;      // F: the rank's bytes on the class that would bound it alone
  SimTime latency;  // the phase's alpha terms
  std::vector<ResourceId> links;
  std::vector<double> weights;  // parallel to links
  std::vector<LinkClass> classes;
  std::vector<double> link_bytes;  // per link: bytes this flow and its replicas put on it
  std::vector<double> multiplicity;
  // Per link: the simulated devices that load it alike, this one included (every-rank mode: the
  // stage's GPUs behind the unit over this device's multiplicity; 1 in representative mode), so
  // that weights * replicas are the representative device's weights in both modes.
  std::vector<double> replicas;
};

// What each engine link of the step is.
struct StepLink {
  LinkClass link_class = LinkClass::kNvlink;
  int64_t unit = 0;  // the GPU, NIC, leaf domain or pod it stands for
  ResourceId id;
};

class StepNetwork {
 public:
  StepNetwork(const Layout& layout, bool every_rank) : layout_(layout), every_rank_(every_rank) {}

  // The flows of `cost`'s phases as run by the rank at `at` (its tp coordinate is ignored: the
  // device stands for its tp lanes), creating the links they cross in `engine`.
  std::vector<PhaseFlow> Flows(const CollectiveCost& cost, const RankCoords& at, Engine& engine);

  // Every link created, in creation order.
  const std::vector<StepLink>& links() const { return links_; }

 private:
  ResourceId LinkOf(LinkClass c, int64_t unit, Engine& engine);
  // The GPUs [first, last) behind the unit of class `c` that GPU `gpu` uses, and the unit's id.
  struct Unit {
    int64_t id = 0;
    int64_t first = 0, last = 0;
  };
  Unit UnitOf(LinkClass c, int64_t gpu) const;
  double Multiplicity(const Unit& u, const RankCoords& at, bool every_rank) const;
  double Capacity(LinkClass c) const;

  const Layout& layout_;
  bool every_rank_ = false;
  std::map<std::pair<int, int64_t>, size_t> index_;  // (class, unit) -> links_
  std::vector<StepLink> links_;
};

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_STEP_LINKS_H_

// The register file of one warp as the importer's thread execution (thread_exec.cc) keeps it: a
// slot holds one value for the warp, and their own for the lanes whose value differs from it.
//
// Most of a kernel's instructions compute the same value in every lane (loop counters, stage
// indices, barrier addresses, the unknown results of floating-point data), so the warp executes
// such an instruction once for all its lanes (WarpRunner's lockstep steps) instead of 32 times;
// the lanes' own values (%tid, %laneid and what is computed from them) take the per-lane form.
// A lane's write of the value the slot already holds for every lane keeps it shared, so lanes
// that compute alike on their own stay shared too.
#ifndef PARITY_SIM_PTX_WARP_REGISTERS_H_
#define PARITY_SIM_PTX_WARP_REGISTERS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

class WarpRegisters {
 public:
  WarpRegisters(size_t slots, uint32_t lanes) : lanes_(lanes), slots_(slots) {}

  const Value& Get(int slot, uint32_t lane) const {
    const Slot& s = slots_[static_cast<size_t>(slot)];
    return (s.own >> lane & 1) != 0 ? s.lanes[lane] : s.shared;
  }
  // Every lane holds the same value in `slot`.
  bool Uniform(int slot) const { return slots_[static_cast<size_t>(slot)].own == 0; }

  // Lane `lane` writes `v`; the other lanes keep theirs.
  void SetLane(int slot, uint32_t lane, Value v) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    const uint32_t bit = uint32_t{1} << lane;
    if (v == s.shared) {
      s.own &= ~bit;
      return;
    }
    if (s.lanes.empty()) s.lanes.resize(lanes_);
    s.lanes[lane] = std::move(v);
    s.own |= bit;
  }
  // Back to one value when every lane of `lanes` (a bit per lane: those that have not exited,
  // whose registers are never read again) holds the same one: lanes that ran an instruction each
  // on its own, or completed a warp-collective one, and agree take the shared form again.
  void Collapse(int slot, uint32_t lanes) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    if (s.own == 0 || lanes == 0) return;
    const Value* first = nullptr;
    for (uint32_t j = 0; j < lanes_; ++j) {
      if ((lanes >> j & 1) == 0) continue;
      const Value& v = (s.own >> j & 1) != 0 ? s.lanes[j] : s.shared;
      if (first == nullptr) {
        first = &v;
      } else if (!(v == *first)) {
        return;
      }
    }
    if (first != &s.shared) s.shared = *first;
    s.own = 0;
  }
  // Every lane writes `v`.
  void SetAll(int slot, Value v) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    s.own = 0;
    s.shared = std::move(v);
  }

 private:
  struct Slot {
    Value shared;              // the value of every lane whose bit in `own` is clear
    uint32_t own = 0;          // the lanes that hold a value of their own
    std::vector<Value> lanes;  // per lane, the values of the lanes in `own`
  };
  uint32_t lanes_;
  std::vector<Slot> slots_;
};

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_WARP_REGISTERS_H_

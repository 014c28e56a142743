// The reducer's bit-parallel closure (Reducer::ChooseMasks, used when a schedule has at most 64
// objects): the units' futures as masks, the held sets and the closure. Members of Reducer,
// declared in reducer.h.
#include "verifier/explore/reducer.h"

#include <cstdint>
#include <vector>

namespace parity::verifier::reduction {

void Reducer::ChooseMasks(Engine& e, const std::vector<Choice>& choices,
                          const std::vector<const Footprint*>& fps,
                          const std::vector<uint32_t>& guard, std::vector<uint8_t>* take) {
  const size_t n_enabled = choices.size();
  const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
  slot_known_ = 0;
  upd_patched_ = false;
  sums_ready_ = false;
  odd_known_ = false;
  n_units_ = 0;
  if (mu_.size() < 64) mu_.resize(64);
  for (size_t i = 0; i < n_enabled; ++i) {
    MaskUnit& u = mu_[n_units_++];
    ResetUnit(u);
    u.enabled = true;
    const Footprint& fi = *fps[i];
    u.now_all = fi.overflow;
    for (uint32_t k = 0; k < fi.n; ++k) {
      if (!Shared(choices[i], fi, k)) continue;
      u.now[static_cast<uint8_t>(fi.kinds[k])] |= ObjBit(fi.objects[k]);
    }
    if (choices[i].kind == Choice::Kind::kAgent) {
      u.agent = choices[i].index;
      u.cluster = e.agent_info(u.agent).cluster;
      u.upd = full_[u.agent]->km.k[kTx] | full_[u.agent]->km.k[kArr];
      u.self = u.upd & (full_[u.agent]->multi_mask | ~(u.now[kTx] | u.now[kArr]));
      continue;
    }
    const Engine::InFlight& f = e.in_flight_ops()[choices[i].index];
    if (f.kind == Engine::InFlight::kCpAsync) {
      u.own = static_km_[f.agent];
      continue;
    }
    u.own = KindMasks{};
    for (uint32_t k = 0; k < fi.n; ++k) {
      MergeMask(u.own, fi.objects[k], static_cast<uint8_t>(fi.kinds[k]));
    }
    switch (f.kind) {
      case Engine::InFlight::kTmaDeliver:
      case Engine::InFlight::kBulkDeliver:
      case Engine::InFlight::kStAsync:
        MergeMask(u.own, f.slot, kTx);
        break;
      case Engine::InFlight::kCpAsyncArrive:
        MergeMask(u.own, f.slot, kOther);
        break;
      default:  // stores: the agent's group state
        MergeMask(u.own, e.GroupsObject(f.agent), kOther);
        break;
    }
    u.upd = u.own.k[kTx] | u.own.k[kArr];
  }
  for (uint32_t a = 0; a < n_agents; ++a) {
    const Engine::AgentState& s = e.agent_state(a);
    const bool guarded = !guard.empty() && guard[a] != Engine::kNoSlot;
    if (!guarded && s.status != 1) continue;
    MaskUnit& u = mu_[n_units_++];
    ResetUnit(u);
    u.agent = a;
    const engine::AgentInfo& info = e.agent_info(a);
    u.cluster = info.cluster;
    u.upd = full_[a]->km.k[kTx] | full_[a]->km.k[kArr];
    u.self = u.upd;  // set below only for its wait (no update)
    if (guarded) {
      u.now[kNesIdx] = ObjBit(guard[a]);
      continue;
    }
    switch (s.wait) {
      case engine::WaitKind::kMbarrierParity:
      case engine::WaitKind::kMbarrierToken:
        u.now[kNesIdx] = ObjBit(s.wait_slot);
        break;
      case engine::WaitKind::kClusterBarrier:
        u.now[kNesIdx] = ObjBit(e.ClusterObject(info.cluster));
        break;
      case engine::WaitKind::kNamedBarrier:
        u.now[kOther] = ObjBit(e.NamedObject(info.cta_global));
        break;
      case engine::WaitKind::kCpAsyncGroups:
      case engine::WaitKind::kBulkGroups:
        u.now[kOther] = ObjBit(e.GroupsObject(a));
        break;
      case engine::WaitKind::kGridDependency: {
        // Woken by the prerequisite grid's exits (its CTAs' named-barrier objects).
        const uint32_t pre = info.grid + 1;
        for (uint32_t x = e.grid_first_cta(pre); x < e.grid_first_cta(pre + 1); ++x) {
          u.now[kOther] |= ObjBit(e.NamedObject(x));
        }
        break; }
      case engine::WaitKind::kNone:
        u.now_all = true;
        break;
    }
  }
  if (named_rule_) NamedJoinsMasks();
  table_cluster_[0] = table_cluster_[1] = kUnset;
  // Pass 1: the first start whose closure holds one enabled step; pass 2 (none): the
  // smallest closure over every start.
  size_t best = n_units_ + 1;
  uint64_t best_bits = 0;
  for (size_t start = 0; start < n_enabled; ++start) {
    SetMaskFutures(start);
    if (MaskClosure(start, 2) == 1) {
      best = 1;
      best_bits = in_bits_;
      break;
    }
  }
  for (size_t start = 0; start < n_enabled && best > 1; ++start) {
    SetMaskFutures(start);
    const size_t enabled_in = MaskClosure(start, best);
    if (enabled_in < best) {
      best = enabled_in;
      best_bits = in_bits_;
    }
  }
  take->assign(n_enabled, 0);
  for (size_t i = 0; i < n_enabled; ++i) (*take)[i] = (best_bits >> i) & 1;
}

void Reducer::MergeMask(KindMasks& m, uint32_t o, uint8_t k) {
  const uint64_t b = ObjBit(o);
  if ((m.any & b) != 0) {
    for (uint8_t kk = 0; kk < 6; ++kk) {
      if ((m.k[kk] & b) == 0) continue;
      m.k[kk] &= ~b;
      k = static_cast<uint8_t>(engine::MergeAccess(static_cast<engine::Access>(kk),
                                                   static_cast<engine::Access>(k)));
      break;
    }
  }
  m.k[k] |= b;
  m.any |= b;
}

inline void Reducer::ResetUnit(MaskUnit& u) {
  u.enabled = u.now_all = false;
  u.agent = kNoAgent;
  u.cluster = 0xffffffffu;
  for (uint64_t& m : u.now) m = 0;
  u.upd = 0;
  u.self = 0;
  u.named_obj = kNoNamed;
  u.named_join = 0;
}

inline void Reducer::SetMaskFutures(size_t start) {
  const MaskUnit& us = mu_[start];
  uint32_t trunc_cluster = kNoTrunc;
  if (us.agent != kNoAgent && us.enabled && !e_->ClusterArrivalOutstanding(us.agent)) {
    trunc_cluster = us.cluster;
  }
  for (int t = 0; t < 2; ++t) {
    if (table_cluster_[t] == trunc_cluster) {
      ft_ = &tables_[t];
      return;
    }
  }
  // Fill the table not used last (the other one stays valid).
  const int t = ft_ == &tables_[0] && table_cluster_[0] != kUnset ? 1 : 0;
  table_cluster_[t] = trunc_cluster;
  FutureTable& ft = tables_[t];
  ft_ = &ft;
  ft.held_ready = false;
  for (int k = 0; k < 6; ++k) std::fill_n(ft.units[k], n_obj_, 0);
  for (size_t y = 0; y < n_units_; ++y) {
    const MaskUnit& u = mu_[y];
    const KindMasks* f;
    if (u.agent == kNoAgent) {
      f = &u.own;
    } else if (u.cluster == trunc_cluster && !e_->ClusterWaitPasses(u.agent)) {
      if (trunc_km_[u.agent] == nullptr) trunc_km_[u.agent] = &Future(*e_, u.agent, true)->km;
      f = trunc_km_[u.agent];
    } else {
      f = &full_[u.agent]->km;
    }
    const uint64_t yb = uint64_t{1} << y;
    for (int k = 0; k < 6; ++k) {
      for (uint64_t m = f->k[k]; m != 0; m &= m - 1) ft.units[k][__builtin_ctzll(m)] |= yb;
    }
    ft.any[y] = f->any;
    ft.f[y] = f;
  }
}

Reducer::SlotFlags Reducer::Slot(uint32_t o) {
  if ((slot_known_ >> o) & 1) return slot_flags_[o];
  slot_known_ |= ObjBit(o);
  if (slot_flags_.size() < 64) slot_flags_.resize(64);
  SlotFlags& f = slot_flags_[o];
  const Engine& e = *e_;
  const model::MbarrierState& st = e.slot_state(o);
  f.txc = st.life == model::MbarrierLife::kLive && st.pending_count > 0;
  f.bal = f.cwl = f.obs = false;
  if (!sums_ready_) {
    sums_ready_ = true;
    UpdateAgentSums(e);
  }
  if (n_inexact_ != 0) return f;
  engine::UpdateTally t = WholeSums(e, o);
  f.bal = BalancedSlot(st, t);
  if (!f.bal && MayGate(e, o)) {
    t = GatedSums(e, o);
    f.bal = BalancedSlot(st, t);
    if (f.bal) {
      // Only the agents whose updates come before their cuts hold one (EnsureBalanced's
      // holders). The units' `upd` bits of o were read only where o's flags were asked for
      // (held, sens, FirstHolder), which is now: MaskClosure recomputes its held sets.
      for (size_t y = 0; y < n_units_; ++y) {
        MaskUnit& u = mu_[y];
        if (u.agent == kNoAgent) continue;
        const uint64_t b = ObjBit(o);
        if (pre_[u.agent] == 0 && (u.upd & b) != 0) {
          u.upd &= ~b;
          upd_patched_ = true;
        }
        // SelfHeld with the updates ahead of the cut.
        const bool now_upd = ((u.now[kTx] | u.now[kArr]) & b) != 0;
        const uint64_t self =
            (u.upd & b) != 0 && pre_[u.agent] >= (now_upd ? 2 : 1) ? b : 0;
        if ((u.self & b) != self) {
          u.self = (u.self & ~b) | self;
          upd_patched_ = true;
        }
      }
    }
  }
  f.cwl = f.bal && st.pending_count == t.arrivals;
  f.obs = f.bal && st.preceding_phase_observed;
  return f;
}

uint32_t Reducer::FirstHolder(uint32_t o) const {
  const uint64_t b = ObjBit(o);
  for (size_t y = 0; y < n_units_; ++y) {
    if (mu_[y].upd & b) return static_cast<uint32_t>(y);
  }
  return kNoAgent;
}

void Reducer::MaskTargets(const MaskUnit& ux, uint64_t held, uint64_t tgt[6], uint64_t tgtp[6],
                          uint64_t* special, uint64_t* sens) {
  const uint64_t other = ux.now[kOther];
  const uint64_t carr = ux.now[kCArrive], exit = ux.now[kExitAcc];
  tgt[kOther] = other | carr | exit;
  tgt[kTx] = other | carr | exit;
  tgt[kCArrive] = other | exit;
  tgt[kExitAcc] = other | carr;
  tgt[kArr] = other | carr | exit;
  tgt[kWaitK] = other | carr | exit;
  for (int k = 0; k < 6; ++k) tgtp[k] = 0;
  *special = NamedSpecial(ux);
  *sens = 0;
  const uint64_t wait = ux.now[kWaitK], tx = ux.now[kTx], arr = ux.now[kArr],
                 nes = ux.now[kNesIdx];
  for (uint64_t rest = wait | tx | arr | nes; rest != 0; rest &= rest - 1) {
    const uint32_t o = static_cast<uint32_t>(__builtin_ctzll(rest));
    const uint64_t b = ObjBit(o);
    SlotFlags f;
    if (o < n_slots_) f = Slot(o);
    const bool h = f.bal && (held & b) != 0;
    if (f.bal && !h) *sens |= b;
    const bool quiet = f.bal && f.obs && h;  // an update and a wait or other access commute
    if (wait & b) {
      tgt[kCArrive] |= b;
      tgt[kExitAcc] |= b;
      const bool tx_meets = !(f.bal && h), arr_meets = !quiet;
      if (o < n_slots_ && ux.agent != kNoAgent && Stuck(o, ux.agent)) {
        // Meets: a wait on a phase that cannot complete before its agent moves; only the
        // units that may update o before then, with other accesses or unobserved arrivals.
        uint64_t m = ft_->units[kOther][o];
        if (arr_meets && !e_->slot_state(o).preceding_phase_observed) m |= ft_->units[kArr][o];
        *special |= m & StuckMayMask(ux.agent);
      } else {
        tgt[kOther] |= b;
        if (tx_meets) tgt[kTx] |= b;
        if (arr_meets) tgt[kArr] |= b;
      }
    }
    // An update of a balanced slot: units meet x there by their held-phase futures
    // (explore/held_phase.cc; the object is in no other access kind of x's step).
    uint64_t* const ut = held_phase_ && f.bal ? tgtp : tgt;
    if (tx & b) {
      if (!quiet) ut[kOther] |= b;
      if (!(f.bal || f.txc)) ut[kTx] |= b;
      if (!f.bal) ut[kArr] |= b;
      if (!(f.bal && h)) ut[kWaitK] |= b;
      ut[kCArrive] |= b;
      ut[kExitAcc] |= b;
    }
    if (arr & b) {
      if (!quiet) {
        ut[kOther] |= b;
        ut[kWaitK] |= b;
      }
      if (!f.bal) {
        ut[kTx] |= b;
        ut[kArr] |= b;
      }
      ut[kCArrive] |= b;
      ut[kExitAcc] |= b;
    }
    if (nes & b) {
      const uint32_t first = f.bal && f.cwl ? FirstHolder(o) : kNoAgent;
      if (first != kNoAgent) {
        // One holder of an outstanding update is a necessary enabling set (Meets).
        if (!h && (ft_->any[first] & b) != 0) *special |= ObjBit(first);
      } else if (f.txc) {
        tgt[kOther] |= b;
        tgt[kArr] |= b;
      } else {
        tgt[kOther] |= b;
        tgt[kTx] |= b;
        tgt[kCArrive] |= b;
        tgt[kExitAcc] |= b;
        tgt[kArr] |= b;
      }
    }
  }
}

size_t Reducer::MaskClosure(size_t start, size_t bound) {
  const size_t n = n_units_;
  in_bits_ = ObjBit(static_cast<uint32_t>(start));
  work_.clear();
  work_.push_back(start);
  size_t enabled_in = 1;
  // The objects one member of the set holds an outstanding update of, and those two or more
  // hold (so that "held by a member other than x" needs no pass over the set).
  uint64_t held_once = mu_[start].upd, held_twice = 0;
  auto add = [&](size_t y) {
    in_bits_ |= uint64_t{1} << y;
    work_.push_back(y);
    if (mu_[y].enabled) ++enabled_in;
    held_twice |= held_once & mu_[y].upd;
    held_once |= mu_[y].upd;
  };
  while (!work_.empty() && enabled_in < bound) {
    const size_t x = work_.back();
    work_.pop_back();
    const MaskUnit& ux = mu_[x];
    if (ux.now_all) {
      for (size_t y = 0; y < n && enabled_in < bound; ++y) {
        if (((in_bits_ >> y) & 1) == 0) add(y);
      }
      continue;
    }
    uint64_t settled = 0;  // candidates at or below the last unit that joined
    for (bool again = true; again;) {
      again = false;
      const uint64_t held = (held_once & ~ux.upd) | (held_twice & ux.upd) | ux.self;
      uint64_t tgt[6], tgtp[6], special, sens;
      MaskTargets(ux, held, tgt, tgtp, &special, &sens);
      if (upd_patched_) {  // Slot narrowed some units' `upd`: the held sets again
        upd_patched_ = false;
        held_once = held_twice = 0;
        for (uint64_t m = in_bits_; m != 0; m &= m - 1) {
          const uint64_t u = mu_[__builtin_ctzll(m)].upd;
          held_twice |= held_once & u;
          held_once |= u;
        }
        again = true;
        continue;
      }
      uint64_t cand = special;
      const FutureTable& ft = *ft_;
      for (int k = 0; k < 6; ++k) {
        for (uint64_t m = tgt[k]; m != 0; m &= m - 1) cand |= ft.units[k][__builtin_ctzll(m)];
      }
      if ((tgtp[0] | tgtp[1] | tgtp[2] | tgtp[3] | tgtp[4] | tgtp[5]) != 0) {
        EnsureHeldTable();
        uint64_t whole = 0, cut = 0;
        for (int k = 0; k < 6; ++k) {
          for (uint64_t m = tgtp[k]; m != 0; m &= m - 1) {
            const int o = __builtin_ctzll(m);
            whole |= ft.units[k][o];
            cut |= ft.held[k][o];
          }
        }
        if ((whole & ~cut & ~cand & ~in_bits_ & ~settled) != 0) ++held_phase_cuts_;
        cand |= cut;
      }
      for (cand &= ~in_bits_ & ~settled; cand != 0 && enabled_in < bound; cand &= cand - 1) {
        const size_t y = static_cast<size_t>(__builtin_ctzll(cand));
        add(y);
        if ((mu_[y].upd & sens) != 0) {
          // Another holder joined: the rest of the candidates are judged against the new set.
          settled = y == 63 ? ~uint64_t{0} : (uint64_t{2} << y) - 1;
          again = true;
          break;
        }
      }
    }
  }
  return enabled_in;
}

}  // namespace parity::verifier::reduction

